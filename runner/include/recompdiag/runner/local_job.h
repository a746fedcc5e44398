#pragma once
/// \file
/// Starts the ranks of a data-parallel job on this machine, as torchrun does: each rank is this
/// executable run again with the same arguments and a launcher's environment (RANK, WORLD_SIZE,
/// LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), which makes it one rank.
///
///     LocalJobOptions job;
///     job.world_size = 4;
///     job.argv = this_command_line();  // "recompdiag train --world-size 4 ..."
///     int code = run_local_job(job);   // 0 when every rank finished

#include <string>
#include <vector>

namespace recompdiag::runner {

/// A job whose ranks all run here. Plain data; copy freely.
struct LocalJobOptions {
  int world_size = 2;                     ///< Ranks to start, in [1, kMaxLocalWorldSize].
  std::string master_addr = "127.0.0.1";  ///< Where rank 0 serves the rendezvous store.
  /// The TCP port rank 0 serves the rendezvous store on; 0 (the default): no port, the ranks
  /// meet in a FileStore in a fresh temporary directory (no race for a free port).
  int master_port = 0;
  /// The arguments each rank runs with (argv[0] included, ignored: the ranks run
  /// /proc/self/exe). Must not be empty.
  std::vector<std::string> argv;

  /// Throws InputError for a world size outside [1, kMaxLocalWorldSize] or a bad address/port.
  void validate() const;
};

/// Starts `options.world_size` ranks, forwards SIGINT and SIGTERM to them, and waits for all of
/// them. Returns 0 when every rank exited 0; 3 when a rank crashed; else the exit code of the first
/// rank to fail (1 for a rank killed by SIGKILL, 130/143 for SIGINT/SIGTERM; one line on stderr
/// names a rank killed by a signal). A rank that fails does not stop the others: they fail on
/// their own within the rendezvous or collective timeout, and each keeps its completed steps.
/// Throws std::runtime_error when a process or the rendezvous directory cannot be made. Call from
/// the main thread, with no other child processes to wait for.
int run_local_job(const LocalJobOptions& options);

/// This process's arguments, from /proc/self/cmdline.
std::vector<std::string> this_command_line();

}  // namespace recompdiag::runner
