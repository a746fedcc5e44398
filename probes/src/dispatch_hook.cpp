// The dispatcher probe's hook names: torch-free, for the flag parsers.
#include "recompdiag/probes/dispatch_hook.h"

#include "recompdiag/core/error.h"

namespace recompdiag::probes {

const char* dispatch_hook_name(DispatchHook hook) {
  switch (hook) {
    case DispatchHook::kModeKey:
      return "mode-key";
    case DispatchHook::kAuto:
      return "auto";
    case DispatchHook::kRecordFunction:
      break;
  }
  return "record-function";
}

DispatchHook parse_dispatch_hook(const std::string& name, const std::string& what) {
  for (const DispatchHook hook :
       {DispatchHook::kAuto, DispatchHook::kRecordFunction, DispatchHook::kModeKey})
    if (name == dispatch_hook_name(hook)) return hook;
  throw InputError(what + ": unknown hook '" + name +
                   "' (expected auto, record-function or mode-key)");
}

DispatchHook resolve_dispatch_hook(DispatchHook hook, bool torch_compile_may_run) {
  if (hook != DispatchHook::kAuto) return hook;
  return torch_compile_may_run ? DispatchHook::kRecordFunction : DispatchHook::kModeKey;
}

}  // namespace recompdiag::probes
