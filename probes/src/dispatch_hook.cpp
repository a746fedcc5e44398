// The dispatcher probe's hook names: torch-free, for the flag parsers.
#include "recompdiag/probes/dispatch_hook.h"

#include "recompdiag/core/error.h"

namespace recompdiag::probes {

const char* dispatch_hook_name(DispatchHook hook) {
  return hook == DispatchHook::kModeKey ? "mode-key" : "record-function";
}

DispatchHook parse_dispatch_hook(const std::string& name, const std::string& what) {
  for (const DispatchHook hook : {DispatchHook::kRecordFunction, DispatchHook::kModeKey})
    if (name == dispatch_hook_name(hook)) return hook;
  throw InputError(what + ": unknown hook '" + name + "' (expected record-function or mode-key)");
}

}  // namespace recompdiag::probes
