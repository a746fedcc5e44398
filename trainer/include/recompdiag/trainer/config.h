#pragma once
/// \file
/// Configuration of the two-phase trainer. Torch-free: validated and serialised without LibTorch.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/lr_plateau.h"
#include "recompdiag/core/seed_scenario.h"
#include "recompdiag/probes/dispatch_hook.h"
#include "recompdiag/runner/distributed.h"
#include "recompdiag/trainer/faults.h"

namespace recompdiag::trainer {

/// How the phase switch changes loss weights and lr.
enum class TrainMode {
  kRecompile,  ///< Loss weights baked into the compiled step; recompile and rebuild Adam at the
               ///< switch.
  kMutable,    ///< Loss weights in a tensor, lr set in place; nothing recompiled at the switch.
};

/// What the rebuilt optimizer gets in `recompile` mode.
enum class OptimizerHandoff {
  kFresh,    ///< A new Adam with empty state: what recompiling with a new optimizer does.
  kMigrate,  ///< The old state (step counts, both moments) moved onto the parameters' device.
};

const char* to_string(TrainMode mode);
const char* to_string(OptimizerHandoff handoff);
/// Throws InputError naming the accepted values.
TrainMode parse_train_mode(const std::string& text);
OptimizerHandoff parse_optimizer_handoff(const std::string& text);

/// One training phase: how long, with which loss weights and lr.
struct PhaseConfig {
  int epochs = 1;
  std::vector<double> loss_weights;  ///< One per head.
  double lr = 0.01;
};

/// The seed scenario's phases (core/seed_scenario.h) as PhaseConfigs.
std::vector<PhaseConfig> seed_scenario_phases();

/// Everything a run needs. Defaults reproduce the scenario (core/seed_scenario.h: the one list of
/// them, which the Python seed reads too), scaled down in epochs and steps so the default run
/// takes well under a minute on 2 CPU cores; `--epochs 375,125` gives the original.
struct TrainConfig {
  TrainMode mode = TrainMode::kRecompile;
  OptimizerHandoff handoff = OptimizerHandoff::kFresh;
  std::vector<PhaseConfig> phases = seed_scenario_phases();
  int steps_per_epoch = seed_scenario::kStepsPerEpoch;
  int batch_size = seed_scenario::kBatchSize;
  int seq_len = seed_scenario::kSeqLen;
  int input_size = seed_scenario::kInputSize;
  int hidden = seed_scenario::kHidden;
  int num_classes = seed_scenario::kNumClasses;
  std::string rnn = "gru";                            ///< "gru" or "lstm".
  double clip_value = seed_scenario::kClipValue;      ///< Keras clipvalue: element-wise clipping.
  double adam_epsilon = seed_scenario::kAdamEpsilon;  ///< Keras's Adam epsilon (LibTorch's 1e-8).
  PlateauOptions plateau;
  std::string device = "auto";  ///< "auto", "cpu", "cuda" or "cuda:N".
  uint64_t seed = seed_scenario::kSeed;
  int threads = 0;         ///< Intra-op threads; 0 keeps LibTorch's default.
  bool monitor = true;     ///< Attach the health monitor and its probes.
  bool log_alerts = true;  ///< The monitor writes one line per alert to stderr.
  /// The dispatcher probe observes every Nth step in steady state (and every step for a while
  /// at the start and after each compile or phase switch); 1 observes every step. The Monitor's
  /// default (probes::kDefaultDispatcherSampleEvery).
  int dispatch_sample_every = static_cast<int>(probes::kDefaultDispatcherSampleEvery);
  /// How the dispatcher probe sees ops: "auto" (the Monitor's default: the mode key in this
  /// C++ loop), "record-function" (a RecordFunction callback) or "mode-key" (a dispatcher
  /// fallback on a mode key); probes::DispatchHook. The run header's config names the hook used
  /// when it is not the callback.
  std::string dispatch_hook = probes::dispatch_hook_name(probes::kDefaultDispatchHook);
  /// Faults to inject (faults.h); empty for a healthy run.
  FaultSet faults;
  /// This process's rank in a data-parallel job; absent: a single process. Each rank trains on
  /// its shard of every batch, and gradients are averaged over the ranks before clipping.
  std::optional<runner::DistributedOptions> distributed;

  /// Throws InputError with one clear sentence for the first invalid value. The one validator of
  /// the trainer's options: the command line and `ab` only convert their input and call it.
  void validate() const;
  /// validate() of this config as each rank of `job` runs it (`job`'s rank aside): what a job's
  /// launcher checks once, before any rank starts.
  void validate_for_job(const runner::DistributedOptions& job) const;
  /// Every field, for the run header, but `dispatch_hook`: the header names the hook the Monitor
  /// used (probes::Monitor::describe), not the one asked for.
  nlohmann::json to_json() const;
  /// Total steps over all phases.
  int64_t total_steps() const;
};

/// Throws InputError unless `device` is auto, cpu, cuda or cuda:N: TrainConfig::validate's rule,
/// which resolve_device() applies before it reads N.
void check_device_name(const std::string& device);

/// Throws InputError when a batch of `batch_size` cannot give each of `world_size` ranks a shard.
void check_batch_shards(int batch_size, int world_size);

/// Throws InputError when a fault names a rank the job does not have (recompile-one-rank=K).
void check_fault_rank(const FaultSet& faults, int world_size);

/// Parses "a,b,c" into numbers; throws InputError naming `flag` on anything else.
std::vector<double> parse_number_list(const std::string& text, const std::string& flag);
/// Parses "0.7,0.3:0.99,0.01" into per-phase weight lists.
std::vector<std::vector<double>> parse_phase_weights(const std::string& text,
                                                     const std::string& flag);

}  // namespace recompdiag::trainer
