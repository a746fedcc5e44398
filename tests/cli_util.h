#pragma once
// Runs the `recompdiag` tool under test (RECOMPDIAG_BIN) for the CLI suites.

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace recompdiag::test {

/// What one command printed and how it exited.
struct CliOutcome {
  int exit_code = -1;  ///< -1 when a signal ended it.
  std::string output;  ///< stdout and stderr together.
};

/// Runs a shell command line and collects its stdout and stderr together.
inline CliOutcome run_shell(const std::string& line) {
  const std::string cmd = line + " 2>&1";
  CliOutcome o;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) o.output.append(buf, n);
  const int status = ::pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

/// Runs `PREFIX recompdiag ARGS` through the shell and collects its output.
inline CliOutcome run_cli_prefixed(const std::string& prefix, const std::string& args) {
  return run_shell(prefix + std::string(RECOMPDIAG_BIN) + " " + args);
}

/// Runs `recompdiag ARGS` through the shell and collects its output.
inline CliOutcome run_cli(const std::string& args) { return run_cli_prefixed("", args); }

/// Runs `recompdiag ARGS` with `env` ("NAME=value ...", shell-quoted) added to its environment.
inline CliOutcome run_cli_env(const std::string& env, const std::string& args) {
  return run_cli_prefixed("env " + env + " ", args);
}

/// Starts `recompdiag ARGS...` in a child, stdout to /dev/null, stderr to `err` (inherited when
/// empty) and RLIMIT_FSIZE at `fsize` (0: unlimited); returns its pid.
inline pid_t start_cli(std::vector<std::string> args, const std::string& err = "",
                       rlim_t fsize = 0) {
  std::fflush(nullptr);  // the child must not write doctest's buffered output again
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (fsize != 0) {
      const rlimit limit{fsize, fsize};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    // Appending: the runs ab starts share this file and may write their lines at the same
    // moment (taking turns step by step, both hit a file-size limit within a step of each
    // other); O_APPEND keeps one line from overwriting the other.
    if (!err.empty() && !std::freopen(err.c_str(), "a", stderr)) ::_exit(126);
    if (!std::freopen("/dev/null", "w", stdout)) ::_exit(126);
    std::vector<char*> argv{const_cast<char*>(RECOMPDIAG_BIN)};
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(RECOMPDIAG_BIN, argv.data());
    ::_exit(127);
  }
  return pid;
}

/// The step lines in the run file at `path` (0 when it is missing), a last partial one included.
inline int64_t count_step_lines(const std::string& path) {
  const std::string text = read_text(path);
  int64_t n = 0;
  for (size_t pos = 0; (pos = text.find("\"type\":\"step\"", pos)) != std::string::npos; ++pos) ++n;
  return n;
}

/// Polls the run file at `path` every 50 ms, for 60 s at most, until it holds `steps` step lines;
/// returns the count last seen (the caller decides what falling short means).
inline int64_t wait_for_step_lines(const std::string& path, int64_t steps) {
  int64_t seen = count_step_lines(path);
  for (int i = 0; i < 1200 && seen < steps; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    seen = count_step_lines(path);
  }
  return seen;
}

/// The processes whose parent is `parent` (from /proc/PID/stat's fourth field).
inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> kids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');  // the command name may hold spaces
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == parent) kids.push_back(std::stoi(name));
  }
  return kids;
}

}  // namespace recompdiag::test
