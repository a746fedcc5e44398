#include "recompdiag/trainer/local_job.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

#include "detail/forward_signals.h"
#include "recompdiag/core/error.h"
#include "recompdiag/trainer/distributed.h"

namespace recompdiag::trainer {

namespace {

/// A port the kernel says is free now on loopback. Another process may take it before rank 0
/// binds it; rank 0 then fails to serve the store and says so.
int pick_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket failed: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error(std::string("no free port on loopback: ") + std::strerror(errno));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

/// Forks and execs one rank. Everything the child needs is prepared before the fork: between fork
/// and exec it calls only async-signal-safe functions.
pid_t start_rank(const std::vector<std::string>& env, const std::vector<std::string>& argv,
                 detail::ForwardSignals& forward) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // A group of its own: a terminal's Ctrl-C reaches the launcher alone, which forwards it once.
    ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::execve("/proc/self/exe", args.data(), envp.data());
    const char msg[] = "recompdiag: error: cannot start a rank: exec of /proc/self/exe failed\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(1);
  }
  forward.add(pid);
  return pid;
}

}  // namespace

void LocalJobOptions::validate() const {
  if (world_size < 1 || world_size > kMaxLocalWorldSize) {
    throw InputError("--world-size " + std::to_string(world_size) + " is outside [1, " +
                     std::to_string(kMaxLocalWorldSize) + "] (ranks started on this machine)");
  }
  check_master_addr(master_addr, "master address");
  if (master_port < 0 || master_port > 65535) {
    throw InputError("master port " + std::to_string(master_port) + " is outside [0, 65535]");
  }
  if (argv.empty()) throw InputError("a local job needs the ranks' command line");
}

int run_local_job(const LocalJobOptions& options) {
  options.validate();
  const int port = options.master_port != 0 ? options.master_port : pick_free_port();
  // The environment of this process, less what a launcher sets, then the launcher's variables.
  static const char* const kLauncherVars[] = {
      "RANK",        "WORLD_SIZE",       "LOCAL_RANK", "MASTER_ADDR",
      "MASTER_PORT", "LOCAL_WORLD_SIZE", "GROUP_RANK", "TORCHELASTIC_RUN_ID"};
  std::vector<std::string> base_env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool launcher = false;
    for (const char* v : kLauncherVars) launcher = launcher || name == v;
    if (!launcher) base_env.push_back(entry);
  }
  detail::ForwardSignals forward;
  std::map<pid_t, int> rank_of;
  for (int rank = 0; rank < options.world_size; ++rank) {
    std::vector<std::string> env = base_env;
    env.push_back("RANK=" + std::to_string(rank));
    env.push_back("LOCAL_RANK=" + std::to_string(rank));
    env.push_back("WORLD_SIZE=" + std::to_string(options.world_size));
    env.push_back("LOCAL_WORLD_SIZE=" + std::to_string(options.world_size));
    env.push_back("MASTER_ADDR=" + options.master_addr);
    env.push_back("MASTER_PORT=" + std::to_string(port));
    rank_of[start_rank(env, options.argv, forward)] = rank;
  }
  int code = 0;
  while (!rank_of.empty()) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left to wait for
    }
    auto it = rank_of.find(pid);
    if (it == rank_of.end()) continue;
    const int rank = it->second;
    rank_of.erase(it);
    forward.remove(pid);
    int rank_code = 0;
    if (WIFEXITED(status)) {
      rank_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      std::fprintf(stderr, "recompdiag: error: rank %d of %d was killed by signal %d (%s)\n", rank,
                   options.world_size, WTERMSIG(status), ::strsignal(WTERMSIG(status)));
      rank_code = 1;
    }
    if (code == 0) code = rank_code;
  }
  return code;
}

std::vector<std::string> this_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  size_t start = 0;
  while (start < all.size()) {
    const size_t end = all.find('\0', start);
    argv.push_back(all.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return argv;
}

}  // namespace recompdiag::trainer
