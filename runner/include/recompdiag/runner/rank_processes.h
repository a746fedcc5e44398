#pragma once
// What `train --world-size N` and `ab --world-size N` share: a fresh FileStore for each local
// job's rendezvous, and the wait for a job's rank processes. Torch-free (the launchers must not
// touch LibTorch before they fork).

#include <sys/types.h>

#include <string>
#include <vector>

#include "recompdiag/runner/forward_signals.h"
#include "recompdiag/runner/process.h"

namespace recompdiag::runner {

/// A fresh directory under the temporary directory holding the FileStore of one local job;
/// removed with its contents on destruction. A store in a directory of its own cannot be taken by
/// another process between its choice and its use, as a free TCP port can. Neither copyable nor
/// movable.
class LocalRendezvous {
 public:
  /// Creates the directory. Throws IoError when it cannot.
  LocalRendezvous();
  LocalRendezvous(const LocalRendezvous&) = delete;
  LocalRendezvous& operator=(const LocalRendezvous&) = delete;

  /// The store's path (the file does not exist yet: the first rank creates it).
  const std::string& store_file() const { return file_; }

 private:
  TempDir dir_;
  std::string file_;
};

/// Where process `offset` of a local job serves its metrics when the job was given
/// `listen_addr`: HOST:PORT+offset, so that the ranks (and the two sides of an A/B pair) each have
/// one endpoint. An empty address (no endpoint) and port 0 (any free port) stay as they are.
/// Throws InputError for an address that does not parse.
std::string rank_listen_addr(const std::string& listen_addr, int offset);

/// One started rank process of a local job.
struct RankProcess {
  pid_t pid = -1;
  int job = 0;         ///< Which job it belongs to: an index into wait_for_ranks()'s result.
  int rank = 0;        ///< Its rank in the job.
  int world_size = 1;  ///< The job's world size.
  /// The job's name in messages: "" for `train`, the side's ("mutable run 2") for `ab`.
  std::string label;
};

/// Waits for every process (as they end, in any order) and unregisters each from `forward`.
/// Returns one exit code per job (`jobs` of them): 0 when all its ranks exited 0; 3 when one
/// crashed (a signal other than SIGKILL, SIGINT, SIGTERM); else the code of its first rank to
/// fail (exit_code_of_wait_status: 1 for SIGKILL, 128 + N for SIGINT and SIGTERM). A rank killed
/// by a signal gets one line on stderr naming it. Processes that are not children of this one
/// are skipped.
std::vector<int> wait_for_ranks(const std::vector<RankProcess>& processes, int jobs,
                                ForwardSignals& forward);

}  // namespace recompdiag::runner
