#include "recompdiag/trainer/ab_experiment.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/turn_channel.h"
#include "recompdiag/runner/ab_sides.h"
#include "recompdiag/runner/distributed.h"
#include "recompdiag/runner/exit_codes.h"
#include "recompdiag/runner/forward_signals.h"
#include "recompdiag/runner/process.h"
#include "recompdiag/runner/rank_processes.h"
#include "recompdiag/trainer/stop_signals.h"
#include "recompdiag/trainer/trainer.h"

namespace recompdiag::trainer {

namespace {

/// One run to start: what it trains, where it writes, how it is called in messages.
struct RunSpec {
  TrainConfig config;
  std::string path;
  std::string label;  // "mutable", "extra-work run 2"
  reports::MetricsOptions metrics;
  /// Set: the run is a data-parallel job of this many local ranks (AbExperimentOptions::job).
  std::optional<runner::DistributedOptions> job;
  /// A rank of a job whose turns rank 0 takes: it meets the others at every epoch barrier.
  bool takes_turns = false;
  /// Prints progress and the closing line (a job's rank 0 alone does).
  bool report = true;
  /// A single run's turns: the channel the child's trainer takes from RECOMPDIAG_TURNS, as `ab
  /// --a-cmd/--b-cmd` hands it to a command (a job's rank 0 takes its turns at epoch boundaries).
  std::optional<TurnChannelSpec> turns;
  /// The CPUs the child runs on (AbExperimentOptions::cpus); empty: not pinned.
  runner::CpuMask cpus;
};

/// Starts one run in a child process, so each starts as cold as a real job does (no JIT,
/// allocator or thread-pool state inherited from another run); LibTorch is not touched in this
/// process before the fork. With `run.turns`, the child takes turns with the other run of its pair as
/// any trainer does with the channel in its environment.
pid_t start_child(const RunSpec& run, bool quiet, const std::vector<int>& close_fds,
                  runner::ForwardSignals& forward) {
  // A group of its own: a terminal's Ctrl-C reaches the parent alone, which forwards it once.
  // Until the trainer exists a signal ends the child as usual: it has recorded no step yet.
  const pid_t pid = runner::fork_into_group("the " + run.label + " run");
  if (pid > 0) {
    forward.add(pid);
    return pid;
  }
  for (int fd : close_fds) ::close(fd);
  runner::pin_to_cpus(run.cpus);  // before LibTorch starts its threads: they inherit it
  ::signal(SIGPIPE, SIG_IGN);     // the other run may have finished: passing the turn is moot
  int code = 0;
  try {
    // Before the trainer exists: its monitor takes the channel as any trainer's would.
    if (run.turns) ::setenv(kTurnChannelVar, run.turns->to_string().c_str(), 1);
    TwoPhaseTrainer trainer(run.config);
    std::unique_ptr<RecordSink> metrics = reports::make_metrics_sink(run.metrics);
    RunFileSink file(run.path);
    trainer.add_sink(file);
    if (metrics) trainer.add_sink(*metrics);
    trainer::TerminalProgress progress(stdout);
    if (!quiet && run.report) trainer.set_progress(&progress);
    // Another rank of a job whose rank 0 takes the turns: it meets the others at every epoch
    // barrier.
    if (run.takes_turns && !run.turns) trainer.set_epoch_barrier([] {});
    StopOnSignals stop(trainer);
    TrainResult r = trainer.run();
    if (stop.signal() != 0) {
      std::fflush(nullptr);
      ::_exit(128 + stop.signal());
    }
    if (!quiet && run.report) {
      std::printf("recompdiag: %s run: %lld steps in %.1f s of training, %lld compile(s)\n",
                  run.label.c_str(), static_cast<long long>(r.summary.steps), r.summary.elapsed_s,
                  static_cast<long long>(r.compiles));
    }
  } catch (...) {
    // The same line and code as `recompdiag train` would give: the parent exits with it.
    code = runner::report_error(std::current_exception(), std::cerr, run.label + " run: ");
  }
  std::fflush(nullptr);
  ::_exit(code);
}

/// Waits for a child; returns its exit code (exit_code_of_wait_status: 3 when it crashed).
int wait_child(pid_t pid, const std::string& label, runner::ForwardSignals& forward) {
  const int status = runner::wait_process(pid);
  forward.remove(pid);
  const int code = runner::exit_code_of_wait_status(status);
  if (WIFSIGNALED(status)) {
    std::fprintf(stderr, "recompdiag: %s%s run was killed by signal %d (%s)\n",
                 code == runner::kExitInternal ? "internal error: " : "error: ", label.c_str(),
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
  }
  return code;
}

/// Starts the ranks of `run`, a job, as job number `job` of `out`, meeting in `store_file`.
/// Rank 0 takes `turns` (null: no turns; the job takes them as one at epoch boundaries, as
/// `train --world-size` under `ab --a-cmd` does) and closes `close_fds`; the other ranks close
/// `turn_fds` too (a rank holding the other job's pipe would keep it from seeing rank 0 end).
void start_job(const RunSpec& run, int job, const std::string& store_file,
               const TurnChannelSpec* turns, const std::vector<int>& close_fds,
               const std::vector<int>& turn_fds, bool quiet, runner::ForwardSignals& forward,
               std::vector<runner::RankProcess>& out) {
  const int world = run.job->world_size;
  for (int r = 0; r < world; ++r) {
    RunSpec rank = run;
    runner::DistributedOptions& d = rank.config.distributed.emplace(*run.job);
    d.rank = r;
    d.store_file = store_file;
    rank.path = rank_file_path(run.path, r);
    rank.takes_turns = turns != nullptr;
    if (turns && r == 0) rank.turns = *turns;
    rank.report = r == 0;
    // One endpoint per rank, as `train --world-size` serves them.
    rank.metrics.listen_addr = runner::rank_listen_addr(run.metrics.listen_addr, r);
    const pid_t pid = start_child(rank, quiet, r == 0 ? close_fds : turn_fds, forward);
    out.push_back({pid, job, r, world, run.label});
  }
}

/// Runs `run`, a job, to its end; returns wait_for_ranks()'s code.
int run_job(const RunSpec& run, bool quiet, runner::ForwardSignals& forward) {
  runner::LocalRendezvous rendezvous;
  std::vector<runner::RankProcess> ranks;
  start_job(run, 0, rendezvous.store_file(), nullptr, {}, {}, quiet, forward, ranks);
  return runner::wait_for_ranks(ranks, 1, forward).front();
}

/// Runs A and B of one pair at once, taking turns (jobs epoch by epoch); `b_first` gives B the first
/// turn (alternated over repeats so neither side always warms the machine up). Jobs take their
/// turns through their rank 0.
int run_interleaved_pair(RunSpec a, RunSpec b, bool b_first, int64_t every_steps,
                         const runner::CpuMask& cpus, bool quiet, runner::ForwardSignals& forward) {
  // Closed however this returns: the children hold their own copies.
  runner::Pipe pa = runner::Pipe::make("the turns");  // A's turn
  runner::Pipe pb = runner::Pipe::make("the turns");  // B's turn
  if (!write_turn_token(b_first ? pb.write.get() : pa.write.get())) {
    runner::throw_os_error("cannot give the first turn");
  }
  // A job takes its turns at its epoch boundaries; a single run every `every_steps`.
  TurnChannelSpec ta{pa.read.get(), pb.write.get(), a.job ? 0 : every_steps, kDefaultTurnTimeoutMs};
  TurnChannelSpec tb{pb.read.get(), pa.write.get(), b.job ? 0 : every_steps, kDefaultTurnTimeoutMs};
  const std::vector<int> for_a = {pa.write.get(), pb.read.get()};  // what A's run closes
  const std::vector<int> for_b = {pb.write.get(), pa.read.get()};
  if (a.job) {
    const std::vector<int> all = {pa.read.get(), pa.write.get(), pb.read.get(), pb.write.get()};
    runner::LocalRendezvous ra, rb;
    std::vector<runner::RankProcess> ranks;
    start_job(a, 0, ra.store_file(), &ta, for_a, all, quiet, forward, ranks);
    start_job(b, 1, rb.store_file(), &tb, for_b, all, quiet, forward, ranks);
    pa = {};
    pb = {};
    const std::vector<int> codes = runner::wait_for_ranks(ranks, 2, forward);
    return runner::pair_code(codes[0], codes[1]);
  }
  // A single run takes its turns through the channel a trainer reads from its environment.
  a.turns = ta;
  b.turns = tb;
  a.cpus = cpus;
  b.cpus = cpus;
  const pid_t ca = start_child(a, quiet, for_a, forward);
  const pid_t cb = start_child(b, quiet, for_b, forward);
  pa = {};
  pb = {};
  const int code_a = wait_child(ca, a.label, forward);
  const int code_b = wait_child(cb, b.label, forward);
  // A crash of B is what the pair is remembered by, whatever A's code.
  return runner::pair_code(code_a, code_b);
}

}  // namespace

const char* to_string(AbSchedule schedule) {
  switch (schedule) {
    case AbSchedule::kInterleaved:
      return "interleaved";
    case AbSchedule::kSequential:
      return "sequential";
    case AbSchedule::kBlocked:
      return "blocked";
  }
  return "interleaved";
}

void AbExperimentOptions::validate() const {
  if (job && (job->world_size < 1 || job->world_size > kMaxAbWorldSize)) {
    throw InputError("ab --world-size " + std::to_string(job->world_size) + " is outside [1, " +
                     std::to_string(kMaxAbWorldSize) + "] (two jobs run at once)");
  }
  for (const AbSide* side : {&a, &b}) {
    if (job && side->config.distributed) {
      throw InputError("ab starts its jobs' ranks itself: it cannot run as a launcher's rank");
    }
    if (job) {
      side->config.validate_for_job(*job);
    } else {
      side->config.validate();
    }
  }
  runner::check_side_name(a.name);
  runner::check_side_name(b.name);
  if (a.name == b.name) {
    throw InputError("the two A/B sides are both named '" + a.name +
                     "'; their run files would collide");
  }
  require_at_least("--repeats", repeats, 1);
  runner::check_turn_settings(turn_every_steps, cpus);
  if (out_dir.empty()) throw InputError("--out-dir must not be empty");
  metrics.validate();
}

std::string AbExperimentOptions::run_path(char side, int repeat) const {
  const std::string& name = side == 'a' ? a.name : b.name;
  const std::string suffix = repeats == 1 ? "" : "-" + std::to_string(repeat);
  return (std::filesystem::path(out_dir) / (name + suffix + ".jsonl")).string();
}

std::vector<std::string> AbExperimentOptions::expected_differences() const {
  std::set<std::string> keys;
  for (const ConfigDifference& d : diff_json(a.config.to_json(), b.config.to_json(), "config")) {
    keys.insert(d.key);
  }
  // The header names the hook a run used (probes::Monitor::describe), not the one asked for.
  if (a.config.dispatch_hook != b.config.dispatch_hook) keys.insert("config.dispatch_hook");
  // The header repeats the mode and handoff outside the config; list those too.
  if (keys.count("config.mode") || keys.count("config.optimizer_handoff")) {
    keys.insert("mode");
    keys.insert("optimizer_handoff");
  }
  return {keys.begin(), keys.end()};
}

CompareOptions AbExperimentOptions::compare_options(CompareOptions base) const {
  // Interleaved or back to back, A_i and B_i shared the machine's state: compare them as pairs;
  // interleaved, epoch k of A and epoch k of B ran back to back, so one pair is paired by epoch.
  base.paired = schedule != AbSchedule::kBlocked;
  base.turns = schedule == AbSchedule::kInterleaved;
  base.expected_differences = expected_differences();
  return base;
}

AbExperimentResult run_ab_experiment(const AbExperimentOptions& options) {
  options.validate();
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) throw InputError("--out-dir " + options.out_dir + ": " + ec.message());

