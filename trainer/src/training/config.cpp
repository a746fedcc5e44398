#include "recompdiag/trainer/config.h"

#include <cmath>
#include <sstream>

#include "recompdiag/core/error.h"
#include "recompdiag/probes/dispatch_hook.h"

namespace recompdiag::trainer {

std::vector<PhaseConfig> seed_scenario_phases() {
  std::vector<PhaseConfig> phases;
  for (const seed_scenario::Phase& p : seed_scenario::kPhases) {
    phases.push_back({p.epochs, {p.loss_weights.begin(), p.loss_weights.end()}, p.lr});
  }
  return phases;
}

const char* to_string(TrainMode mode) {
  return mode == TrainMode::kRecompile ? "recompile" : "mutable";
}

const char* to_string(OptimizerHandoff handoff) {
  return handoff == OptimizerHandoff::kFresh ? "fresh" : "migrate";
}

TrainMode parse_train_mode(const std::string& text) {
  if (text == "recompile") return TrainMode::kRecompile;
  if (text == "mutable") return TrainMode::kMutable;
  throw InputError("unknown mode '" + text + "' (expected recompile or mutable)");
}

OptimizerHandoff parse_optimizer_handoff(const std::string& text) {
  if (text == "fresh") return OptimizerHandoff::kFresh;
  if (text == "migrate") return OptimizerHandoff::kMigrate;
  throw InputError("unknown optimizer handoff '" + text + "' (expected fresh or migrate)");
}

std::vector<double> parse_number_list(const std::string& text, const std::string& flag) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !std::isfinite(v)) {
      throw InputError(flag + ": '" + item + "' is not a number (in '" + text + "')");
    }
    out.push_back(v);
  }
  if (out.empty() || text.back() == ',')
    throw InputError(flag + ": expected a comma-separated list, got '" + text + "'");
  return out;
}

std::vector<std::vector<double>> parse_phase_weights(const std::string& text,
                                                     const std::string& flag) {
  std::vector<std::vector<double>> out;
  std::stringstream ss(text);
  std::string phase;
  while (std::getline(ss, phase, ':')) out.push_back(parse_number_list(phase, flag));
  if (out.empty() || text.back() == ':')
    throw InputError(flag + ": expected weights per phase like 0.7,0.3:0.99,0.01");
  return out;
}

void check_batch_shards(int batch_size, int world_size) {
  if (batch_size < world_size) {
    throw InputError("--batch-size " + std::to_string(batch_size) +
                     " is smaller than the world size " + std::to_string(world_size) +
                     ": every rank needs at least one sequence of each batch");
  }
}

void check_fault_rank(const FaultSet& faults, int world_size) {
  if (faults.has(FaultKind::kRecompileOneRank) && faults.one_rank >= world_size) {
    throw InputError("--fault recompile-one-rank=" + std::to_string(faults.one_rank) +
                     ": the job has ranks 0-" + std::to_string(world_size - 1));
  }
}

