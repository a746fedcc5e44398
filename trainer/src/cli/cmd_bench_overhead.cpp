// `recompdiag bench overhead`: what the monitor (and the metrics exporter) cost a training step.

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

#include "cli/bench_instructions.h"
#include "cli/commands.h"
#include "cli/train_flags.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/statistics.h"
#include "recompdiag/probes/memory_probe.h"
#include "recompdiag/probes/overhead.h"
#include "recompdiag/reports/prometheus_exporter.h"
#include "recompdiag/trainer/trainer.h"

namespace recompdiag::trainer::cli {

namespace {

struct BenchOverhead {
  TrainFlags flags;
  std::string mode = "mutable";
  int rounds = 30;
  int block_steps = 20;
  int warmup_steps = 60;
  int sample_every = 10;
  bool instructions = false;
  std::string callgrind_arm;  // set in the children of --instructions
  InstructionBench instruction_bench;
};

}  // namespace

void add_bench_overhead_command(CLI::App& bench, CommandContext& ctx) {
  auto state = std::make_shared<BenchOverhead>();
  CLI::App* cmd = bench.add_subcommand(
      "overhead",
      "Median step time with the monitor off, with all CPU probes on, and with the Prometheus "
      "exporter added, in interleaved blocks of steady-state steps in one process");
  add_train_flags(*cmd, state->flags);
  cmd->add_option("--mode", state->mode, "Trainer mode")->capture_default_str();
  cmd->add_option("--rounds", state->rounds, "Rounds; each runs one block of every arm")
      ->capture_default_str();
  cmd->add_option("--block-steps", state->block_steps, "Steps per block")->capture_default_str();
  cmd->add_option("--sample-every", state->sample_every,
                  "Dispatcher sampling of the sampled arm: observe every Nth step")
      ->capture_default_str();
  cmd->add_option("--warmup", state->warmup_steps,
                  "Steps before measuring (compile, profiling runs)")
      ->capture_default_str();
  cmd->add_flag("--instructions", state->instructions,
                "Instead of timing: instructions per step under valgrind's callgrind for the "
                "monitor off, all CPU probes and the sampled dispatcher (1 intra-op thread; "
                "repeatable on a busy machine; takes a few minutes)");
  cmd->add_option("--instruction-steps", state->instruction_bench.counted_steps,
                  "--instructions: steps counted per arm")
      ->capture_default_str();
  cmd->add_option("--callgrind-arm", state->callgrind_arm,
                  "Internal: the arm a child of --instructions runs (off, full, counted, sampled)");
  cmd->callback([state, &ctx] {
    BenchOverhead& s = *state;
    if (s.rounds < 1 || s.block_steps < 3 || s.warmup_steps < 0 || s.sample_every < 1) {
      throw InputError(
          "--rounds must be >= 1, --block-steps >= 3, --warmup >= 0, --sample-every >= 1");
    }
    if (s.instruction_bench.counted_steps < 1) throw InputError("--instruction-steps must be >= 1");
    if (!s.callgrind_arm.empty() && !is_instruction_arm(s.callgrind_arm)) {
      throw InputError("--callgrind-arm must be off, full, counted or sampled, got '" +
                       s.callgrind_arm + "'");
    }
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
      run_instruction_arm(trainer, arm_options(s.callgrind_arm, full, counted, sampled),
                          s.instruction_bench);
      ctx.exit_code = 0;
      return;
    }
    TwoPhaseTrainer trainer(config);

    std::unique_ptr<RecordSink> exporter;
    if (reports::prometheus_available()) {
      reports::MetricsOptions metrics;
      metrics.listen_addr = "127.0.0.1:0";
      exporter = reports::make_metrics_sink(metrics);
      exporter->on_run_start(trainer.header());
    }
    struct Arm {
      std::string name;
      const probes::MonitorOptions* monitor;
      RecordSink* sink;
      std::vector<double> times;
    };
    std::vector<Arm> arms = {
        {"monitor off", nullptr, nullptr, {}},
        {"all CPU probes", &full, nullptr, {}},
        {"probes, inputs 1/" + std::to_string(s.sample_every) + ", counted", &counted, nullptr, {}},
        {"probes, dispatcher 1/" + std::to_string(s.sample_every) + " only",
         &sampled,
         nullptr,
         {}}};
    if (exporter) arms.push_back({"probes + exporter", &full, exporter.get(), {}});

    trainer.time_steps(s.warmup_steps, nullptr);
    for (Arm& arm : arms)
      trainer.time_steps(s.block_steps, arm.monitor, arm.sink);  // warm each arm
    for (int r = 0; r < s.rounds; ++r) {
      // Alternate the order every round so slow drift (thermal, other load) hits all arms alike.
      for (size_t k = 0; k < arms.size(); ++k) {
        Arm& arm = arms[r % 2 == 0 ? k : arms.size() - 1 - k];
        std::vector<double> t = trainer.time_steps(s.block_steps, arm.monitor, arm.sink);
        // A new monitor's first steps fill its first-seen tables: not steady state.
        arm.times.insert(arm.times.end(), t.begin() + 2, t.end());
      }
    }
    const double base = stats::median(arms[0].times);
    std::printf(
        "recompdiag bench overhead: %s mode, %d rounds x %d steps per arm, device %s, "
        "batch %d, seq %d, hidden %d\n",
        s.mode.c_str(), s.rounds, s.block_steps, trainer.header().device_used.c_str(),
        config.batch_size, config.seq_len, config.hidden);
    std::printf("%-28s %12s %12s %10s\n", "arm", "median ms", "p95 ms", "ratio");
    for (const Arm& arm : arms) {
      const double med = stats::median(arm.times);
      std::printf("%-28s %12.3f %12.3f %10.4f\n", arm.name.c_str(), med,
                  stats::quantile(arm.times, 0.95), med / base);
    }
    if (exporter) {
      const double probes = stats::median(arms[1].times);
      std::printf("exporter on vs off (probes on in both): %+.2f%% of step time\n",
                  100.0 * (stats::median(arms.back().times) - probes) / probes);
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
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::trainer::cli
