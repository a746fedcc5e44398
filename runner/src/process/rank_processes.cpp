// What `train --world-size N` and `ab --world-size N` share (rank_processes.h): a local job's
// FileStore directory, its ranks' metrics endpoints, and the wait for its rank processes.

#include "recompdiag/runner/rank_processes.h"

#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "recompdiag/reports/prometheus_exporter.h"
#include "recompdiag/runner/exit_codes.h"

namespace recompdiag::runner {

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

}  // namespace recompdiag::runner
