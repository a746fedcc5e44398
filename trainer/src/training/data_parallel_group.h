#pragma once
// The one seam to c10d: rendezvous over a TCPStore, a ProcessGroupGloo (or ProcessGroupNCCL for
// ranks on CUDA), the data shard of a rank and the gradient all-reduce. Only
// data_parallel_group.cpp includes c10d's headers (slow to compile); this header is included by
// torch translation units only (it names model.h's types).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "recompdiag/trainer/dist_backend.h"
#include "recompdiag/trainer/model.h"

namespace recompdiag::trainer::detail {

/// What one collective cost this rank.
struct CollectiveCost {
  int64_t bytes = 0;     ///< Bytes this rank contributed.
  double wait_ms = 0.0;  ///< From issuing the collective to its completion.
  bool stop = false;     ///< average_step(): some rank asked the job to stop after this step.
};

/// This process's membership in a data-parallel job: joined at construction, left at
/// destruction. Not thread-safe: call from the training thread. Neither copyable nor movable
/// (it owns sockets and, on rank 0, the rendezvous server).
class DataParallelGroup {
 public:
  /// Joins the job: rank 0 serves the rendezvous store on `options.master_port`, every rank
  /// connects, waits until all `world_size` ranks have joined, and builds the group of
  /// `options.backend` (Gloo, or NCCL on `device`, which must then be CUDA). Throws InputError as
  /// check_backend() does, and JobError naming the missing ranks' count when they do not all join
  /// within `options.rendezvous_timeout_s`, or when the store cannot be served or reached.
  DataParallelGroup(const runner::DistributedOptions& options, const c10::Device& device);
  ~DataParallelGroup();
  DataParallelGroup(const DataParallelGroup&) = delete;
  DataParallelGroup& operator=(const DataParallelGroup&) = delete;
  DataParallelGroup(DataParallelGroup&&) = delete;
  DataParallelGroup& operator=(DataParallelGroup&&) = delete;

  int rank() const;
  int world_size() const;
  /// The job's id, drawn by rank 0 and shared through the store: the same on every rank.
  const std::string& job_id() const;
  /// The backend's name ("gloo", "nccl").
  std::string backend() const;

  /// Replaces every tensor by its mean over the ranks, each rank's tensors multiplied by its
  /// `weight` first: one coalesced all-reduce of float32 tensors (all on the same device), then a
  /// division by the world size. `step` names the step in errors. Throws JobError when the
  /// collective fails or exceeds the collective timeout (a peer died or stalled).
  CollectiveCost average(const std::vector<at::Tensor>& tensors, int64_t step, double weight = 1.0);

  /// Keeps this rank's shard of every batch: rows [r*B/N, (r+1)*B/N) of each of its tensors, so
  /// that the job together trains on exactly the batches a single process would. Sets
  /// shard_weight().
  void shard(std::vector<Batch>& batches);

  /// This rank's rows per batch over B/N (1 until shard(), and when N divides B): the weight of
  /// its mean loss and gradient in average_step(), so uneven shards average to the whole batch's.
  double shard_weight() const;

  /// Waits until every rank has called it (the backend's barrier). `step` names the last step in
  /// errors. Throws JobError as average() does.
  void barrier(int64_t step);

  /// After backward, before clipping: averages the parameters' gradients and the step's three
  /// losses over the ranks, weighted by shard_weight(), in one collective. Every rank then clips and steps with the same
  /// gradients (identical parameters) and records the job's loss. A parameter without a gradient
  /// contributes zeros, so every rank's buffer has the same layout. `stop`, this rank's wish to
  /// stop after this step, travels in the same collective: the result's `stop` is every rank's
  /// answer, so the ranks stop together.
  CollectiveCost average_step(const std::vector<at::Tensor>& params, StepLosses& losses,
                              int64_t step, bool stop = false);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace recompdiag::trainer::detail
