#pragma once
/// \file
/// An A/B experiment: runs of two training configs, each run in a fresh child process, either
/// taking turns step by step (so a machine that speeds up or slows down affects both sides
/// alike) or one after the other, repeated N times. The run files land in one directory; the
/// caller compares them (compare.h). `recompdiag ab`, `ab --fault`, and the benches use it.
///
///     AbExperimentOptions options;
///     options.b.name = "extra-work";
///     options.b.config.faults = parse_faults("extra-work=10");
///     options.out_dir = "gate-ab";
///     options.repeats = 3;
///     AbExperimentResult result = run_ab_experiment(options);
///     if (result.exit_code == 0) { /* compare result.a_paths against result.b_paths */ }

#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/compare.h"
#include "recompdiag/reports/prometheus_exporter.h"
#include "recompdiag/runner/ab_sides.h"
#include "recompdiag/trainer/config.h"

namespace recompdiag::trainer {

/// One side of an experiment.
struct AbSide {
  /// Names the side's run files: DIR/NAME.jsonl for one repeat, DIR/NAME-1.jsonl ... for more.
  /// Letters, digits, '-', '_' and '.'; the two sides' names must differ.
  std::string name;
  TrainConfig config;
};

/// In which order an experiment's runs train.
enum class AbSchedule {
  kInterleaved,  ///< Each pair's two runs alive at once, taking turns (turn_every_steps).
  kSequential,   ///< A_1, B_1, A_2, B_2, ...: pairs one after the other.
  kBlocked,      ///< Every A run, then every B run: what a CI comparing against a stored baseline
                 ///< sees (the machine's drift between the blocks is not balanced out).
};

/// "interleaved", "sequential" or "blocked".
const char* to_string(AbSchedule schedule);

/// Settings of run_ab_experiment(). Plain data.
struct AbExperimentOptions {
  /// Side A, the baseline. Default: the scenario in `recompile` mode.
  AbSide a{"recompile", TrainConfig{}};
  /// Side B. Default: the scenario in `mutable` mode.
  AbSide b{"mutable", [] {
             TrainConfig c;
             c.mode = TrainMode::kMutable;
             return c;
           }()};
  /// Where the run files go (created when missing).
  std::string out_dir = "recompdiag-ab";
  /// Runs per side.
  int repeats = 1;
  /// When set, every run is a data-parallel job of `job->world_size` local ranks, in [1,
  /// kMaxAbWorldSize], with `job`'s rendezvous and collective timeouts (its rank and addresses are
  /// ignored): rank processes forked from this one, meeting in a FileStore of their own, writing
  /// DIR/NAME.rank0.jsonl ... An interleaved pair's two jobs take turns as wholes: every rank of
  /// the waiting job waits in a Gloo barrier, outside its steps, so an epoch of the other job must
  /// take less than the collective timeout. The configs must not be ranks already (`distributed`
  /// unset).
  std::optional<runner::DistributedOptions> job;
  AbSchedule schedule = AbSchedule::kInterleaved;
  /// Interleaved: steps per turn. 1 (the default) alternates the runs step by step, so that a
  /// level the machine holds for a second or more falls on both halves of nearly every pair of
  /// steps; 0 takes turns at epoch boundaries. A data-parallel job takes its turns at epoch
  /// boundaries whatever this says (every rank would have to meet at every turn).
  int64_t turn_every_steps = 1;
  /// The CPUs both runs of an interleaved pair (not a data-parallel job's ranks) are pinned to (`--cpus`): "auto", the default, is
  /// one CPU, the last this process may run on; "all" pins nothing; else a list ("0-3", "1,3").
  /// On a VM whose vCPUs slow down one at a time (the host takes them for a second or more), two
  /// runs on different vCPUs see different machines however finely they take turns: on one CPU,
  /// the pair's two halves share it. One CPU also means one intra-op thread for both sides.
  std::string cpus = "auto";
  /// No progress lines and no per-run summary line.
  bool quiet = false;
  /// Live metrics of every run (off when no address or gateway is set). Interleaved runs are
  /// alive two at a time: with a fixed port, side B serves on the next port. Runs share one
  /// `run` label (the out directory's name) unless one is set.
  reports::MetricsOptions metrics;

  /// Throws InputError with one sentence for the first invalid value (both configs, names,
  /// repeats, metrics options).
  void validate() const;
  /// The run file of `side` ('a' or 'b') in repeat `repeat` (1-based).
  std::string run_path(char side, int repeat) const;
  /// The header keys (as compare.h's ConfigDifference names them) in which the two sides'
  /// configs differ by design: "config.mode", "mode", "config.faults", ... A comparison lists
  /// them without warning.
  std::vector<std::string> expected_differences() const;
  /// `base` fitted to this experiment: its expected differences listed, its runs compared as
  /// pairs (`paired`) unless blocked, and, when they take turns, paired turn by turn (`turns`):
  /// the drift both runs of a pair saw cancels.
  CompareOptions compare_options(CompareOptions base) const;
};

/// The most ranks per job of an experiment: an interleaved pair runs two jobs at once, and the
/// parent forwards signals to at most 64 children.
inline constexpr int kMaxAbWorldSize = 32;

/// What an experiment produced (the runner's, shared with ab_commands.h).
using runner::AbExperimentResult;

/// Runs the experiment. Validates the options first (throws InputError, before any file exists),
/// creates the out directory, then forks one child process per run; LibTorch is not touched in
/// this process. Child errors are printed by the child as `recompdiag: error: ...` lines and show
/// in the result's exit code. Not thread-safe (forks).
AbExperimentResult run_ab_experiment(const AbExperimentOptions& options);

/// Trains `config` once in a fresh child process, writing the run file `path` (no live metrics),
/// and waits for it. `label` names the run in messages. Returns the child's exit code (0 done,
/// 2 bad input, 1 failed or killed). Not thread-safe (forks); LibTorch is not touched here.
int run_in_child(const TrainConfig& config, const std::string& path, const std::string& label,
                 bool quiet);

}  // namespace recompdiag::trainer
