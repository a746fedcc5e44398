#include "recompdiag/runner/ab_commands.h"

#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "process/command_pair.h"
#include "recompdiag/core/error.h"
#include "recompdiag/runner/ab_sides.h"
#include "recompdiag/runner/distributed.h"
#include "recompdiag/runner/exit_codes.h"
#include "recompdiag/runner/forward_signals.h"

namespace recompdiag::runner {

namespace {

constexpr char kOutField[] = "{out}";

/// `path` as one shell word: as it is when it holds nothing the shell would act on, else in
/// single quotes.
std::string shell_word(const std::string& path) {
  if (!path.empty() && path.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789-_./+,:=@%") == std::string::npos) {
    return path;
  }
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

const AbCommandSide& side_of(const AbCommandsOptions& options, char side) {
  return side == 'a' ? options.a : options.b;
}

/// One line for a run that was killed by `signal`, unless `asked` (ab forwarded SIGINT or SIGTERM:
/// the run says so itself); returns exit_code_of_wait_status's code for it.
int killed_by(const std::string& label, int signal, bool asked) {
  // Judged as a waitpid status of a process that `signal` ended (Linux's layout: the signal in the
  // low seven bits), so that the rule stays in one place.
  const int code = exit_code_of_wait_status(signal & 0x7f);
  if (asked && (signal == SIGINT || signal == SIGTERM)) return code;
  std::fprintf(stderr, "recompdiag: %s%s run was killed by signal %d (%s)\n",
               code == kExitInternal ? "internal error: " : "error: ", label.c_str(), signal,
               strsignal(signal));
  return code;
}

/// The run files a command wrote for `path`: the file itself, or a data-parallel job's rank files
/// (NAME.rank0.jsonl, ...) in rank order; none when it wrote neither.
std::vector<std::string> written_run_files(const std::string& path) {
  if (std::filesystem::exists(path)) return {path};
  std::vector<std::string> ranks;
  for (int r = 0; std::filesystem::exists(rank_file_path(path, r)); ++r) {
    ranks.push_back(rank_file_path(path, r));
  }
  return ranks;
}

/// Removes what an earlier run left at `path` (see written_run_files): it must not pass for this
/// run's.
void remove_run_files(const std::string& path) {
  for (const std::string& file : written_run_files(path)) std::filesystem::remove(file);
}

/// The exit code one side's outcome deserves, with one line on stderr when it failed.
int judge(const detail::CommandOutcome& outcome, const std::string& label,
          const std::string& command, const std::string& path, bool wrote, int64_t timeout_ms,
          bool interrupted) {
  if (outcome.stopped) {
    std::fprintf(stderr,
                 "recompdiag: error: %s run left its turn unread for %.1f s after the other run "
                 "ended, so it was stopped (does it train through a Monitor that takes turns?)\n",
                 label.c_str(), static_cast<double>(timeout_ms) / 1000.0);
    return kExitRunFailed;
  }
  const int status = outcome.wait_status;
  if (WIFSIGNALED(status)) return killed_by(label, WTERMSIG(status), interrupted);
  const int code = WEXITSTATUS(status);
  if (code == 0) {
    if (wrote) return kExitOk;
    std::fprintf(stderr,
                 "recompdiag: error: %s run exited 0 but wrote no run file %s (does its command "
                 "pass {out} to the trainer?): %s\n",
                 label.c_str(), path.c_str(), command.c_str());
    return kExitBadInput;
  }
  if (code == 126 || code == 127) {
    std::fprintf(stderr, "recompdiag: error: %s run: the command cannot be started (%s): %s\n",
                 label.c_str(), code == 127 ? "not found" : "not executable", command.c_str());
    return kExitBadInput;
  }
  // A shell reports a command that a signal ended as 128 + the signal.
  if (code > 128 && code < 128 + NSIG) return killed_by(label, code - 128, interrupted);
  std::fprintf(stderr, "recompdiag: error: %s run failed (exit %d): %s\n", label.c_str(), code,
               command.c_str());
  return code == kExitBadInput || code == kExitInternal ? code : kExitRunFailed;
}

}  // namespace

void AbCommandsOptions::validate() const {
  check_side_name(a.name);
  check_side_name(b.name);
  if (a.name == b.name) {
    throw InputError("the two A/B sides are both named '" + a.name +
                     "'; their run files would collide");
  }
  for (const AbCommandSide* side : {&a, &b}) {
    if (side->command.find_first_not_of(" \t") == std::string::npos) {
      throw InputError("the " + side->name + " side's command is empty");
    }
    if (side->command.find(kOutField) == std::string::npos) {
      throw InputError("the " + side->name + " side's command lacks {out}, the run file it must " +
                       "write: " + side->command);
    }
  }
  require_at_least("--repeats", repeats, 1);
  if (first != "random" && first != "a" && first != "b" && first != "alternate") {
    throw InputError("--first-turn must be random, a, b or alternate, got '" + first + "'");
  }
  if (start_wait_ms < 0) {
    throw InputError("--start-wait must be >= 0 s, got " + std::to_string(start_wait_ms) + " ms");
  }
  if (turn_timeout_ms <= 0) {
    throw InputError("--turn-timeout must be > 0 s, got " + std::to_string(turn_timeout_ms) +
                     " ms");
  }
  check_turn_settings(turn_every_steps, cpus);
  if (out_dir.empty()) throw InputError("--out-dir must not be empty");
}

std::string AbCommandsOptions::run_path(char side, int repeat) const {
  const std::string suffix = repeats == 1 ? "" : "-" + std::to_string(repeat);
  return (std::filesystem::path(out_dir) / (side_of(*this, side).name + suffix + ".jsonl"))
      .string();
}

std::string AbCommandsOptions::command_line(char side, int repeat) const {
  std::string line = side_of(*this, side).command;
  const std::string path = shell_word(run_path(side, repeat));
  for (size_t pos = 0; (pos = line.find(kOutField, pos)) != std::string::npos; pos += path.size()) {
    line.replace(pos, std::strlen(kOutField), path);
  }
  return line;
}

CompareOptions AbCommandsOptions::compare_options(CompareOptions base) const {
  // The runs of a pair took turns and shared the machine's state: compare them as pairs, one pair
  // turn by turn at the grain their headers record.
  base.paired = true;
  base.turns = true;
  return base;
}

AbExperimentResult run_ab_commands(const AbCommandsOptions& options, const AfterPair& after_pair) {
  options.validate();
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) throw InputError("--out-dir " + options.out_dir + ": " + ec.message());