void TrainConfig::validate() const {
  auto positive = [](int v, const char* flag) {
    if (v <= 0) throw InputError(std::string(flag) + " must be positive, got " + std::to_string(v));
  };
  if (phases.empty()) throw InputError("--epochs: at least one phase is needed");
  for (size_t i = 0; i < phases.size(); ++i) {
    const PhaseConfig& p = phases[i];
    std::string which = "phase " + std::to_string(i + 1);
    if (p.epochs <= 0)
      throw InputError("--epochs: " + which + " has " + std::to_string(p.epochs) +
                       " epochs; each phase needs at least 1");
    if (!(p.lr > 0) || !std::isfinite(p.lr)) {
      std::ostringstream v;
      v << p.lr;
      throw InputError("--lr: " + which + " lr must be > 0, got " + v.str());
    }
    if (p.loss_weights.size() != 2) {
      throw InputError("--loss-weights: " + which + " has " +
                       std::to_string(p.loss_weights.size()) +
                       " loss weights; the model has 2 heads (categorical, binary)");
    }
    for (double w : p.loss_weights) {
      if (!(w >= 0) || !std::isfinite(w))
        throw InputError("--loss-weights: " + which + " has a negative or non-finite weight");
    }
  }
  positive(steps_per_epoch, "--steps-per-epoch");
  positive(batch_size, "--batch-size");
  positive(seq_len, "--seq-len");
  positive(hidden, "--hidden");
  positive(input_size, "--input-size");
  if (num_classes < 2)
    throw InputError("--classes must be at least 2, got " + std::to_string(num_classes));
  if (rnn != "gru" && rnn != "lstm")
    throw InputError("--rnn: unknown cell '" + rnn + "' (expected gru or lstm)");
  if (!(clip_value > 0)) throw InputError("--clip-value must be > 0");
  require_at_least("--dispatch-sample-every", dispatch_sample_every, 1);
  probes::parse_dispatch_hook(dispatch_hook, "--dispatch-hook");
  require_at_least("--threads", threads, 0);
  if (distributed) {
    distributed->validate();
    check_batch_shards(batch_size, distributed->world_size);
    check_fault_rank(faults, distributed->world_size);
  } else if (faults.has(FaultKind::kRecompileOneRank)) {
    throw InputError(
        "--fault recompile-one-rank needs a data-parallel run (--world-size N, or a launcher's "
        "RANK and WORLD_SIZE)");
  }
  plateau.validate("--plateau-");
  check_device_name(device);
}

void TrainConfig::validate_for_job(const runner::DistributedOptions& job) const {
  TrainConfig rank = *this;
  rank.distributed = job;
  rank.distributed->rank = 0;
  rank.validate();
}

void check_device_name(const std::string& device) {
  bool device_ok = device == "auto" || device == "cpu" || device == "cuda";
  if (!device_ok && device.rfind("cuda:", 0) == 0 && device.size() > 5 && device.size() < 12) {
    device_ok = device.find_first_not_of("0123456789", 5) == std::string::npos;
  }
  if (!device_ok) {
    throw InputError("--device: unknown device '" + device +
                     "' (expected auto, cpu, cuda or cuda:N)");
  }
}

nlohmann::json TrainConfig::to_json() const {
  nlohmann::json phases_json = nlohmann::json::array();
  for (const PhaseConfig& p : phases) {
    phases_json.push_back({{"epochs", p.epochs}, {"loss_weights", p.loss_weights}, {"lr", p.lr}});
  }
  nlohmann::json out = {
      {"mode", to_string(mode)},
      {"optimizer_handoff", mode == TrainMode::kRecompile ? to_string(handoff) : "none"},
      {"phases", phases_json},
      {"steps_per_epoch", steps_per_epoch},
      {"batch_size", batch_size},
      {"seq_len", seq_len},
      {"input_size", input_size},
      {"hidden", hidden},
      {"num_classes", num_classes},
      {"rnn", rnn},
      {"clip_value", clip_value},
      {"adam", {{"beta1", 0.9}, {"beta2", 0.999}, {"epsilon", adam_epsilon}}},
      {"plateau",
       {{"factor", plateau.factor},
        {"patience", plateau.patience},
        {"min_delta", plateau.min_delta},
        {"cooldown", plateau.cooldown},
        {"min_lr", plateau.min_lr},
        {"monitor", "epoch loss"}}},
      {"device", device},
      {"seed", seed},
      {"threads", threads},
      {"monitor", monitor},
      {"dispatch_sample_every", dispatch_sample_every}};
  // Only a run with faults names them, so healthy runs' headers stay as they were.
  if (!faults.empty()) out["faults"] = faults.to_json();
  // A data-parallel rank says which c10d backend carried its collectives (the header's rank,
  // world_size and job_id say the rest); single-process runs' headers stay as they were.
  if (distributed) out["distributed"] = {{"backend", distributed->backend}};
  return out;
}

int64_t TrainConfig::total_steps() const {
  int64_t n = 0;
  for (const PhaseConfig& p : phases) n += static_cast<int64_t>(p.epochs) * steps_per_epoch;
  return n;
}

}  // namespace recompdiag::trainer
