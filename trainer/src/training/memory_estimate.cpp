#include "recompdiag/trainer/memory_estimate.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "recompdiag/core/error.h"

namespace recompdiag::trainer {

namespace {

constexpr double kFloatBytes = 4.0;
constexpr double kIndexBytes = 8.0;

// The first number in a one-line file (cgroup v2's memory.max is "max" when unlimited).
std::optional<double> read_number(const std::string& path) {
  std::ifstream in(path);
  double v = 0.0;
  if (in >> v) return v;
  return std::nullopt;
}

std::optional<double> meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0.0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024.0;
  }
  return std::nullopt;
}

// What the cgroup still allows: limit less usage (v2, then v1). Huge v1 "no limit" values are
// ignored by the min() with MemAvailable.
std::optional<double> cgroup_headroom() {
  for (const auto& [limit, usage] :
       {std::pair<const char*, const char*>{"/sys/fs/cgroup/memory.max",
                                            "/sys/fs/cgroup/memory.current"},
        {"/sys/fs/cgroup/memory/memory.limit_in_bytes",
         "/sys/fs/cgroup/memory/memory.usage_in_bytes"}}) {
    const auto l = read_number(limit);
    const auto u = read_number(usage);
    if (l && u) return std::max(0.0, *l - *u);
  }
  return std::nullopt;
}

}  // namespace

double MemoryEstimate::total_bytes() const {
  return data_bytes + parameter_bytes + std::max(generation_bytes, activation_bytes);
}

MemoryEstimate estimate_memory(const TrainConfig& c) {
  const double b = c.batch_size, t = c.seq_len, in = c.input_size, h = c.hidden, k = c.num_classes,
               batches = c.steps_per_epoch;
  const double gates = c.rnn == "lstm" ? 4.0 : 3.0;
  const double cells = b * t;  // (sequence, time step) cells of one batch
  MemoryEstimate e;
  // Per batch: inputs, class targets (int64), binary targets and sample weights.
  e.data_bytes = batches * cells * (in * kFloatBytes + kIndexBytes + 2.0 * kFloatBytes);
  // Generating one batch: the previous-step copy, both concatenated, the class projection.
  e.generation_bytes = cells * (3.0 * in + k + 4.0) * kFloatBytes;
  const double params = in * h + h                               // input projection
                        + 2.0 * gates * h * h + 2.0 * gates * h  // recurrent cell
                        + h * k + k + h + 1.0;                   // the two heads
  e.parameter_bytes = 4.0 * params * kFloatBytes;  // value, gradient, two Adam moments
  // Saved for backward: the projection, the cell's gates and output per time step, the heads'
  // logits and log-softmax, the per-cell losses; backward holds about as much again in grads.
  const double saved = cells * (2.0 * h + 2.0 * gates * h + 3.0 * k + 8.0) * kFloatBytes;
  e.activation_bytes = 2.0 * saved;
  return e;
}

std::optional<double> available_host_memory() {
  const auto mem = meminfo_available();
  const auto cg = cgroup_headroom();
  if (mem && cg) return std::min(*mem, *cg);
  return mem ? mem : cg;
}

std::string format_bytes_binary(double bytes) {
  char buf[48];
  if (bytes >= 1024.0 * 1024.0 * 1024.0) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  } else {
    std::snprintf(buf, sizeof buf, "%.0f MiB", bytes / (1024.0 * 1024.0));
  }
  return buf;
}

void check_fits(const MemoryEstimate& need, std::optional<double> available,
                const std::string& where) {
  if (!available || need.total_bytes() <= *available) return;
  throw InputError("this config needs ~" + format_bytes_binary(need.total_bytes()) + " of " +
                   where + ", " + format_bytes_binary(*available) + " available (data " +
                   format_bytes_binary(need.data_bytes) + ", activations " +
                   format_bytes_binary(need.activation_bytes) + ", parameters and Adam state " +
                   format_bytes_binary(need.parameter_bytes) +
                   "); lower --batch-size, --seq-len, --hidden or --steps-per-epoch");
}

}  // namespace recompdiag::trainer
