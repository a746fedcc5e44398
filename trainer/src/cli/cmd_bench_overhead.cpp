// `recompdiag bench overhead`: what the monitor (and the metrics exporter) cost a training step,
// beside what LibTorch's own profiler costs the same step. The bench is library code
// (recompdiag/trainer/overhead_bench.h); this file declares its flags and prints its result.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/train_flags.h"
#include "cli/trainer_commands.h"
#include "recompdiag/runner/process.h"
#include "recompdiag/trainer/overhead_bench.h"
#include "recompdiag/trainer/trainer.h"

namespace recompdiag::trainer::cli {

namespace {

struct BenchOverheadCommand {
  TrainFlags flags;
  std::string mode = "mutable";
  OverheadBenchOptions options;
  bool instructions = false;
  InstructionBenchOptions instruction_options;
  std::string callgrind_arm;  // set in the children of --instructions
  std::string json;           // where the result goes as JSON ("-": stdout, instead of the text)
};

// "1.0412  [1.0123, 1.0710]" and what the interval allows one to say.
std::string describe(const stats::ArmRatio& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%8.4f  [%.4f, %.4f]", r.test.ratio, r.test.low, r.test.high);
  std::string out = buf;
  const std::string settle = r.rounds_to_settle >= OverheadBenchOptions::kMaxRounds
                                 ? std::string("no round count would settle it")
                                 : "~" + std::to_string(r.rounds_to_settle) + " rounds would";
  if (r.includes_one) {
    out += "  includes 1.0: the two cannot be told apart; " + settle;
  } else if (r.wider_than_effect) {
    out += "  wider than the effect; " + settle;
  }
  return out;
}

void print(const OverheadBenchResult& r) {
  const OverheadBenchOptions& o = r.options;
  std::printf(
      "recompdiag bench overhead: %s mode, %d rounds x %d steps per arm (the first %d of each "
      "block dropped), the arms' order rotated each round; device %s, batch %d, seq %d, hidden "
      "%d; load average %.2f before, %.2f after\n",
      to_string(o.config.mode), o.rounds, o.block(), OverheadBenchOptions::kDroppedSteps,
      r.device.c_str(), o.config.batch_size, o.config.seq_len, o.config.hidden, r.load_before,
      r.load_after);
  std::printf(
      "ms/step: the median of the rounds' block means; ratio: the 20%%-trimmed mean of the "
      "per-round ratios of block means to monitor off (each round timed every arm), with its 95%% "
      "interval\n");
  // The name column fits the longest arm name, so the figures line up.
  int width = 3;
  for (const OverheadArm& arm : r.arms) width = std::max(width, static_cast<int>(arm.name.size()));
  std::printf("%-*s %10s %9s  %s\n", width, "arm", "ms/step", "ratio", "95% interval");
  for (const OverheadArm& arm : r.arms) {
    std::printf("%-*s %10.3f ", width, arm.name.c_str(), arm.median_ms);
    std::printf("%s\n", arm.ratio ? describe(*arm.ratio).c_str() : "        1");
  }
  const double base = r.baseline().median_ms;
  if (r.profiler_unavailable.empty()) {
    std::printf(
        "LibTorch profiler, %s: %.0f events per step; its stop (event post-processing, not in "
        "the step times) adds %.3f ms per profiled step, %.2f%% of the monitor-off median step\n",
        r.profiler_backend.c_str(), r.profiler_events_per_step, r.profiler_stop_ms_per_step,
        100.0 * r.profiler_stop_ms_per_step / base);
    std::printf("default monitor / LibTorch profiler: %s\n",
                describe(*r.default_vs_profiler).c_str());
  } else {
    std::printf("LibTorch profiler: not measured (%s)\n", r.profiler_unavailable.c_str());
  }
  if (r.exporter_vs_probes) {
    std::printf("exporter on / off (all CPU probes on in both): %s\n",
                describe(*r.exporter_vs_probes).c_str());
  } else {
    std::printf("exporter: not built (prometheus-cpp not found at configure time)\n");
  }
  std::printf(
      "memory probe: %.2f us per resident-memory read (one per step), %.4f%% of the "
      "monitor-off median step\n",
      r.memory_read_ns / 1000.0, 100.0 * r.memory_read_ns / 1e6 / base);
  std::printf(
      "comm probe: %.0f ns per step (one all-reduce timed and recorded) + %.0f ns to write its "
      "%lld-byte section, %.4f%% of the monitor-off median step\n",
      r.comm.probe_ns, r.comm.write_ns, static_cast<long long>(r.comm.line_bytes),
      100.0 * (r.comm.probe_ns + r.comm.write_ns) / 1e6 / base);
}

void print(const InstructionBenchResult& r) {
  std::printf(
      "instructions per step under callgrind (1 intra-op thread, %d counted steps per arm, "
      "dispatcher 1/%d in the sampled arm):\n",
      r.options.counted_block(), r.options.sample_every);
  std::printf("%-28s %16s %10s\n", "arm", "instr/step", "ratio");
  const double base = r.arms.front().per_step;
  for (const InstructionArm& arm : r.arms) {
    std::printf("%-28s %16.0f %10.4f\n", arm.name.c_str(), arm.per_step, arm.ratio);
    if (arm.with_stop_per_step) {
      std::printf("%-28s %16.0f %10.4f  (its stop's event post-processing, per step)\n",
                  "profiler + its stop", *arm.with_stop_per_step, *arm.with_stop_per_step / base);
    }
  }
  std::printf("profiles of the long blocks: callgrind_annotate %s/<arm>.out.2 (profiler: .3)\n",
              r.profile_dir.c_str());
}

// The text, or the JSON instead (--json -), or both (--json FILE).
template <typename Result>
void report(const Result& r, const std::string& json) {
  if (json != "-") print(r);
  if (!json.empty()) write_bench_json(json, r.to_json());
}

// This process's command line for an instruction arm: `--instructions` (and its --json) left out.
std::vector<std::string> arm_command() {
  std::vector<std::string> args = runner::own_command_line();
  std::vector<std::string> out = {runner::own_executable()};
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--instructions") continue;
    if (args[i] == "--json") {
      ++i;  // and its value
      continue;
    }
    if (args[i].rfind("--json=", 0) == 0) continue;
    out.push_back(args[i]);
  }
  return out;
}

}  // namespace

