#pragma once
// `recompdiag bench overhead --instructions`: instructions per training step under valgrind's
// callgrind, monitor off and on. Unlike wall-clock time, the count does not move with the load
// of a shared machine, so two runs of the same build give the same figures to a fraction of a
// percent.
//
// The parent re-runs this executable once per arm under
//   valgrind --tool=callgrind --collect-atstart=no
// with `--callgrind-arm NAME`; the child trains `warmup` steps, then counts a short and a long
// block of steps (each with a fresh monitor, as the wall-clock arms do) and dumps the counters
// after each. Instructions per step are (long - short) / (long steps - short steps): the
// monitor's construction and its first steps cancel out.

#include <cstdint>
#include <string>

#include "recompdiag/probes/monitor.h"

namespace recompdiag::trainer {
class TwoPhaseTrainer;
}  // namespace recompdiag::trainer

namespace recompdiag::trainer::cli {

/// What the instruction-count arms measure.
struct InstructionBench {
  int warmup_steps = 6;    ///< Steps before the first counted block (compile, profiling run).
  int short_steps = 10;    ///< Steps of the short block (rounded up to a multiple of sample_every).
  int counted_steps = 20;  ///< Long block minus short block (rounded up likewise).
  int sample_every = 10;   ///< Dispatcher sampling of the sampled arm.
};

/// Arm names, in print order: "off", "full" (every step's op inputs read), "counted" (inputs on
/// sampled steps, the others counted by name), "sampled" (sampled steps only: the default), and
/// "profiler" (LibTorch's own profiler, CPU activities, no monitor) where this LibTorch has it.
bool is_instruction_arm(const std::string& name);

/// The arm names joined for a message: "off, full, counted, sampled, profiler".
std::string instruction_arm_names();

/// The monitor options of an arm (null for "off" and "profiler"); the options must outlive the
/// use.
const probes::MonitorOptions* arm_options(const std::string& arm,
                                          const probes::MonitorOptions& full,
                                          const probes::MonitorOptions& counted,
                                          const probes::MonitorOptions& sampled);

/// Child side: runs under callgrind (collection off at start); trains the warm-up, then the two
/// counted blocks of the arm named `arm` (with `monitor` attached, or LibTorch's profiler on for
/// "profiler"), dumping callgrind's counters after each block's steps and, for the profiler, again
/// after its stop. Outside valgrind it just trains.
void run_instruction_arm(TwoPhaseTrainer& trainer, const std::string& arm,
                         const probes::MonitorOptions* monitor, const InstructionBench& bench);

/// Parent side: runs every arm as a child of valgrind (all at once) with this process's own
/// arguments (read from /proc/self/cmdline, `--instructions` replaced by `--callgrind-arm NAME`),
/// prints instructions per step and the ratio to "off", and where the profiles were left (a
/// temporary directory, kept for callgrind_annotate). Throws InputError when valgrind is not
/// on the PATH and std::runtime_error when a child fails.
void print_instruction_counts(const InstructionBench& bench);

}  // namespace recompdiag::trainer::cli
