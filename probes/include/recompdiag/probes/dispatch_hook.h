#pragma once
/// \file
/// Which hook the dispatcher probe sees ops through, the hooks' names in flags, run headers and
/// the Python API, and how often it observes by default. Torch-free, so that flag parsers validate
/// a hook name, and read the default, without LibTorch.

#include <cstdint>
#include <string>

namespace recompdiag::probes {

/// How the dispatcher probe sees a step's ops. Both count each entry into the dispatcher (`call`,
/// not `redispatch`, nested ones included) except the metadata reads RecordFunction skips
/// (`aten::size`, `aten::is_leaf`, ...). They differ on TorchScript's own operators, which are not
/// dispatcher ops: the RecordFunction hook sees the interpreter's record of one (as
/// `_grad_sum_to_size` in an optimized graph's backward), the mode key the ATen ops it calls.
enum class DispatchHook {
  /// A global RecordFunction callback, registered for each observed step: sees ops on every
  /// thread, and the recorder's reads marked by either `RECORD_USER_SCOPE(kRecorderReadScope)` or
  /// RecorderRead.
  kRecordFunction,
  /// A boxed fallback of the dispatcher on a mode key, which begin_step includes in the calling
  /// thread's dispatch keys and end_step removes: sees that thread's ops and those of the autograd
  /// engine's threads running its backward (LibTorch carries the key there), and no other
  /// thread's. No RecordFunction callback is registered, so LibTorch's per-op records, the
  /// engine's node names and its callback state rebuilds stay off; instead observed ops run boxed
  /// (their arguments moved into a stack of IValues), as under a `__torch_dispatch__` mode: on a
  /// step that reads op inputs every op, on a step counted by name only each outermost op and the
  /// syncs nested in it (what it calls runs under a second key that falls through for every other
  /// op). Only RecorderRead marks the recorder's reads. LibTorch reserves no dispatch key for
  /// tools: the keys are `TESTING_ONLY_GenericMode` and `TESTING_ONLY_GenericWrapper`, registered
  /// once per process and kept; the probe is unavailable when another library has registered a
  /// fallback for either.
  kModeKey,
  /// The default (0.9): the hook resolve_dispatch_hook() picks. The mode key where no
  /// torch.compile runs (a C++ loop: a Monitor without `compiled`), since it observes a step for
  /// about a fifth of what the RecordFunction callback costs (bench overhead: a counted step
  /// 1.0067x against 1.0322x in instructions on LibTorch 1.13, 1.0358x against 1.1818x on 2.15); the
  /// RecordFunction callback where torch.compile may run (any Python loop), whose guards check
  /// the dispatch keys the mode key changes, and wherever another library holds the mode key's
  /// keys.
  kAuto,
};

/// The dispatcher probe observes every Nth step by default (and every step for a while after an
/// event, and any step that compiles): the one default of MonitorOptions::dispatcher_sample_every,
/// the trainer's --dispatch-sample-every, the benches' and the Python Monitor's. An observed step
/// costs LibTorch a RecordFunction per op through the callback, about 10% of a small CPU step; one
/// in 25 keeps the monitor's steady cost under half a percent of that.
inline constexpr int64_t kDefaultDispatcherSampleEvery = 25;

/// The dispatcher probe's hook by default: the one default of MonitorOptions::dispatcher_hook,
/// DispatcherOptions::hook, the trainer's --dispatch-hook and the Python Monitor's.
inline constexpr DispatchHook kDefaultDispatchHook = DispatchHook::kAuto;

/// The hook's name in flags, run headers and the Python API: "record-function", "mode-key" or
/// "auto".
const char* dispatch_hook_name(DispatchHook hook);

/// The hook named `name` (as dispatch_hook_name writes it); throws InputError naming `what` (a
/// flag, an argument) and the three names when it is none of them.
DispatchHook parse_dispatch_hook(const std::string& name, const std::string& what);

/// The hook `hook` stands for in a loop where torch.compile may run or not: kAuto is the
/// RecordFunction callback where it may, the mode key where it cannot (the probe still falls back
/// to the callback when the mode key's keys are taken); the others stand for themselves.
DispatchHook resolve_dispatch_hook(DispatchHook hook, bool torch_compile_may_run);

}  // namespace recompdiag::probes