  reports::MetricsOptions metrics[2] = {options.metrics, options.metrics};
  for (reports::MetricsOptions& m : metrics) {
    // All runs share one `run` label (the dashboard tells the sides apart by mode).
    if (m.run_label.empty()) {
      m.run_label = std::filesystem::path(options.out_dir).filename().string();
    }
  }
  reports::check_listen_address_free(metrics[0]);
  const bool interleaved = options.schedule == AbSchedule::kInterleaved;
  if (interleaved) {
    // Both runs of a pair are alive at once: side B serves on the next port (past side A's ranks'
    // ports for jobs).
    metrics[1].listen_addr = runner::rank_listen_addr(options.metrics.listen_addr,
                                                      options.job ? options.job->world_size : 1);
    if (metrics[1].listen_addr != options.metrics.listen_addr) {
      reports::check_listen_address_free(metrics[1]);
      std::fprintf(stderr, "recompdiag: metrics of the %s runs at %s\n", options.b.name.c_str(),
                   metrics[1].listen_addr.c_str());
    }
  }

  AbExperimentResult result;
  auto spec = [&](char side, int repeat, bool last) {
    const AbSide& s = side == 'a' ? options.a : options.b;
    RunSpec r;
    r.config = s.config;
    r.path = options.run_path(side, repeat);
    r.label = options.repeats == 1 ? s.name : s.name + " run " + std::to_string(repeat);
    r.metrics = metrics[side == 'a' ? 0 : 1];
    r.job = options.job;
    if (!last) r.metrics.hold_seconds = 0;  // don't hold up the next run
    std::vector<std::string>& paths = side == 'a' ? result.a_paths : result.b_paths;
    if (!r.job) paths.push_back(r.path);
    for (int k = 0; r.job && k < r.job->world_size; ++k) paths.push_back(rank_file_path(r.path, k));
    return r;
  };
  const int n = options.repeats;
  // SIGINT and SIGTERM reach the runs through here; each stops after its step with a summary.
  runner::ForwardSignals forward;
  auto run_one = [&](const RunSpec& r) {
    if (r.job) return run_job(r, options.quiet, forward);
    return wait_child(start_child(r, options.quiet, {}, forward), r.label, forward);
  };
  switch (options.schedule) {
    case AbSchedule::kInterleaved: {
      const runner::CpuMask cpus = runner::CpuMask::of(runner::parse_cpus(options.cpus, "--cpus"));
      for (int i = 1; i <= n && result.exit_code == 0; ++i) {
        result.exit_code =
            run_interleaved_pair(spec('a', i, i == n), spec('b', i, i == n), i % 2 == 0,
                                 options.turn_every_steps, cpus, options.quiet, forward);
      }
    } break;
    case AbSchedule::kSequential:
      for (int i = 1; i <= n && result.exit_code == 0; ++i) {
        result.exit_code = run_one(spec('a', i, false));
        if (result.exit_code == 0) result.exit_code = run_one(spec('b', i, i == n));
      }
      break;
    case AbSchedule::kBlocked:
      for (char side : {'a', 'b'}) {
        for (int i = 1; i <= n && result.exit_code == 0; ++i) {
          result.exit_code = run_one(spec(side, i, side == 'b' && i == n));
        }
      }
      break;
  }
  if (forward.signal() != 0) throw runner::Interrupted(forward.signal(), "ab");
  return result;
}

int run_in_child(const TrainConfig& config, const std::string& path, const std::string& label,
                 bool quiet) {
  RunSpec run;
  run.config = config;
  run.path = path;
  run.label = label;
  runner::ForwardSignals forward;
  const int code = wait_child(start_child(run, quiet, {}, forward), label, forward);
  if (forward.signal() != 0) throw runner::Interrupted(forward.signal(), label);
  return code;
}

}  // namespace recompdiag::trainer