  AbExperimentResult result;
  const std::vector<int> cpus = parse_cpus(options.cpus, "--cpus");
  // SIGINT and SIGTERM reach the commands through here; each trainer stops after its step.
  ForwardSignals forward;
  std::mt19937_64 draw(options.seed != 0 ? options.seed : std::random_device{}());
  for (int i = 1; i <= options.repeats && result.exit_code == 0; ++i) {
    detail::CommandPairOptions pair;
    // Neither side always meets the machine first: drawn per pair, or as asked.
    pair.first = options.first == "a"           ? 0
                 : options.first == "b"         ? 1
                 : options.first == "alternate" ? (i % 2 == 1 ? 0 : 1)
                                                : static_cast<int>(draw() & 1u);
    pair.start_wait_ms = options.start_wait_ms;
    pair.timeout_ms = options.turn_timeout_ms;
    pair.every_steps = options.turn_every_steps;
    pair.cpus = cpus;
    pair.quiet = options.quiet;
    int codes[2] = {0, 0};
    std::string paths[2];
    for (int k = 0; k < 2; ++k) {
      const char side = k == 0 ? 'a' : 'b';
      const std::string& name = side_of(options, side).name;
      pair.commands[k] = options.command_line(side, i);
      pair.labels[k] = options.repeats == 1 ? name : name + " run " + std::to_string(i);
      paths[k] = options.run_path(side, i);
      remove_run_files(paths[k]);
    }
    detail::PairStart start;
    const std::array<detail::CommandOutcome, 2> outcomes =
        detail::run_command_pair(pair, forward, &start);
    result.pairs.push_back({pair.first == 0 ? 'a' : 'b', start.wait_s, start.together});
    for (int k = 0; k < 2; ++k) {
      const std::vector<std::string> files = written_run_files(paths[k]);
      codes[k] = judge(outcomes[k], pair.labels[k], pair.commands[k], paths[k], !files.empty(),
                       options.turn_timeout_ms, forward.signal() != 0);
      std::vector<std::string>& side_paths = k == 0 ? result.a_paths : result.b_paths;
      side_paths.insert(side_paths.end(), files.begin(), files.end());
    }
    result.exit_code = pair_code(codes[0], codes[1]);
    if (result.exit_code == 0 && forward.signal() == 0 && after_pair && !after_pair(result)) break;
  }
  if (forward.signal() != 0) throw Interrupted(forward.signal(), "ab");
  return result;
}

}  // namespace recompdiag::runner
