#include "cli/train_flags.h"

#include <cmath>
#include <cstdlib>

#include "recompdiag/core/error.h"
#include "recompdiag/trainer/dist_backend.h"
#include "recompdiag/trainer/trainer.h"

namespace recompdiag::trainer::cli {

namespace {

// The job flags every rank shares: the timeouts and the backend.
runner::DistributedOptions with_job_flags(const TrainFlags& f, runner::DistributedOptions job) {
  job.rendezvous_timeout_s = f.rendezvous_timeout_s;
  job.collective_timeout_s = f.collective_timeout_s;
  job.backend = f.dist_backend;
  return job;
}

}  // namespace

void add_train_flags(CLI::App& cmd, TrainFlags& f) {
  TrainConfig& c = f.config;
  cmd.add_option("--optimizer-handoff", f.handoff,
                 "recompile mode: what the rebuilt Adam gets: fresh (empty state) or migrate (old "
                 "state moved onto the parameters' device)")
      ->capture_default_str();
  cmd.add_option("--epochs", f.epochs,
                 "Epochs per phase, comma-separated. The scenario is 375,125; the default is "
                 "scaled down to finish in well under a minute on 2 CPU cores")
      ->capture_default_str();
  cmd.add_option("--steps-per-epoch", c.steps_per_epoch, "Batches per epoch")
      ->capture_default_str();
  cmd.add_option("--loss-weights", f.loss_weights,
                 "Loss weights (categorical,binary) per phase, phases separated by ':'")
      ->capture_default_str();
  cmd.add_option("--lr", f.lr, "Adam learning rate per phase")->capture_default_str();
  cmd.add_option("--batch-size", c.batch_size, "Sequences per batch")->capture_default_str();
  cmd.add_option("--seq-len", c.seq_len, "Time steps per sequence")->capture_default_str();
  cmd.add_option("--input-size", c.input_size, "Features per time step")->capture_default_str();
  cmd.add_option("--hidden", c.hidden, "Hidden size of the projection and recurrent layer")
      ->capture_default_str();
  cmd.add_option("--classes", c.num_classes, "Classes of the categorical head")
      ->capture_default_str();
  cmd.add_option("--rnn", c.rnn, "Recurrent cell: gru or lstm")->capture_default_str();
  cmd.add_option("--clip-value", c.clip_value, "Element-wise gradient clipping (Keras clipvalue)")
      ->capture_default_str();
  cmd.add_option("--plateau-factor", c.plateau.factor, "ReduceLROnPlateau factor")
      ->capture_default_str();
  cmd.add_option("--plateau-patience", c.plateau.patience, "ReduceLROnPlateau patience (epochs)")
      ->capture_default_str();
  cmd.add_option("--plateau-min-delta", c.plateau.min_delta, "ReduceLROnPlateau min_delta")
      ->capture_default_str();
  cmd.add_option("--plateau-cooldown", c.plateau.cooldown, "ReduceLROnPlateau cooldown (epochs)")
      ->capture_default_str();
  cmd.add_option("--plateau-min-lr", c.plateau.min_lr, "ReduceLROnPlateau min_lr")
      ->capture_default_str();
  cmd.add_option("--device", c.device,
                 "auto, cpu, cuda or cuda:N (auto takes CUDA when LibTorch sees it)")
      ->capture_default_str();
  cmd.add_option("--seed", c.seed, "Seed for data and initial weights (a non-negative integer)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            const bool digits = !v.empty() && v.find_first_not_of("0123456789") == v.npos;
            return digits ? "" : "must be a non-negative integer, got '" + v + "'";
          },
          "UINT"))
      ->capture_default_str();
  cmd.add_option("--threads", c.threads, "Intra-op threads (0: LibTorch's default)")
      ->capture_default_str();
  cmd.add_option("--dispatch-sample-every", c.dispatch_sample_every,
                 "Dispatcher probe: observe every Nth step in steady state (every step for 20 "
                 "steps at the start and after each compile or phase switch); 1 = every step")
      ->capture_default_str();
  cmd.add_option("--dispatch-hook", c.dispatch_hook,
                 "Dispatcher probe: how it sees ops: mode-key (a dispatcher fallback: the "
                 "training thread and its backward, cheaper on an observed step), record-function "
                 "(a RecordFunction callback: every thread), or auto (the mode key, unless another "
                 "library holds its keys)")
      ->capture_default_str();
  cmd.add_option("--fault", f.faults,
                 "Inject faults, comma-separated (NAME or NAME=VALUE); 'list' describes each");
  cmd.add_flag("--quiet", f.quiet,
               "No progress lines, and alerts only in the run file and the summary: stderr is left "
               "to errors");
  cmd.add_flag("--no-monitor", f.no_monitor,
               "Run without the health monitor and its probes (the baseline to time)");
  cmd.add_option("--world-size", f.world_size,
                 "Train data-parallel with N local rank processes (c10d, Gloo on loopback), one "
                 "run file per rank (NAME.rank0.jsonl, ...). A launcher's RANK, WORLD_SIZE, "
                 "MASTER_ADDR and MASTER_PORT make this process one rank instead");
  cmd.add_option("--rendezvous-timeout", f.rendezvous_timeout_s,
                 "Seconds a rank waits for every other rank to join before it fails")
      ->capture_default_str();
  cmd.add_option("--collective-timeout", f.collective_timeout_s,
                 "Seconds a rank waits in one all-reduce (a peer died or stalled) before it fails")
      ->capture_default_str();
  cmd.add_option("--dist-backend", f.dist_backend,
                 "c10d backend of a data-parallel run: gloo (host or CUDA tensors) or nccl (CUDA, "
                 "one GPU per rank, a LibTorch with NCCL)")
      ->capture_default_str();
}

