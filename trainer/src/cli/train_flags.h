#pragma once
// Flags shared by `train` and `ab`: the model, data and phase schedule.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "recompdiag/trainer/config.h"

namespace recompdiag::trainer::cli {

/// Raw flag values, turned into a TrainConfig by to_config().
struct TrainFlags {
  std::string epochs = "30,10";
  std::string loss_weights = "0.7,0.3:0.99,0.01";
  std::string lr = "0.01,0.001";
  std::string handoff = "fresh";
  std::string faults;  // "--fault list" is handled by the command before to_config()
  TrainConfig config;  // everything with a plain one-to-one flag
  bool quiet = false;
  bool no_monitor = false;
  /// --world-size: start this many local ranks (absent: one process, or a launcher's rank).
  std::optional<int> world_size;
  double rendezvous_timeout_s = 60.0;
  double collective_timeout_s = 60.0;
  std::string dist_backend = "gloo";
};

/// Declares the model, data and schedule flags on `cmd`.
void add_train_flags(CLI::App& cmd, TrainFlags& flags);

/// True when `--fault list` was given: the command prints the catalogue and exits 0.
bool wants_fault_list(const TrainFlags& flags);

/// Builds and validates the config; throws InputError for bad values. `config.distributed` is set
/// when a launcher's environment (RANK, WORLD_SIZE, ...) makes this process one rank of a job;
/// --world-size must then agree with WORLD_SIZE.
TrainConfig to_config(const TrainFlags& flags);

/// to_config() for a command that trains single processes only (the benches): `--world-size` is
/// refused, naming `command`, instead of being ignored.
TrainConfig to_single_process_config(const TrainFlags& flags, const std::string& command);

/// The local job `--world-size N` asks for (absent without it): N ranks with the flags' timeouts
/// and `--dist-backend`. What `ab` runs each side as; to_config() gives a launcher's rank the same
/// timeouts and backend.
std::optional<runner::DistributedOptions> job_of_world_size(const TrainFlags& flags);

/// True when --world-size asks this process to start the ranks of a local job (it is not a rank
/// itself).
bool launches_local_job(const TrainFlags& flags);

}  // namespace recompdiag::trainer::cli
