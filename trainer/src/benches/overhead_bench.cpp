// The overhead bench in wall time: every arm in rotating blocks on one trainer.

#include "recompdiag/trainer/overhead_bench.h"

#include <stdlib.h>

#include <chrono>
#include <memory>

#include "recompdiag/core/error.h"
#include "recompdiag/probes/memory_probe.h"
#include "recompdiag/probes/torch_profiler.h"
#include "recompdiag/reports/prometheus_exporter.h"
#include "recompdiag/runner/bench_json.h"
#include "recompdiag/trainer/trainer.h"

namespace recompdiag::trainer {

namespace {

using Options = OverheadBenchOptions;

// One setup timed in blocks: a monitor, a sink, LibTorch's profiler, or nothing.
struct Arm {
  OverheadArm figures;
  const probes::MonitorOptions* monitor = nullptr;
  RecordSink* sink = nullptr;
  bool torch_profiler = false;
  // LibTorch's profiler: its stops (event post-processing, outside the step times) and events.
  double stop_ms = 0.0;
  int64_t events = 0;
  int64_t profiled_steps = 0;

  void reset() {
    figures.round_means.clear();
    stop_ms = 0.0;
    events = 0;
    profiled_steps = 0;
  }
};

// Times one block of `arm` and keeps its steady steps.
void time_block(TwoPhaseTrainer& trainer, Arm& arm, int block_steps) {
  std::optional<probes::TorchProfiler> profiler;
  if (arm.torch_profiler) profiler.emplace();
  std::vector<double> t = trainer.time_steps(block_steps, arm.monitor, arm.sink);
  if (profiler) {
    const auto t0 = std::chrono::steady_clock::now();
    arm.events += profiler->stop();
    arm.profiled_steps += block_steps;
    arm.stop_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  t.erase(t.begin(), t.begin() + Options::kDroppedSteps);
  // The mean, not the median: a sampled arm's cost sits in one step of sample_every.
  arm.figures.round_means.push_back(stats::mean_variance(t).mean);
}

// Every arm once per round, the order rotated by one each round so that each arm runs in each
// position equally often and a drift (thermal, other load) within a round hits all alike.
void run_rounds(TwoPhaseTrainer& trainer, std::vector<Arm>& arms, const Options& o) {
  trainer.time_steps(o.warmup_steps, nullptr);
  for (Arm& arm : arms) {  // warm each arm, discarded
    time_block(trainer, arm, o.block());
    arm.reset();
  }
  for (int r = 0; r < o.rounds; ++r) {
    for (size_t k = 0; k < arms.size(); ++k) {
      time_block(trainer, arms[(k + static_cast<size_t>(r)) % arms.size()], o.block());
    }
  }
}

stats::ArmRatio paired(const Arm& base, const Arm& arm) {
  return stats::arm_ratio(base.figures.round_means, arm.figures.round_means, 0.2, {},
                          Options::kMaxRounds);
}

nlohmann::ordered_json ratio_json(const stats::ArmRatio& r) {
  return {{"ratio", r.test.ratio},
          {"low", r.test.low},
          {"high", r.test.high},
          {"confidence", r.test.confidence},
          {"includes_one", r.includes_one},
          {"wider_than_effect", r.wider_than_effect},
          {"rounds_to_settle", r.rounds_to_settle}};
}

nlohmann::ordered_json optional_ratio_json(const std::optional<stats::ArmRatio>& r) {
  return r ? ratio_json(*r) : nlohmann::ordered_json(nullptr);
}

}  // namespace

OverheadMonitorSetups::OverheadMonitorSetups(int sample_every) {
  full.log_alerts = false;
  full.dispatcher_full_steps_after_event = 0;      // every step anyway
  full.dispatcher_sample_every = 1;                // every step's op inputs read
  counted = full;                                  // inputs on sampled steps only
  counted.dispatcher_sample_every = sample_every;  // (steady state: no event windows),
  counted.dispatcher_count_unsampled = true;       // the others counted by op name
  counted_record_function = counted;
  counted_record_function.dispatcher_hook = probes::DispatchHook::kRecordFunction;
  sampled = counted;
  sampled.dispatcher_count_unsampled = false;  // the default: the steps between not observed
}

void OverheadBenchOptions::validate() const {
  if (rounds < 2 || (block_steps != 0 && block_steps < kDroppedSteps + 1) || warmup_steps < 0 ||
      sample_every < 1) {
    throw InputError("--rounds must be >= 2, --block-steps >= " +
                     std::to_string(kDroppedSteps + 1) + ", --warmup >= 0, --sample-every >= 1");
  }
  // The sampled arms pay for one step in sample_every: each block's kept steps must hold the
  // same share of sampled steps wherever the block starts, so that its mean is the arm's cost.
  if ((block() - kDroppedSteps) % sample_every != 0) {
    throw InputError("--block-steps must be " + std::to_string(kDroppedSteps) +
                     " plus a multiple of --sample-every (" + std::to_string(sample_every) +
                     "), got " + std::to_string(block_steps));
  }
  config.validate();
}

OverheadBenchResult run_overhead_bench(const OverheadBenchOptions& o) {
  o.validate();
  OverheadBenchResult result;
  result.options = o;
  ::getloadavg(&result.load_before, 1);
  TrainConfig config = o.config;
  config.monitor = false;  // each arm attaches what it measures
  TwoPhaseTrainer trainer(config);
  result.device = trainer.header().device_used;

  std::unique_ptr<RecordSink> exporter;
  if (o.exporter && reports::prometheus_available()) {
    reports::MetricsOptions metrics;
    metrics.listen_addr = "127.0.0.1:0";
    exporter = reports::make_metrics_sink(metrics);
    exporter->on_run_start(trainer.header());
  }
  const OverheadMonitorSetups setups(o.sample_every);
  const std::string every = std::to_string(o.sample_every);
  auto arm = [](std::string name, const probes::MonitorOptions* monitor = nullptr,
                RecordSink* sink = nullptr, bool torch_profiler = false) {
    Arm a;
    a.figures.name = std::move(name);
    a.monitor = monitor;
    a.sink = sink;
    a.torch_profiler = torch_profiler;
    return a;
  };
  std::vector<Arm> arms = {arm("monitor off"), arm("all CPU probes", &setups.full),
                           arm("probes, inputs 1/" + every + ", counted", &setups.counted),
                           arm("probes, inputs 1/" + every + ", counted, RecordFunction",
                               &setups.counted_record_function),
                           arm("probes, dispatcher 1/" + every + " (default)", &setups.sampled)};
  const size_t sampled_arm = 4;
  if (probes::TorchProfiler::available()) {
    arms.push_back(arm("LibTorch profiler (CPU)", nullptr, nullptr, /*torch_profiler=*/true));
  }
  if (exporter) arms.push_back(arm("probes + exporter", &setups.full, exporter.get()));
  run_rounds(trainer, arms, o);
  ::getloadavg(&result.load_after, 1);

  for (Arm& a : arms) {
    a.figures.median_ms = stats::median(a.figures.round_means);
    if (&a != &arms.front()) a.figures.ratio = paired(arms.front(), a);
  }
  if (probes::TorchProfiler::available()) {
    const Arm& profiler = arms[sampled_arm + 1];
    const auto profiled = static_cast<double>(profiler.profiled_steps);
    result.profiler_backend = probes::TorchProfiler::backend();
    result.profiler_events_per_step = static_cast<double>(profiler.events) / profiled;
    result.profiler_stop_ms_per_step = profiler.stop_ms / profiled;
    result.default_vs_profiler = paired(profiler, arms[sampled_arm]);
  } else {
    result.profiler_unavailable = probes::TorchProfiler::why_unavailable();
  }
  // Paired with the arm that has the same probes and no exporter.
  if (exporter) result.exporter_vs_probes = paired(arms[1], arms.back());
  for (Arm& a : arms) result.arms.push_back(std::move(a.figures));
  // The memory probe's one read per step and a rank's comm probe, each measured on its own: too
  // small to see in step times.
  result.memory_read_ns = probes::measure_resident_read_ns();
  result.comm = probes::measure_comm_probe_cost();
  return result;
}

nlohmann::ordered_json OverheadBenchResult::to_json() const {
  nlohmann::ordered_json j = runner::bench_json_head("overhead");
  j["options"] = {{"mode", to_string(options.config.mode)},
                  {"batch_size", options.config.batch_size},
                  {"seq_len", options.config.seq_len},
                  {"hidden", options.config.hidden},
                  {"threads", options.config.threads},
                  {"rounds", options.rounds},
                  {"block_steps", options.block()},
                  {"dropped_steps", OverheadBenchOptions::kDroppedSteps},
                  {"warmup_steps", options.warmup_steps},
                  {"sample_every", options.sample_every}};
  j["device"] = device;
  j["load_before"] = load_before;
  j["load_after"] = load_after;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const OverheadArm& a : arms) {
    rows.push_back({{"name", a.name},
                    {"median_ms", a.median_ms},
                    {"round_means_ms", a.round_means},
                    {"vs_off", optional_ratio_json(a.ratio)}});
  }
  j["arms"] = rows;
  if (profiler_unavailable.empty()) {
    j["profiler"] = {{"backend", profiler_backend},
                     {"events_per_step", profiler_events_per_step},
                     {"stop_ms_per_step", profiler_stop_ms_per_step},
                     {"default_monitor_vs_profiler", optional_ratio_json(default_vs_profiler)}};
  } else {
    j["profiler"] = {{"unavailable", profiler_unavailable}};
  }
  j["exporter_vs_probes"] = optional_ratio_json(exporter_vs_probes);
  j["memory_read_ns"] = memory_read_ns;
  j["comm_probe"] = {
      {"probe_ns", comm.probe_ns}, {"write_ns", comm.write_ns}, {"line_bytes", comm.line_bytes}};
  return j;
}

}  // namespace recompdiag::trainer