void add_bench_overhead_command(CLI::App& bench, CommandContext& ctx) {
  auto state = std::make_shared<BenchOverheadCommand>();
  OverheadBenchOptions& o = state->options;
  CLI::App* cmd = bench.add_subcommand(
      "overhead",
      "Step time with the monitor off, with the monitor's setups, with LibTorch's own profiler "
      "(what torch.profiler drives, CPU activities) and with the Prometheus exporter added, in "
      "short blocks that rotate every round in one process; each ratio to monitor off with its "
      "interval from the paired rounds");
  add_train_flags(*cmd, state->flags);
  cmd->add_option("--mode", state->mode, "Trainer mode")->capture_default_str();
  cmd->add_option("--rounds", o.rounds,
                  "Rounds; each runs one block of every arm, and gives each ratio one pair")
      ->capture_default_str();
  cmd->add_option("--block-steps", o.block_steps,
                  "Steps per block: the first 2 are dropped (a new monitor's or profiler's), the "
                  "rest must be a multiple of --sample-every; 0: 2 + --sample-every")
      ->capture_default_str();
  cmd->add_option("--sample-every", o.sample_every,
                  "Dispatcher sampling of the sampled arm: observe every Nth step")
      ->capture_default_str();
  cmd->add_option("--warmup", o.warmup_steps, "Steps before measuring (compile, profiling runs)")
      ->capture_default_str();
  cmd->add_flag("--instructions", state->instructions,
                "Instead of timing: instructions per step under valgrind's callgrind for the "
                "monitor off, all CPU probes, the counted dispatcher (the default hook and the "
                "RecordFunction callback), the sampled one and LibTorch's "
                "profiler (1 intra-op thread; repeatable on a busy machine; takes a few minutes)");
  cmd->add_option("--instruction-steps", state->instruction_options.counted_steps,
                  "--instructions: steps counted per arm")
      ->capture_default_str();
  cmd->add_option("--callgrind-arm", state->callgrind_arm,
                  "Internal: the arm a child of --instructions runs (off, full, counted, "
                  "counted-record-function, sampled, profiler)");
  add_bench_json_flag(*cmd, state->json);
  cmd->callback([state, &ctx] {
    BenchOverheadCommand& s = *state;
    s.options.config = to_single_process_config(s.flags, "bench overhead");
    s.options.config.mode = parse_train_mode(s.mode);
    s.options.validate();
    s.instruction_options.sample_every = s.options.sample_every;
    s.instruction_options.validate();
    if (!s.callgrind_arm.empty()) {
      check_instruction_arm(s.callgrind_arm);
      TrainConfig config = s.options.config;
      config.monitor = false;
      config.threads = 1;  // idle intra-op threads spinning would make the count drift
      TwoPhaseTrainer trainer(config);
      run_instruction_arm(trainer, s.callgrind_arm, s.instruction_options);
    } else if (s.instructions) {
      report(run_instruction_bench(s.instruction_options, arm_command()), s.json);
    } else {
      report(run_overhead_bench(s.options), s.json);
    }
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::trainer::cli
