// `recompdiag bench overhead`: what the monitor (and the metrics exporter) cost a training step,
// beside what LibTorch's own profiler costs the same step.

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/bench_instructions.h"
#include "cli/commands.h"
#include "cli/train_flags.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/statistics.h"
#include "recompdiag/probes/memory_probe.h"
#include "recompdiag/probes/overhead.h"
#include "recompdiag/probes/torch_profiler.h"
#include "recompdiag/reports/prometheus_exporter.h"
#include "recompdiag/trainer/trainer.h"

namespace recompdiag::trainer::cli {

namespace {

// A new monitor's first steps fill its first-seen tables, and a new profiler session's first step
// sets up its collection: not steady state, so each block drops them.
constexpr int kDroppedSteps = 2;

struct BenchOverhead {
  TrainFlags flags;
  std::string mode = "mutable";
  int rounds = 100;
  int block_steps = 12;
  int warmup_steps = 60;
  int sample_every = 10;
  bool instructions = false;
  std::string callgrind_arm;  // set in the children of --instructions
  InstructionBench instruction_bench;

  /// Throws InputError naming the first bad value.
  void validate() const {
    if (rounds < 2 || block_steps < kDroppedSteps + 1 || warmup_steps < 0 || sample_every < 1) {
      throw InputError("--rounds must be >= 2, --block-steps >= " +
                       std::to_string(kDroppedSteps + 1) + ", --warmup >= 0, --sample-every >= 1");
    }
    // The sampled arms pay for one step in sample_every: each block's kept steps must hold the
    // same share of sampled steps wherever the block starts, so that its mean is the arm's cost.
    if ((block_steps - kDroppedSteps) % sample_every != 0) {
      throw InputError("--block-steps must be " + std::to_string(kDroppedSteps) +
                       " plus a multiple of --sample-every (" + std::to_string(sample_every) +
                       "), got " + std::to_string(block_steps));
    }
    if (instruction_bench.counted_steps < 1) throw InputError("--instruction-steps must be >= 1");
    if (!callgrind_arm.empty() && !is_instruction_arm(callgrind_arm)) {
      throw InputError("--callgrind-arm must be one of " + instruction_arm_names() + ", got '" +
                       callgrind_arm + "'");
    }
  }
};

// One setup timed in blocks: a monitor, a sink, LibTorch's profiler, or nothing.
struct Arm {
  Arm(std::string name, const probes::MonitorOptions* monitor = nullptr, RecordSink* sink = nullptr,
      bool torch_profiler = false)
      : name(std::move(name)), monitor(monitor), sink(sink), torch_profiler(torch_profiler) {}

