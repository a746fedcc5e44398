#pragma once
// Times a DDP model's all-reduces for the Python Monitor without running Python on c10d's
// threads.
//
// A comm hook written in Python chains its result with Future.then(). That callback's Python
// function is released by c10d's worker thread under the GIL after the chained future is
// complete, when the training thread may already be shutting the interpreter down: Python then
// ends the worker with pthread_exit, whose unwinding meets a noexcept frame, and the process aborts
// ("terminate called without an active exception"; one run in five that exit straight after a
// backward, one in sixty of the test's torchrun jobs on a loaded machine). Here the chaining is
// C++: the worker takes the GIL only to hand DDP the reduced bucket, before the future DDP waits
// for is complete, and releases nothing Python afterwards.
#include <torch/extension.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
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
/// training thread calls at step end (and which also drops the finished futures there).
/// Thread-safe: one mutex, never held while Python or c10d code runs.
class CollectiveTimer {
 public:
  CollectiveTimer() = default;
  CollectiveTimer(const CollectiveTimer&) = delete;
  CollectiveTimer& operator=(const CollectiveTimer&) = delete;

  /// Calls `issue()`, which issues one all-reduce of `bytes` and returns its
  /// torch.futures.Future (as `dist.all_reduce(..., async_op=True).get_future()` does), and
  /// returns the future a DDP comm hook returns: completed with the first reduced tensor, as
  /// torch's allreduce_hook's, or with the all-reduce's error. Needs the GIL.
  py::object time(int64_t bytes, const py::function& issue);

  /// The collectives completed since the last call, in completion order. Needs the GIL: the
  /// futures of those collectives are released here, on the calling thread.
  std::vector<CompletedCollective> take_completed();

  /// Waits, the GIL released, up to `limit` for the callbacks of every collective issued to have
  /// finished, then releases their futures here, as take_completed() does. Needs the GIL. Called
  /// when the Monitor closes, so that nothing Python is left for a c10d thread to release.
  void settle(std::chrono::milliseconds limit);

 private:
  struct Completions {
    std::mutex mutex;
    std::vector<CompletedCollective> collectives;
    // The futures handed to DDP, kept by their callback and released by the training thread: one
    // holds a Python tensor, so its last owner must hold the GIL when it lets go.
    std::vector<c10::intrusive_ptr<c10::ivalue::Future>> finished;
    int64_t in_flight = 0;  // issued, their callback not yet finished
    std::condition_variable landed;
  };
  std::shared_ptr<Completions> completions_ = std::make_shared<Completions>();
};

}  // namespace recompdiag::python
