// The rules both kinds of A/B experiment share (detail/ab_sides.h): a side's name, the turn
// settings, a pair's exit code. Torch-free: `ab --a-cmd/--b-cmd` runs in the front end.

#include "recompdiag/runner/ab_sides.h"

#include "recompdiag/core/error.h"
#include "recompdiag/runner/exit_codes.h"
#include "recompdiag/runner/process.h"

namespace recompdiag::runner {

void check_side_name(const std::string& name) {
  if (name.empty()) throw InputError("an A/B side needs a name (it names the run files)");
  if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
          std::string::npos ||
      name.front() == '.') {
    throw InputError("A/B side name '" + name +
                     "': use letters, digits, '-', '_' and '.' (it names the run files)");
  }
}

void check_turn_settings(int64_t turn_every_steps, const std::string& cpus) {
  if (turn_every_steps < 0) {
    throw InputError("--turn-every must be >= 0 steps, got " + std::to_string(turn_every_steps));
  }
  (void)parse_cpus(cpus, "--cpus");
}

int pair_code(int a, int b) {
  if (a == kExitInternal || b == kExitInternal) return kExitInternal;
  return a != 0 ? a : b;
}

}  // namespace recompdiag::runner
