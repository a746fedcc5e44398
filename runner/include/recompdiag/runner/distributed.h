#pragma once
/// \file
/// Where a process stands in a data-parallel job: its rank, the world size and the rendezvous
/// address. Torch-free: parsed and validated (from flags or from a launcher's environment) before
/// LibTorch or c10d is touched.
///
///     auto env = [](const char* name) { return std::getenv(name); };
///     std::optional<DistributedOptions> job = distributed_from_environment(env);
///     if (job) std::string path = rank_file_path("run.jsonl", job->rank);  // "run.rank0.jsonl"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "recompdiag/core/job.h"

namespace recompdiag::runner {

/// The largest world size accepted: bounds the rank label of the exported series.
inline constexpr int kMaxWorldSize = 1024;
/// The most ranks `--world-size` starts on one machine (each is a full LibTorch process).
inline constexpr int kMaxLocalWorldSize = 64;

/// One rank of a data-parallel job. Plain data; copy freely.
struct DistributedOptions {
  int rank = 0;        ///< This process's rank, in [0, world_size).
  int world_size = 1;  ///< Ranks in the job, in [1, kMaxWorldSize].
  /// The rendezvous store's host (rank 0 serves it): an IPv4 or IPv6 address or a host name.
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;  ///< The rendezvous store's TCP port, in [1, 65535].
  /// When set, the ranks meet through a c10d FileStore at this path instead of rank 0's TCPStore
  /// at master_addr:master_port (which are then unused): what local jobs do, so that no port is
  /// picked and then lost to another process before rank 0 binds it. The file must be fresh
  /// (left from no earlier job) and on a filesystem every rank sees.
  std::string store_file;
  /// How long a rank waits for every other rank to join before it fails, in seconds.
  double rendezvous_timeout_s = 60.0;
  /// How long a rank waits in one collective before it fails (a peer died or stalled), seconds.
  double collective_timeout_s = 60.0;
  /// The network interface Gloo binds to ("eth1"), as PyTorch's GLOO_SOCKET_IFNAME names it.
  /// Empty: loopback for a loopback master, else the address this host's name resolves to.
  std::string socket_ifname;
  /// c10d's backend (--dist-backend): "gloo" (host or CUDA tensors, the default) or "nccl" (CUDA
  /// tensors, one GPU per rank; a LibTorch with c10d's ProcessGroupNCCL: nccl_available()).
  std::string backend = "gloo";

  /// Throws InputError with one sentence for the first invalid value.
  void validate() const;
  /// True when the master address is this machine's loopback (the local launcher's case).
  bool loopback() const;
};

/// The launcher's variable that names a FileStore for the rendezvous (DistributedOptions::
/// store_file); local jobs set it, torchrun does not.
inline constexpr char kRendezvousFileVar[] = "RECOMPDIAG_RENDEZVOUS_FILE";

/// Reads a launcher's environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, as torchrun sets
/// them, GLOO_SOCKET_IFNAME as PyTorch reads it, and kRendezvousFileVar) through `getenv`. nullopt
/// when none is set: not a rank of a launched job. Throws InputError when some are set but not all
/// (RANK and WORLD_SIZE are required; MASTER_ADDR defaults to 127.0.0.1 and MASTER_PORT to 29500),
/// or when a value is malformed or out of range. The timeouts are left at their defaults.
std::optional<DistributedOptions> distributed_from_environment(
    const std::function<const char*(const char*)>& getenv);

/// Throws InputError unless `addr` is an IPv4 address, an IPv6 address (bare or in brackets) or
/// a host name (letters, digits, '-' and '.', labels of 1-63 characters, 253 in all). `what`
/// names the source in the message ("MASTER_ADDR").
void check_master_addr(const std::string& addr, const std::string& what);

/// The run file of `rank` (core/job.h): "run.jsonl" -> "run.rank0.jsonl".
using recompdiag::rank_file_path;

}  // namespace recompdiag::runner
