// `recompdiag ab`: both modes with the same seed and config, then the A/B report.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/train_flags.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/reports/metrics_flags.h"
#include "recompdiag/reports/report_files.h"
#include "recompdiag/trainer/trainer.h"

namespace recompdiag::cli {

namespace {

struct AbCommand {
  TrainFlags flags;
  std::string out_dir = "recompdiag-ab";
  double threshold_pct = 5.0;
  double alpha = 0.05;
  MetricsOptions metrics;
};

/// Trains one mode in a child process, so each run starts as cold as a real job does (no JIT,
/// allocator or thread-pool state inherited from the other run). LibTorch is not touched in this
/// process before the fork. Returns the child's exit code.
int train_in_child(const TrainConfig& config, const std::string& out, bool quiet,
                   const MetricsOptions& metrics_options) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int code = 0;
    try {
      TwoPhaseTrainer trainer(config);
      std::unique_ptr<RecordSink> metrics = make_metrics_sink(metrics_options);
      RunFileSink file(out);
      trainer.add_sink(file);
      if (metrics) trainer.add_sink(*metrics);
      trainer.set_progress(!quiet);
      TrainResult r = trainer.run();
      if (!quiet) {
        std::printf("recompdiag: %s run: %lld steps in %.1f s, %lld compile(s)\n", to_string(config.mode),
                    static_cast<long long>(r.summary.steps), r.summary.elapsed_s,
                    static_cast<long long>(r.compiles));
      }
    } catch (const InputError& e) {
      std::fprintf(stderr, "recompdiag: error: %s\n", e.what());
      code = 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "recompdiag: error: %s run failed: %s\n", to_string(config.mode), e.what());
      code = 1;
    }
    std::fflush(nullptr);
    ::_exit(code);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::fprintf(stderr, "recompdiag: error: %s run was killed by signal %d\n", to_string(config.mode),
               WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return 1;
}

}  // namespace

void add_ab_command(CLI::App& app, CommandContext& ctx) {
  auto state = std::make_shared<AbCommand>();
  CLI::App* cmd = app.add_subcommand(
      "ab",
      "Train both modes (recompile, then mutable) with the same seed and config, compare them and "
      "write DIR/recompile.jsonl, DIR/mutable.jsonl, DIR/report.{md,html,json}");
  add_train_flags(*cmd, state->flags);
  cmd->add_option("--out-dir", state->out_dir, "Directory for run files and reports")->capture_default_str();
  cmd->add_option("--threshold", state->threshold_pct, "Noise threshold in percent for the verdict")
      ->capture_default_str();
  cmd->add_option("--alpha", state->alpha, "Significance level of the Mann-Whitney U test")->capture_default_str();
  add_metrics_flags(*cmd, state->metrics);
  cmd->callback([state, &ctx] {
    AbCommand& s = *state;
    TrainConfig config = to_config(s.flags);
    if (!(s.threshold_pct >= 0)) throw InputError("--threshold must be >= 0");
    if (!(s.alpha > 0 && s.alpha < 1)) throw InputError("--alpha must be in (0, 1)");
    validate(s.metrics);
    check_listen_address_free(s.metrics);
    std::error_code ec;
    std::filesystem::create_directories(s.out_dir, ec);
    if (ec) throw InputError("--out-dir " + s.out_dir + ": " + ec.message());

    const std::string paths[2] = {s.out_dir + "/recompile.jsonl", s.out_dir + "/mutable.jsonl"};
    const TrainMode modes[2] = {TrainMode::kRecompile, TrainMode::kMutable};
    for (int i = 0; i < 2; ++i) {
      config.mode = modes[i];
      // Both runs share one `run` label; only the last one holds its exporter open at the end.
      MetricsOptions metrics = s.metrics;
      if (metrics.run_label.empty()) metrics.run_label = std::filesystem::path(s.out_dir).filename().string();
      if (i == 0) metrics.hold_seconds = 0;
      if (int code = train_in_child(config, paths[i], s.flags.quiet, metrics); code != 0) {
        ctx.exit_code = code;
        return;
      }
    }
    CompareOptions options;
    options.threshold = s.threshold_pct / 100.0;
    options.alpha = s.alpha;
    RunFile recompile = read_run_file(paths[0]);
    RunFile mutable_run = read_run_file(paths[1]);
    std::cout << reports::write_ab_reports(recompile, mutable_run, options, s.out_dir);
    if (!s.flags.quiet) std::cout << "\nreports: " << s.out_dir << "/report.{md,html,json}\n";
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::cli
