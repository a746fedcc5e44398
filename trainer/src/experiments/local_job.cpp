#include "recompdiag/trainer/local_job.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "detail/forward_signals.h"
#include "detail/process.h"
#include "detail/rank_processes.h"
#include "recompdiag/core/error.h"
#include "recompdiag/reports/prometheus_exporter.h"
#include "recompdiag/trainer/distributed.h"
#include "recompdiag/trainer/exit_codes.h"

namespace recompdiag::trainer {

namespace {

/// Starts one rank: this executable again, in a process group of its own (spawn_process).
pid_t start_rank(const std::vector<std::string>& env, const std::vector<std::string>& argv,
                 detail::ForwardSignals& forward) {
  detail::ChildProgram program;
  program.path = "/proc/self/exe";
  program.argv = argv;
  program.env = env;
  program.exec_failed_code = 1;
  program.exec_failed_line =
      "recompdiag: error: cannot start a rank: exec of /proc/self/exe failed\n";
  const pid_t pid = detail::spawn_process(program, "a rank");
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
  // Without a port of its own the job meets in a FileStore: nothing to lose to another process.
  std::unique_ptr<detail::LocalRendezvous> rendezvous;
  if (options.master_port == 0) rendezvous = std::make_unique<detail::LocalRendezvous>();
  // The environment of this process, less what a launcher sets, then the launcher's variables.
  static const char* const kLauncherVars[] = {
      "RANK",        "WORLD_SIZE",          "LOCAL_RANK",
      "MASTER_ADDR", "MASTER_PORT",         "LOCAL_WORLD_SIZE",
      "GROUP_RANK",  "TORCHELASTIC_RUN_ID", kRendezvousFileVar};
  std::vector<std::string> base_env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool launcher = false;
    for (const char* v : kLauncherVars) launcher = launcher || name == v;
    if (!launcher) base_env.push_back(entry);
  }
  detail::ForwardSignals forward;
  std::vector<detail::RankProcess> ranks;
  for (int rank = 0; rank < options.world_size; ++rank) {
    std::vector<std::string> env = base_env;
    env.push_back("RANK=" + std::to_string(rank));
    env.push_back("LOCAL_RANK=" + std::to_string(rank));
    env.push_back("WORLD_SIZE=" + std::to_string(options.world_size));
    env.push_back("LOCAL_WORLD_SIZE=" + std::to_string(options.world_size));
    env.push_back("MASTER_ADDR=" + options.master_addr);
    if (rendezvous) {
      env.push_back(std::string(kRendezvousFileVar) + "=" + rendezvous->store_file());
    } else {
      env.push_back("MASTER_PORT=" + std::to_string(options.master_port));
    }
    ranks.push_back({start_rank(env, options.argv, forward), 0, rank, options.world_size, ""});
  }
  return detail::wait_for_ranks(ranks, 1, forward).front();
}

namespace detail {

LocalRendezvous::LocalRendezvous()
    : dir_("recompdiag-rendezvous-"), file_(dir_.path() + "/store") {}

std::string rank_listen_addr(const std::string& listen_addr, int offset) {
  if (listen_addr.empty()) return listen_addr;
  const reports::ListenAddress at = reports::parse_listen_address(listen_addr);
  if (at.port == 0) return listen_addr;  // any free port, for each of them
  return at.host + ":" + std::to_string(at.port + offset);
}

std::vector<int> wait_for_ranks(const std::vector<RankProcess>& processes, int jobs,
                                ForwardSignals& forward) {
  std::vector<int> codes(static_cast<size_t>(jobs), 0);
  std::vector<bool> crashed(static_cast<size_t>(jobs), false);
  std::map<pid_t, const RankProcess*> running;
  for (const RankProcess& p : processes) running[p.pid] = &p;
  while (!running.empty()) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left to wait for
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const RankProcess& p = *it->second;
    running.erase(it);
    forward.remove(pid);
    const int code = exit_code_of_wait_status(status);
    if (WIFSIGNALED(status)) {
      std::fprintf(stderr, "recompdiag: %s%s%srank %d of %d was killed by signal %d (%s)\n",
                   code == kExitInternal ? "internal error: " : "error: ", p.label.c_str(),
                   p.label.empty() ? "" : ": ", p.rank, p.world_size, WTERMSIG(status),
                   ::strsignal(WTERMSIG(status)));
    }
    const size_t job = static_cast<size_t>(p.job);
    if (codes[job] == 0) codes[job] = code;
    // A crash is what the job is remembered by, whatever failed before it.
    if (code == kExitInternal && !crashed[job]) {
      crashed[job] = true;
      codes[job] = code;
    }
  }
  return codes;
}

}  // namespace detail

std::vector<std::string> this_command_line() { return detail::own_command_line(); }

}  // namespace recompdiag::trainer