TrainConfig to_single_process_config(const TrainFlags& flags, const std::string& command) {
  if (flags.world_size) {
    throw InputError(command + " trains single processes: it takes no --world-size");
  }
  return to_config(flags);
}

bool launches_local_job(const TrainFlags& flags) {
  return flags.world_size.has_value() && std::getenv("RANK") == nullptr &&
         std::getenv("WORLD_SIZE") == nullptr;
}

bool wants_fault_list(const TrainFlags& flags) { return flags.faults == "list"; }

std::optional<runner::DistributedOptions> job_of_world_size(const TrainFlags& flags) {
  if (!flags.world_size) return std::nullopt;
  runner::DistributedOptions job;
  job.world_size = *flags.world_size;
  return with_job_flags(flags, job);
}

TrainConfig to_config(const TrainFlags& f) {
  TrainConfig c = f.config;
  c.faults = parse_faults(f.faults);
  c.handoff = parse_optimizer_handoff(f.handoff);
  c.monitor = !f.no_monitor;
  // --quiet leaves stderr to errors: alerts go only to the run file and the summary.
  if (f.quiet) c.log_alerts = false;
  std::vector<double> epochs = parse_number_list(f.epochs, "--epochs");
  std::vector<std::vector<double>> weights = parse_phase_weights(f.loss_weights, "--loss-weights");
  std::vector<double> lrs = parse_number_list(f.lr, "--lr");
  if (weights.size() != epochs.size()) {
    throw InputError("--loss-weights gives " + std::to_string(weights.size()) +
                     " phase(s) but --epochs gives " + std::to_string(epochs.size()));
  }
  if (lrs.size() != epochs.size()) {
    throw InputError("--lr gives " + std::to_string(lrs.size()) + " phase(s) but --epochs gives " +
                     std::to_string(epochs.size()));
  }
  c.phases.clear();
  for (size_t i = 0; i < epochs.size(); ++i) {
    if (epochs[i] != std::floor(epochs[i]) || std::abs(epochs[i]) > 1e9) {
      throw InputError("--epochs: '" + f.epochs + "' must be whole numbers");
    }
    c.phases.push_back({static_cast<int>(epochs[i]), weights[i], lrs[i]});
  }
  c.distributed =
      runner::distributed_from_environment([](const char* n) { return std::getenv(n); });
  if (c.distributed && f.world_size && *f.world_size != c.distributed->world_size) {
    throw InputError(
        "--world-size " + std::to_string(*f.world_size) +
        " disagrees with the launcher's WORLD_SIZE=" + std::to_string(c.distributed->world_size));
  }
  // The launcher's own rule: the ranks it starts see the same flags with an environment.
  if (!c.distributed && f.world_size &&
      (*f.world_size < 1 || *f.world_size > runner::kMaxLocalWorldSize)) {
    throw InputError("--world-size " + std::to_string(*f.world_size) + " is outside [1, " +
                     std::to_string(runner::kMaxLocalWorldSize) +
                     "] (the ranks started on this machine)");
  }
  // The job this process is a rank of, or starts the ranks of.
  std::optional<runner::DistributedOptions> job =
      c.distributed ? with_job_flags(f, *c.distributed) : job_of_world_size(f);
  if (c.distributed) c.distributed = job;
  // One validator; a launcher checks its ranks' config once, here, not once per rank.
  if (job && !c.distributed) {
    c.validate_for_job(*job);
  } else {
    c.validate();
  }
  if (job) check_backend(*job, resolve_device(c.device));
  return c;
}

}  // namespace recompdiag::trainer::cli
