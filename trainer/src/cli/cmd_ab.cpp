// `recompdiag ab`: both modes with the same seed and config, then the A/B report.

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
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
  bool sequential = false;
  MetricsOptions metrics;
};

/// Passes a one-byte token between the two runs so they train epoch by epoch in turn. Each end
/// holds the read side of its own pipe and the write side of the other's; when the other run is
/// gone (its write side closed), waiting returns at once.
struct TurnToken {
  int mine = -1;    // read: my turn
  int theirs = -1;  // write: their turn
  bool first = true;

  void wait() {
    if (!first) pass();
    first = false;
    char byte;
    while (::read(mine, &byte, 1) < 0 && errno == EINTR) {
    }
  }
  void pass() {
    const char byte = 1;
    while (::write(theirs, &byte, 1) < 0 && errno == EINTR) {
    }
  }
};

/// Starts one run in a child process, so each starts as cold as a real job does (no JIT,
/// allocator or thread-pool state inherited from the other run); LibTorch is not touched in this
/// process before the fork. With a token, the child takes turns with the other run.
pid_t start_child(const TrainConfig& config, const std::string& out, bool quiet,
                  const MetricsOptions& metrics_options, TurnToken* token,
                  const std::vector<int>& close_fds) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid > 0) return pid;
  for (int fd : close_fds) ::close(fd);
  ::signal(SIGPIPE, SIG_IGN);  // the other run may have finished: passing the token is moot
  int code = 0;
  try {
    TwoPhaseTrainer trainer(config);
    std::unique_ptr<RecordSink> metrics = make_metrics_sink(metrics_options);
    RunFileSink file(out);
    trainer.add_sink(file);
    if (metrics) trainer.add_sink(*metrics);
    trainer.set_progress(!quiet);
    if (token) trainer.set_epoch_barrier([token] { token->wait(); });
    TrainResult r = trainer.run();
    if (token) token->pass();
    if (!quiet) {
      std::printf("recompdiag: %s run: %lld steps in %.1f s of training, %lld compile(s)\n",
                  to_string(config.mode), static_cast<long long>(r.summary.steps),
                  r.summary.elapsed_s, static_cast<long long>(r.compiles));
    }
  } catch (const InputError& e) {
    std::fprintf(stderr, "recompdiag: error: %s\n", e.what());
    code = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "recompdiag: error: %s run failed: %s\n", to_string(config.mode),
                 e.what());
    code = 1;
  }
  std::fflush(nullptr);
  ::_exit(code);
}

/// Waits for a child; returns its exit code (1 when a signal ended it).
int wait_child(pid_t pid, TrainMode mode) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::fprintf(stderr, "recompdiag: error: %s run was killed by signal %d\n", to_string(mode),
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
  cmd->add_option("--out-dir", state->out_dir, "Directory for run files and reports")
      ->capture_default_str();
  cmd->add_option("--threshold", state->threshold_pct, "Noise threshold in percent for the verdict")
      ->capture_default_str();
  cmd->add_option("--alpha", state->alpha, "Significance level of the Mann-Whitney U test")
      ->capture_default_str();
  cmd->add_flag("--sequential", state->sequential,
                "Train the modes one after the other instead of taking turns epoch by epoch (turns "
                "make a machine that speeds up or slows down affect both runs alike)");
  add_metrics_flags(*cmd, state->metrics);
  cmd->callback([state, &ctx] {
    AbCommand& s = *state;
    if (wants_fault_list(s.flags)) {
      print_fault_catalogue(std::cout);
      ctx.exit_code = 0;
      return;
    }
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
    MetricsOptions metrics[2] = {s.metrics, s.metrics};
    for (MetricsOptions& m : metrics) {
      // Both runs share one `run` label (the dashboard tells them apart by mode).
      if (m.run_label.empty()) m.run_label = std::filesystem::path(s.out_dir).filename().string();
    }
    if (!s.metrics.listen_addr.empty()) {
      ListenAddress addr = parse_listen_address(s.metrics.listen_addr);
      if (!s.sequential && addr.port != 0) {
        // Both runs are alive at once: the mutable run serves on the next port.
        metrics[1].listen_addr = addr.host + ":" + std::to_string(addr.port + 1);
        check_listen_address_free(metrics[1]);
        std::fprintf(stderr, "recompdiag: metrics of the mutable run at %s\n",
                     metrics[1].listen_addr.c_str());
      }
    }
    if (s.sequential) metrics[0].hold_seconds = 0;  // don't hold up the second run

    int codes[2] = {0, 0};
    if (s.sequential) {
      for (int i = 0; i < 2 && codes[0] == 0; ++i) {
        config.mode = modes[i];
        codes[i] = wait_child(start_child(config, paths[i], s.flags.quiet, metrics[i], nullptr, {}),
                              modes[i]);
      }
    } else {
      int p0[2], p1[2];  // p0: the recompile run's turn, p1: the mutable run's
      if (::pipe(p0) != 0 || ::pipe(p1) != 0) throw std::runtime_error("pipe failed");
      const char go = 1;
      if (::write(p0[1], &go, 1) != 1) throw std::runtime_error("pipe write failed");
      TurnToken t0{p0[0], p1[1]};
      TurnToken t1{p1[0], p0[1]};
      config.mode = modes[0];
      pid_t c0 = start_child(config, paths[0], s.flags.quiet, metrics[0], &t0, {p0[1], p1[0]});
      config.mode = modes[1];
      pid_t c1 = start_child(config, paths[1], s.flags.quiet, metrics[1], &t1, {p1[1], p0[0]});
      for (int fd : {p0[0], p0[1], p1[0], p1[1]}) ::close(fd);
      codes[0] = wait_child(c0, modes[0]);
      codes[1] = wait_child(c1, modes[1]);
    }
    for (int code : codes) {
      if (code != 0) {
        ctx.exit_code = code;
        return;
      }
    }
    CompareOptions options;
    options.threshold = s.threshold_pct / 100.0;
    options.alpha = s.alpha;
    // The modes and the handoff are what ab compares; every other difference is worth a warning.
    options.expected_differences = {"mode", "optimizer_handoff", "config.mode",
                                    "config.optimizer_handoff"};
    RunFile recompile = read_run_file(paths[0]);
    RunFile mutable_run = read_run_file(paths[1]);
    std::cout << reports::write_ab_reports(recompile, mutable_run, options, s.out_dir);
    if (!s.flags.quiet) std::cout << "\nreports: " << s.out_dir << "/report.{md,html,json}\n";
    ctx.exit_code = 0;
  });
}

}  // namespace recompdiag::cli