  std::string name;
  const probes::MonitorOptions* monitor = nullptr;
  RecordSink* sink = nullptr;
  bool torch_profiler = false;
  std::vector<double> round_means;  // the mean kept step of each round's block
  // LibTorch's profiler: its stops (event post-processing, outside the step times) and events.
  double stop_ms = 0.0;
  int64_t events = 0;
  int64_t profiled_steps = 0;
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
  t.erase(t.begin(), t.begin() + kDroppedSteps);
  // The mean, not the median: a sampled arm's cost sits in one step of sample_every.
  arm.round_means.push_back(stats::mean_variance(t).mean);
}

// Every arm once per round, the order rotated by one each round so that each arm runs in each
// position equally often and a drift (thermal, other load) within a round hits all alike.
void run_rounds(TwoPhaseTrainer& trainer, std::vector<Arm>& arms, const BenchOverhead& s) {
  trainer.time_steps(s.warmup_steps, nullptr);
  for (Arm& arm : arms) {  // warm each arm, discarded
    time_block(trainer, arm, s.block_steps);
    arm.round_means.clear();
    arm.stop_ms = 0.0;
    arm.events = 0;
    arm.profiled_steps = 0;
  }
  for (int r = 0; r < s.rounds; ++r) {
    for (size_t k = 0; k < arms.size(); ++k) {
      time_block(trainer, arms[(k + static_cast<size_t>(r)) % arms.size()], s.block_steps);
    }
  }
}

// Beyond this many rounds a ratio counts as unsettleable (an effect of about zero).
constexpr int kMaxRounds = 100000;

// `arm` against `base`, round by round.
stats::ArmRatio paired(const Arm& base, const Arm& arm) {
  return stats::arm_ratio(base.round_means, arm.round_means, 0.2, {}, kMaxRounds);
}

// "1.0412  [1.0123, 1.0710]" and what the interval allows one to say.
std::string describe(const stats::ArmRatio& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%8.4f  [%.4f, %.4f]", r.test.ratio, r.test.low, r.test.high);
  std::string out = buf;
  const std::string settle = r.rounds_to_settle >= kMaxRounds
                                 ? std::string("no round count would settle it")
                                 : "~" + std::to_string(r.rounds_to_settle) + " rounds would";
  if (r.includes_one) {
    out += "  includes 1.0: the two cannot be told apart; " + settle;
  } else if (r.wider_than_effect) {
    out += "  wider than the effect; " + settle;
  }
  return out;
}

void print_wall_figures(const std::vector<Arm>& arms, const BenchOverhead& s,
                        const TwoPhaseTrainer& trainer, const TrainConfig& config,
                        double load_before, const RecordSink* exporter) {
  double load_after = 0.0;
  ::getloadavg(&load_after, 1);
  std::printf(
      "recompdiag bench overhead: %s mode, %d rounds x %d steps per arm (the first %d of each "
      "block dropped), the arms' order rotated each round; device %s, batch %d, seq %d, hidden "
      "%d; load average %.2f before, %.2f after\n",
      s.mode.c_str(), s.rounds, s.block_steps, kDroppedSteps, trainer.header().device_used.c_str(),
      config.batch_size, config.seq_len, config.hidden, load_before, load_after);
  std::printf(
      "ms/step: the median of the rounds' block means; ratio: the 20%%-trimmed mean of the "
      "per-round ratios of block means to monitor off (each round timed every arm), with its 95%% "
      "interval\n");
  std::printf("%-34s %10s %9s  %s\n", "arm", "ms/step", "ratio", "95% interval");
  const Arm& off = arms[0];
  const double base = stats::median(off.round_means);
  for (const Arm& arm : arms) {
    std::printf("%-34s %10.3f ", arm.name.c_str(), stats::median(arm.round_means));
    if (&arm == &off) {
      std::printf("%9s\n", "1");
      continue;
    }
    std::printf("%s\n", describe(paired(off, arm)).c_str());
  }
  const Arm* profiler = nullptr;
  for (const Arm& arm : arms) {
    if (arm.torch_profiler) profiler = &arm;
  }
  if (profiler) {
    const auto profiled = static_cast<double>(profiler->profiled_steps);
    const double stop_per_step = profiler->stop_ms / profiled;
    std::printf(
        "LibTorch profiler, %s: %.0f events per step; its stop (event post-processing, not in "
        "the step times) adds %.3f ms per profiled step, %.2f%% of the monitor-off median step\n",
        probes::TorchProfiler::backend().c_str(), static_cast<double>(profiler->events) / profiled,
        stop_per_step, 100.0 * stop_per_step / base);
    // The arm the default Monitor runs: the sampled dispatcher.
    const Arm& default_monitor = arms[3];
    std::printf("default monitor / LibTorch profiler: %s\n",
                describe(paired(*profiler, default_monitor)).c_str());
  } else {
    std::printf("LibTorch profiler: not measured (%s)\n",
                probes::TorchProfiler::why_unavailable().c_str());
  }
  if (exporter) {
    // Paired with the arm that has the same probes and no exporter.
    std::printf("exporter on / off (all CPU probes on in both): %s\n",
                describe(paired(arms[1], arms.back())).c_str());
  } else {
    std::printf("exporter: not built (prometheus-cpp not found at configure time)\n");
  }
  // The memory probe's one read per step, measured on its own: too small to see in step medians.
  const double read_ns = probes::measure_resident_read_ns();
  std::printf(
      "memory probe: %.2f us per resident-memory read (one per step), %.4f%% of the "
      "monitor-off median step\n",
      read_ns / 1000.0, 100.0 * read_ns / 1e6 / base);
  // The comm probe of a data-parallel rank, likewise: its hot path and its run-file section.
  const probes::CommProbeCost comm = probes::measure_comm_probe_cost();
  std::printf(
      "comm probe: %.0f ns per step (one all-reduce timed and recorded) + %.0f ns to write its "
      "%lld-byte section, %.4f%% of the monitor-off median step\n",
      comm.probe_ns, comm.write_ns, static_cast<long long>(comm.line_bytes),
      100.0 * (comm.probe_ns + comm.write_ns) / 1e6 / base);
}

}  // namespace

void add_bench_overhead_command(CLI::App& bench, CommandContext& ctx) {
  auto state = std::make_shared<BenchOverhead>();
  CLI::App* cmd = bench.add_subcommand(
      "overhead",
      "Step time with the monitor off, with the monitor's setups, with LibTorch's own profiler "
      "(what torch.profiler drives, CPU activities) and with the Prometheus exporter added, in "
      "short blocks that rotate every round in one process; each ratio to monitor off with its "
      "interval from the paired rounds");
  add_train_flags(*cmd, state->flags);
  cmd->add_option("--mode", state->mode, "Trainer mode")->capture_default_str();
  cmd->add_option("--rounds", state->rounds,
                  "Rounds; each runs one block of every arm, and gives each ratio one pair")
      ->capture_default_str();
  cmd->add_option("--block-steps", state->block_steps,
                  "Steps per block: the first 2 are dropped (a new monitor's or profiler's), the "
                  "rest must be a multiple of --sample-every")
      ->capture_default_str();
  cmd->add_option("--sample-every", state->sample_every,
                  "Dispatcher sampling of the sampled arm: observe every Nth step")
      ->capture_default_str();
  cmd->add_option("--warmup", state->warmup_steps,
                  "Steps before measuring (compile, profiling runs)")
      ->capture_default_str();
  cmd->add_flag(
      "--instructions", state->instructions,
      "Instead of timing: instructions per step under valgrind's callgrind for the "
      "monitor off, all CPU probes, the counted and the sampled dispatcher and LibTorch's "
      "profiler (1 intra-op thread; repeatable on a busy machine; takes a few minutes)");
  cmd->add_option("--instruction-steps", state->instruction_bench.counted_steps,
                  "--instructions: steps counted per arm")
      ->capture_default_str();
  cmd->add_option(
      "--callgrind-arm", state->callgrind_arm,
      "Internal: the arm a child of --instructions runs (" + instruction_arm_names() + ")");
  cmd->callback([state, &ctx] {
    BenchOverhead& s = *state;
    s.validate();
    TrainConfig config = to_config(s.flags);
    config.mode = parse_train_mode(s.mode);
    config.monitor = false;  // each arm attaches what it measures
    probes::MonitorOptions full;
    full.log_alerts = false;
    full.dispatcher_full_steps_after_event = 0;        // every step anyway
    full.dispatcher_sample_every = 1;                  // every step's op inputs read
    probes::MonitorOptions counted = full;             // inputs on sampled steps only
    counted.dispatcher_sample_every = s.sample_every;  // (steady state: no event windows),
    counted.dispatcher_count_unsampled = true;         // the others counted by op name
    probes::MonitorOptions sampled = counted;
    sampled.dispatcher_count_unsampled = false;  // the default: the steps between not observed
    s.instruction_bench.sample_every = s.sample_every;
    if (s.instructions) {
      print_instruction_counts(s.instruction_bench);
      ctx.exit_code = 0;
      return;
    }
    if (!s.callgrind_arm.empty()) {
      config.threads = 1;  // idle intra-op threads spinning would make the count drift
      TwoPhaseTrainer trainer(config);
      run_instruction_arm(trainer, s.callgrind_arm,
                          arm_options(s.callgrind_arm, full, counted, sampled),
                          s.instruction_bench);
      ctx.exit_code = 0;
      return;
    }
    double load_before = 0.0;
    ::getloadavg(&load_before, 1);
    TwoPhaseTrainer trainer(config);
    std::unique_ptr<RecordSink> exporter;
    if (reports::prometheus_available()) {
      reports::MetricsOptions metrics;
      metrics.listen_addr = "127.0.0.1:0";
      exporter = reports::make_metrics_sink(metrics);
      exporter->on_run_start(trainer.header());
    }
    const std::string every = std::to_string(s.sample_every);
    std::vector<Arm> arms = {{"monitor off"},
                             {"all CPU probes", &full},
                             {"probes, inputs 1/" + every + ", counted", &counted},
                             {"probes, dispatcher 1/" + every + " (default)", &sampled}};
    if (probes::TorchProfiler::available()) {
      arms.emplace_back("LibTorch profiler (CPU)", nullptr, nullptr, /*torch_profiler=*/true);
    }
    if (exporter) arms.emplace_back("probes + exporter", &full, exporter.get());
    run_rounds(trainer, arms, s);
    print_wall_figures(arms, s, trainer, config, load_before, exporter.get());
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::trainer::cli
