#pragma once
/// \file
/// The known causes of a torch.compile recompile, told from the guard that failed: a Python float
/// lr that a scheduler changes, a train/eval flip, a new tensor size, a rebuilt optimizer... Each
/// with its fix and, where there is one, the upstream issue that explains it.
///
///     if (const RecompileCause* c = classify_guard_failure("L['lr'] == 0.01")) {
///       std::cout << c->what << "; fix: " << c->fix << "\n";
///     }

#include <string_view>
#include <vector>

namespace recompdiag {

/// One known cause of recompiles. Plain constant data.
struct RecompileCause {
  const char* key;       ///< Stable name in run files and JSON: "float_lr".
  const char* what;      ///< What happened, one sentence without a full stop.
  const char* fix;       ///< What to change, one sentence without a full stop.
  const char* upstream;  ///< "pytorch/pytorch#107076", or "" when there is none to cite.
};

/// Every known cause, in the order they are tried (the specific before the general).
const std::vector<RecompileCause>& recompile_causes();

/// The cause of a guard failure as dynamo writes it ("2/0: self.param_groups[0]['lr'] == 0.01  #
/// source  # file:line"; the "F/C: " prefix and the comments are optional), or nullptr when it is
/// none of the known ones: the reason then stands as dynamo wrote it. Pure; thread-safe.
const RecompileCause* classify_guard_failure(std::string_view guard);

}  // namespace recompdiag
