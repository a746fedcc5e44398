#pragma once
// What the two kinds of A/B experiment share (ab_experiment.h, ab_commands.h): the rules for a
// side's name and for the turn settings, and the exit code of a pair. Defined in ab_experiment.cpp.

#include <cstdint>
#include <string>

namespace recompdiag::trainer::detail {

/// Throws InputError (one line) unless `name` can name a side's run files: letters, digits, '-',
/// '_' and '.', not empty, not starting with '.'.
void check_side_name(const std::string& name);

/// Throws InputError (one line) for `--turn-every` below 0 or a `--cpus` list parse_cpus()
/// refuses.
void check_turn_settings(int64_t turn_every_steps, const std::string& cpus);

/// The exit code of a pair from its sides' codes: a crash on either side first, then A's failure,
/// then B's.
int pair_code(int a, int b);

}  // namespace recompdiag::trainer::detail
