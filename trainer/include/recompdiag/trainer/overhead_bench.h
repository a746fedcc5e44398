#pragma once
/// \file
/// The overhead benchmark (`recompdiag bench overhead`): what the monitor's setups, LibTorch's own
/// profiler and the Prometheus exporter cost a training step, in two measures.
///
/// - Wall time (run_overhead_bench): every arm in short blocks on one trainer, the arms' order
///   rotated each round, each ratio to "monitor off" with its interval from the paired rounds.
/// - Instructions (run_instruction_bench): each arm in a child under valgrind's callgrind, which
///   counts the same on a busy machine as on an idle one.
///
///     OverheadBenchOptions options;
///     options.rounds = 20;
///     OverheadBenchResult result = run_overhead_bench(options);
///     std::cout << result.to_json().dump(2);

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/statistics.h"
#include "recompdiag/probes/monitor.h"
#include "recompdiag/probes/overhead.h"
#include "recompdiag/trainer/config.h"

namespace recompdiag::trainer {

class TwoPhaseTrainer;

/// The monitor's setups the benches measure, from the sampling they are given.
struct OverheadMonitorSetups {
  probes::MonitorOptions full;     ///< Every probe, every step's op inputs read.
  probes::MonitorOptions counted;  ///< Inputs on sampled steps, the others counted by op name.
  /// `counted` through the RecordFunction callback (the other arms take the default hook, the mode
  /// key in this C++ loop).
  probes::MonitorOptions counted_record_function;
  probes::MonitorOptions sampled;  ///< The default: the steps between samples not observed.

  explicit OverheadMonitorSetups(int sample_every);
};

/// Settings of run_overhead_bench(). Plain data.
struct OverheadBenchOptions {
  /// The step measured (`monitor` is ignored: each arm attaches what it measures). Default: the
  /// default model in mutable mode.
  TrainConfig config = [] {
    TrainConfig c;
    c.mode = TrainMode::kMutable;
    return c;
  }();
  int rounds = 100;  ///< Each runs one block of every arm and gives each ratio one pair.
  /// Dispatcher sampling of the counted and sampled arms: the Monitor's default.
  int sample_every = static_cast<int>(probes::kDefaultDispatcherSampleEvery);
  /// Steps per block; the first kDroppedSteps are not kept. 0: kDroppedSteps + sample_every,
  /// one sampling period kept (block()).
  int block_steps = 0;
  int warmup_steps = 60;  ///< Steps before measuring (compile, profiling runs).
  bool exporter = true;   ///< Add the arm with the Prometheus exporter (where it is built).

  /// A new monitor's first steps fill its first-seen tables, and a new profiler session's first
  /// step sets up its collection: not steady state, so each block drops them.
  /// The steps per block the bench runs: block_steps, or one sampling period after the dropped
  /// steps when it is 0.
  int block() const { return block_steps > 0 ? block_steps : kDroppedSteps + sample_every; }
  static constexpr int kDroppedSteps = 2;
  /// Beyond this many rounds a ratio counts as unsettleable (an effect of about zero).
  static constexpr int kMaxRounds = 100000;

  /// Throws InputError for the first invalid value.
  void validate() const;
};

/// One arm's wall-time figures.
struct OverheadArm {
  std::string name;
  std::vector<double> round_means;  ///< The mean kept step of each round's block, ms.
  double median_ms = 0.0;           ///< Median of round_means.
  /// Against "monitor off", paired by round (absent for "monitor off" itself).
  std::optional<stats::ArmRatio> ratio;
};

/// What run_overhead_bench() measured.
struct OverheadBenchResult {
  OverheadBenchOptions options;
  std::string device;
  double load_before = 0.0;  ///< One-minute load average before and after.
  double load_after = 0.0;
  /// In rotation order: "monitor off", "all CPU probes", "probes, inputs 1/N, counted",
  /// "probes, inputs 1/N, counted, RecordFunction", "probes, dispatcher 1/N (default)", then
  /// "LibTorch profiler (CPU)" and "probes + exporter" where available.
  std::vector<OverheadArm> arms;

