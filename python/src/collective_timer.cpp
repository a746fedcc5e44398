#include "collective_timer.h"

#include <torch/csrc/jit/python/pybind_utils.h>

#include <chrono>
#include <utility>

#if __has_include(<ATen/ThreadLocalPythonObjects.h>)  // torch 2.x
#include <ATen/ThreadLocalPythonObjects.h>
#define RECOMPDIAG_TLS_PYTHON_OBJECTS 1
#endif

namespace recompdiag::python {
namespace {

using Clock = std::chrono::steady_clock;
using FuturePtr = c10::intrusive_ptr<c10::ivalue::Future>;

// The reduced bucket as DDP's Python hook result: a Python object (PythonCommHook asserts one),
// the first tensor of the all-reduce's list as torch's allreduce_hook returns it.
c10::IValue reduced_bucket(const c10::IValue& value) {
  const at::Tensor tensor = value.isTensor() ? value.toTensor() : value.toTensorVector().at(0);
  py::gil_scoped_acquire gil;
  const py::object wrapped = py::reinterpret_steal<py::object>(THPVariable_Wrap(tensor));
  return torch::jit::toIValue(wrapped, c10::PyObjectType::get());
}

// Sets aside the Python objects in LibTorch's thread-local state while a collective is issued.
// torch 2.x's backward stashes a contextvars.Context there, c10d's work captures the thread-local
// state to run under it, and the worker thread lets go of that copy after the work is complete:
// with a Python object in it, the GIL again. The all-reduce needs none of them. torch 1.x keeps
// no Python objects there.
class PythonObjectsSetAside {
 public:
  PythonObjectsSetAside(const PythonObjectsSetAside&) = delete;
  PythonObjectsSetAside& operator=(const PythonObjectsSetAside&) = delete;
#ifdef RECOMPDIAG_TLS_PYTHON_OBJECTS
  PythonObjectsSetAside() : saved_(at::impl::ThreadLocalPythonObjects::get_state()) {
    at::impl::ThreadLocalPythonObjects::set_state(at::impl::ThreadLocalPythonObjects());
  }
  ~PythonObjectsSetAside() { at::impl::ThreadLocalPythonObjects::set_state(std::move(saved_)); }

 private:
  at::impl::ThreadLocalPythonObjects saved_;
#else
  PythonObjectsSetAside() = default;
#endif
};

// Issues the collective, its work holding no Python object: its future.
FuturePtr issue_collective(const py::function& issue) {
  py::object future;
  {
    const PythonObjectsSetAside set_aside;
    future = issue();
  }
  return torch::jit::toIValue(future, c10::FutureType::create(c10::AnyType::get())).toFuture();
}

}  // namespace

py::object CollectiveTimer::time(int64_t bytes, const py::function& issue) {
  const Clock::time_point issued = Clock::now();
  const FuturePtr allreduce = issue_collective(issue);
  FuturePtr result = allreduce->createInstance(c10::PyObjectType::get());
  {
    const std::lock_guard<std::mutex> lock(completions_->mutex);
    ++completions_->in_flight;
  }
  allreduce->addCallback([completions = completions_, result, bytes,
                          issued](c10::ivalue::Future& done) mutable {
    const double wait_ms = std::chrono::duration<double, std::milli>(Clock::now() - issued).count();
    {  // before the result is complete: the training thread reads it at the step's end
      const std::lock_guard<std::mutex> lock(completions->mutex);
      completions->collectives.push_back({bytes, wait_ms});
    }
    if (done.hasError()) {
      result->setError(done.exception_ptr());
    } else {
      try {
        result->markCompleted(reduced_bucket(done.value()));
      } catch (const std::exception&) {
        result->setError(std::current_exception());
      }
    }
    const std::lock_guard<std::mutex> lock(completions->mutex);
    completions->finished.push_back(std::move(result));
    --completions->in_flight;
    completions->landed.notify_all();
  });
  return torch::jit::toPyObject(c10::IValue(std::move(result)));
}

std::vector<CompletedCollective> CollectiveTimer::take_completed() {
  std::vector<CompletedCollective> collectives;
  std::vector<FuturePtr> finished;
  {
    const std::lock_guard<std::mutex> lock(completions_->mutex);
    collectives.swap(completions_->collectives);
    finished.swap(completions_->finished);
  }
  return collectives;  // `finished` lets go here, on this thread, after the lock
}

void CollectiveTimer::settle(std::chrono::milliseconds limit) {
  {
    const py::gil_scoped_release no_gil;  // a callback may be waiting for it
    std::unique_lock<std::mutex> lock(completions_->mutex);
    completions_->landed.wait_for(lock, limit, [&] { return completions_->in_flight == 0; });
  }
  take_completed();
}

}  // namespace recompdiag::python
