#include "collective_timer.h"

#include <torch/csrc/jit/python/pybind_utils.h>

#include <utility>

#include "torch_compat.h"

namespace recompdiag::python {
namespace {

using Clock = std::chrono::steady_clock;

// The reduced bucket as DDP's Python hook result: a Python object (PythonCommHook asserts one),
// the first tensor of the all-reduce's list as torch's allreduce_hook returns it.
c10::IValue reduced_bucket(const c10::IValue& value) {
  const at::Tensor tensor = value.isTensor() ? value.toTensor() : value.toTensorVector().at(0);
  py::gil_scoped_acquire gil;
  const py::object wrapped = py::reinterpret_steal<py::object>(THPVariable_Wrap(tensor));
  return torch::jit::toIValue(wrapped, c10::PyObjectType::get());
}

}  // namespace

CollectiveTimer::~CollectiveTimer() {
  {
    // A callback still to run keeps its future rather than hand it to a timer that is gone.
    const std::lock_guard<std::mutex> lock(completions_->mutex);
    completions_->abandoned = true;
  }
  release_finished();
}

py::object CollectiveTimer::time(int64_t bytes, const py::function& issue) {
  release_finished();  // a Monitor's steps may have ended: nothing else would
  const Clock::time_point issued = Clock::now();
  py::object work;
  {
    // The work captures the thread-local state; with no Python object in it, c10d's worker
    // has none to release.
    const ThreadPythonObjectsAside aside;
    work = issue();
  }
  const FuturePtr allreduce =
      torch::jit::toIValue(work.attr("get_future")(), c10::FutureType::create(c10::AnyType::get()))
          .toFuture();
  works_.push_back(std::move(work));
  FuturePtr result = allreduce->createInstance(c10::PyObjectType::get());
  {
    const std::lock_guard<std::mutex> lock(completions_->mutex);
    ++completions_->in_flight;
  }
  allreduce->addCallback([completions = completions_, result, bytes,
                          issued](c10::ivalue::Future& done) mutable {
    const double wait_ms = std::chrono::duration<double, std::milli>(Clock::now() - issued).count();
    if (done.hasError()) {
      result->setError(done.exception_ptr());
    } else {
      {  // recorded before the result completes: the step's end reads it
        const std::lock_guard<std::mutex> lock(completions->mutex);
        if (completions->recording) completions->collectives.push_back({bytes, wait_ms});
      }
      try {
        result->markCompleted(reduced_bucket(done.value()), done.storages());
      } catch (const std::exception&) {
        result->setError(std::current_exception());
      }
    }
    const std::lock_guard<std::mutex> lock(completions->mutex);
    if (completions->abandoned) {
      (void)result.release();  // no training thread to release it: leaked, not released here
    } else {
      completions->finished.push_back(std::move(result));
    }
    --completions->in_flight;
    completions->landed.notify_all();
  });
  return torch::jit::toPyObject(c10::IValue(std::move(result)));
}

std::vector<CompletedCollective> CollectiveTimer::take_completed() {
  std::vector<CompletedCollective> collectives;
  {
    const std::lock_guard<std::mutex> lock(completions_->mutex);
    collectives.swap(completions_->collectives);
  }
  release_finished();
  works_before_.clear();  // issued before the last step's end: c10d let go of them long ago
  works_before_.swap(works_);
  return collectives;
}

void CollectiveTimer::settle(std::chrono::milliseconds limit) {
  {
    const py::gil_scoped_release no_gil;  // a callback may be waiting for it
    std::unique_lock<std::mutex> lock(completions_->mutex);
    completions_->landed.wait_for(lock, limit, [&] { return completions_->in_flight == 0; });
    completions_->recording = false;
    completions_->collectives.clear();
  }
  release_finished();
}

void CollectiveTimer::release_finished() {
  std::vector<FuturePtr> finished;
  {
    const std::lock_guard<std::mutex> lock(completions_->mutex);
    finished.swap(completions_->finished);
  }
  // `finished` lets go here, on this thread, after the lock.
}

}  // namespace recompdiag::python