  /// LibTorch's profiler: the backend ("with Kineto", ...), or why it is not measured.
  std::string profiler_backend;
  std::string profiler_unavailable;
  double profiler_events_per_step = 0.0;
  /// Its stop (event post-processing, outside the step times), ms per profiled step.
  double profiler_stop_ms_per_step = 0.0;
  /// The default monitor (sampled arm) against the profiler, paired by round.
  std::optional<stats::ArmRatio> default_vs_profiler;
  /// The exporter arm against "all CPU probes" (the same probes without it); absent when not built.
  std::optional<stats::ArmRatio> exporter_vs_probes;

  double memory_read_ns = 0.0;  ///< The memory probe's one resident-memory read per step.
  probes::CommProbeCost comm;   ///< A data-parallel rank's comm probe per step.

  const OverheadArm& baseline() const { return arms.front(); }
  /// bench_json_head("overhead"), the options, every arm with its ratio and interval, and the
  /// profiler's, exporter's, memory and comm probe's figures.
  nlohmann::ordered_json to_json() const;
};

/// Trains the warm-up, then `rounds` rounds of every arm on one trainer. Throws InputError for
/// invalid options.
OverheadBenchResult run_overhead_bench(const OverheadBenchOptions& options);

/// Settings of the instruction-count bench. Plain data.
struct InstructionBenchOptions {
  int warmup_steps = 6;    ///< Steps before the first counted block (compile, profiling run).
  int short_steps = 10;    ///< Steps of the short block (rounded up to a multiple of sample_every).
  int counted_steps = 20;  ///< Long block minus short block (rounded up likewise).
  /// Dispatcher sampling of the counted and sampled arms: the Monitor's default.
  int sample_every = static_cast<int>(probes::kDefaultDispatcherSampleEvery);

  /// Short and counted blocks rounded up to whole sampling periods.
  int short_block() const;
  int counted_block() const;

  /// Throws InputError for the first invalid value.
  void validate() const;
};

/// Arm names of the instruction bench, in print order: "off", "full", "counted",
/// "counted-record-function" (the counted setup through the RecordFunction callback), "sampled", and
/// "profiler" (LibTorch's own profiler, CPU activities, no monitor) where this LibTorch has it.
std::vector<std::string> instruction_arms();

/// Throws InputError ("--callgrind-arm must be one of ...") unless `name` is one of
/// instruction_arms().
void check_instruction_arm(const std::string& name);

/// One arm's count.
struct InstructionArm {
  std::string name;
  double per_step = 0.0;  ///< Instructions per step.
  double ratio = 1.0;     ///< Against "off".
  /// The profiler's arm: with its stop's event post-processing added, per step.
  std::optional<double> with_stop_per_step;
};

/// What run_instruction_bench() counted.
struct InstructionBenchResult {
  InstructionBenchOptions options;
  std::vector<InstructionArm> arms;
  std::string profile_dir;  ///< The callgrind profiles, kept for callgrind_annotate.

  /// bench_json_head("overhead-instructions"), the options and every arm.
  nlohmann::ordered_json to_json() const;
};

/// Parent side: runs every arm at once, each as `valgrind --tool=callgrind --collect-atstart=no
/// <arm_command> --callgrind-arm NAME`, and reads instructions per step as (long block - short
/// block) / counted steps from the dumps, so that a monitor's construction and first steps
/// cancel. Throws InputError when valgrind is not on the PATH, IoError when an arm cannot start
/// and std::runtime_error when one fails.
InstructionBenchResult run_instruction_bench(const InstructionBenchOptions& options,
                                             const std::vector<std::string>& arm_command);

/// Child side, under callgrind (collection off at start): trains the warm-up, then the short and
/// the long block of `arm` (its monitor attached, or LibTorch's profiler on for "profiler"),
/// dumping the counters after each block's steps and, for the profiler, again after its stop.
/// Outside valgrind it just trains. Throws InputError as check_instruction_arm() does.
void run_instruction_arm(TwoPhaseTrainer& trainer, const std::string& arm,
                         const InstructionBenchOptions& options);

}  // namespace recompdiag::trainer
