#pragma once
// Times a DDP model's all-reduces for the Python Monitor so that c10d's threads release nothing
// Python once the future DDP waits for is complete.
//
// A comm hook written in Python chains its result with Future.then(). Its callback's Python
// function, and the thread-local state the work captured (torch 2.x's backward keeps a
// contextvars.Context in it), are released by c10d's worker thread under the GIL after the
// chained future is complete, when the training thread may already be shutting the interpreter
// down: Python then ends the worker with pthread_exit, whose unwinding meets a noexcept frame, and
// the process aborts ("terminate called without an active exception"). Here the chaining is C++,
// the work is issued with those Python objects set aside, and what holds Python (the futures
// handed to DDP, the works) is released by the training thread. The worker takes the GIL once per
// all-reduce, to hand DDP the reduced bucket, before that future is complete.
#include <torch/extension.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace recompdiag::python {

/// One collective, completed: the bytes this rank contributed and the time from issuing it to
/// its completion.
struct CompletedCollective {
  int64_t bytes = 0;
  double wait_ms = 0.0;
};

/// The all-reduces of one Monitor. `time()` runs on the training thread (in DDP's comm hook);
/// their completions arrive on c10d's threads and wait here until `take_completed()`, which the
/// training thread calls at step end. Every method needs the GIL and is called by the training
/// thread; the completions' state is shared with c10d's threads under one mutex, never held while
/// Python or c10d code runs. Hidden, as pybind11's types are: it holds py::objects.
class __attribute__((visibility("hidden"))) CollectiveTimer {
 public:
  CollectiveTimer() = default;
  ~CollectiveTimer();
  CollectiveTimer(const CollectiveTimer&) = delete;
  CollectiveTimer& operator=(const CollectiveTimer&) = delete;

  /// Calls `issue()`, which issues one all-reduce of `bytes` and returns its work (as
  /// `dist.all_reduce(..., async_op=True)` does), and returns the future a DDP comm hook returns:
  /// completed with the first reduced tensor, as torch's allreduce_hook's, or with the
  /// all-reduce's error. The work is kept until the step after next ends.
  py::object time(int64_t bytes, const py::function& issue);

  /// The collectives completed without error since the last call, in completion order; releases
  /// the futures and works that c10d is done with.
  std::vector<CompletedCollective> take_completed();

  /// Waits, the GIL released, up to `limit` for the callback of every collective issued to have
  /// run, then stops recording: the Monitor is closing. Later all-reduces still complete.
  void settle(std::chrono::milliseconds limit);

 private:
  using FuturePtr = c10::intrusive_ptr<c10::ivalue::Future>;
  // What c10d's threads hand the training thread.
  struct Completions {
    std::mutex mutex;
    std::vector<CompletedCollective> collectives;
    // The futures handed to DDP, kept by their callback for the training thread to release: each
    // holds a Python tensor, so its last owner must hold the GIL when it lets go.
    std::vector<FuturePtr> finished;
    int64_t in_flight = 0;   // issued, their callback not yet run to its end
    bool recording = true;   // false once settled: the completions are no longer read
    bool abandoned = false;  // the timer is gone: a callback keeps its future (leaks it)
    std::condition_variable landed;
  };

  void release_finished();

  std::shared_ptr<Completions> completions_ = std::make_shared<Completions>();
  // The works of the all-reduces issued since the last take_completed(), and of those before it.
  // A work holds Python objects too (its tensors' wrappers, the modes in the thread-local state it
  // captured); c10d's worker drops its own reference just after completion, so a work is released
  // here a whole step after the step that issued it, or when the timer goes.
  std::vector<py::object> works_;
  std::vector<py::object> works_before_;
};

}  // namespace recompdiag::python
