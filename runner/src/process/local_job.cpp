#include "recompdiag/runner/local_job.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "recompdiag/core/error.h"
#include "recompdiag/reports/prometheus_exporter.h"
#include "recompdiag/runner/distributed.h"
#include "recompdiag/runner/exit_codes.h"
#include "recompdiag/runner/forward_signals.h"
#include "recompdiag/runner/process.h"
#include "recompdiag/runner/rank_processes.h"

namespace recompdiag::runner {

namespace {

/// Starts one rank: this executable again, in a process group of its own (spawn_process).
pid_t start_rank(const std::vector<std::string>& env, const std::vector<std::string>& argv,
                 ForwardSignals& forward) {
  ChildProgram program;
  program.path = "/proc/self/exe";
  program.argv = argv;
  program.env = env;
  program.exec_failed_code = 1;
  program.exec_failed_line =
      "recompdiag: error: cannot start a rank: exec of /proc/self/exe failed\n";
  const pid_t pid = spawn_process(program, "a rank");
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
  std::unique_ptr<LocalRendezvous> rendezvous;
  if (options.master_port == 0) rendezvous = std::make_unique<LocalRendezvous>();
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
  ForwardSignals forward;
  std::vector<RankProcess> ranks;
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
  return wait_for_ranks(ranks, 1, forward).front();
}

std::vector<std::string> this_command_line() { return own_command_line(); }

}  // namespace recompdiag::runner
