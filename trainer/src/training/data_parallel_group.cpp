// The one translation unit that includes c10d: rendezvous, the Gloo (or NCCL) process group and
// the gradient all-reduce. Compiled with USE_C10D_GLOO, and USE_C10D_NCCL where this LibTorch has
// NCCL (see trainer/CMakeLists.txt).

#include "training/data_parallel_group.h"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "detail/torch_compat.h"
#include "recompdiag/core/error.h"
#include "recompdiag/probes/dispatcher_probe.h"
#include "recompdiag/torch_features.h"
#if RECOMPDIAG_HAVE_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace recompdiag::trainer {

bool nccl_available() { return RECOMPDIAG_HAVE_NCCL != 0; }
std::string why_no_nccl() { return RECOMPDIAG_WHY_NO_NCCL; }

}  // namespace recompdiag::trainer

namespace recompdiag::trainer::detail {

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kJoinedKey[] = "recompdiag/joined";
constexpr char kJobIdKey[] = "recompdiag/job_id";

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
}

/// c10d's messages carry a C++ backtrace after the first line.
std::string first_line(const std::exception& e) {
  const std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

std::string draw_job_id() {
  std::random_device rd;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

}  // namespace

struct DataParallelGroup::Impl {
  runner::DistributedOptions options;
  std::string where;  // "rank 1 of 4"
  std::string job_id;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;  // the group: Gloo's, or
#if RECOMPDIAG_HAVE_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;  // NCCL's (--dist-backend nccl)
#endif
  /// This rank's rows over the mean rows per rank (shard()): 1 when the batch divides evenly.
  double shard_weight = 1.0;

  JobError error(const std::string& what) const { return JobError(where + ": " + what); }

  /// Where the ranks meet, for messages: "127.0.0.1:29500" or "file /tmp/x/store".
  std::string rendezvous() const {
    const runner::DistributedOptions& o = options;
    return o.store_file.empty() ? o.master_addr + ":" + std::to_string(o.master_port)
                                : "file " + o.store_file;
  }

  void connect() {
    const runner::DistributedOptions& o = options;
    if (!o.store_file.empty()) {
      // A local job: no server, no port, nothing another process can take first.
      try {
        store = c10::make_intrusive<c10d::FileStore>(o.store_file, o.world_size);
        store->setTimeout(to_ms(o.rendezvous_timeout_s));
      } catch (const std::exception& e) {
        throw error("cannot open the rendezvous " + rendezvous() + ": " + first_line(e));
      }
      return;
    }
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(o.master_port);
    so.isServer = o.rank == 0;
    so.numWorkers = static_cast<std::size_t>(o.world_size);
    so.waitWorkers = false;  // the join below waits, with a message that says who is missing
    so.timeout = to_ms(o.rendezvous_timeout_s);
    const std::string addr = o.master_addr.size() > 2 && o.master_addr.front() == '['
                                 ? o.master_addr.substr(1, o.master_addr.size() - 2)
                                 : o.master_addr;
    try {
      store = c10::make_intrusive<c10d::TCPStore>(addr, so);
    } catch (const std::exception& e) {
      throw error(std::string(o.rank == 0 ? "cannot serve" : "cannot reach") +
                  " the rendezvous store at " + o.master_addr + ":" +
                  std::to_string(o.master_port) + " within " +
                  seconds_text(o.rendezvous_timeout_s) + ": " + first_line(e));
    }
  }

  /// Every rank counts itself in, then waits for the count to reach the world size: a rank that
  /// never comes is named by the count, within the rendezvous timeout.
  void join() {
    const runner::DistributedOptions& o = options;
    const auto deadline = Clock::now() + to_ms(o.rendezvous_timeout_s);
    try {
      if (o.rank == 0) store->set(kJobIdKey, std::vector<uint8_t>(job_id.begin(), job_id.end()));
      int64_t joined = store->add(kJoinedKey, 1);
      while (joined < o.world_size) {
        if (Clock::now() >= deadline) {
          throw error("rendezvous at " + rendezvous() + " timed out after " +
                      seconds_text(o.rendezvous_timeout_s) + ": " + std::to_string(joined) +
                      " of " + std::to_string(o.world_size) + " ranks joined (" +
                      std::to_string(o.world_size - joined) + " never came)");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        joined = store->add(kJoinedKey, 0);
      }
      if (o.rank != 0) {
        const std::vector<uint8_t> id = store->get(kJobIdKey);
        job_id.assign(id.begin(), id.end());
      }
    } catch (const JobError&) {
      throw;
    } catch (const std::exception& e) {
      if (!o.store_file.empty()) {
        throw error("rendezvous at " + rendezvous() + " failed: " + first_line(e));
      }
      // The store itself failed: rank 0, its server, left (it timed out or failed first).
      throw error("rendezvous at " + rendezvous() + " failed: rank 0, which serves the store, " +
                  "left before all " + std::to_string(o.world_size) + " ranks joined (" +
                  first_line(e) + ")");
    }
  }

  void make_group() {
#if RECOMPDIAG_HAVE_NCCL
    if (options.backend == "nccl") {
      auto opts = c10d::ProcessGroupNCCL::Options::create();
      opts->timeout = to_ms(options.collective_timeout_s);
      try {
        nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, options.rank, options.world_size,
                                                           opts);
      } catch (const std::exception& e) {
        throw error("cannot connect the NCCL group: " + first_line(e));
      }
      return;
    }
#endif
    make_gloo_group();
  }

  void make_gloo_group() {
    const runner::DistributedOptions& o = options;
    auto gloo_options = c10d::ProcessGroupGloo::Options::create(to_ms(o.collective_timeout_s));
    // Local jobs talk over loopback; a job across machines binds to the interface the launcher
    // named (GLOO_SOCKET_IFNAME), else to the address this host's name resolves to.
    try {
      gloo_options->devices.push_back(
          !o.socket_ifname.empty()
              ? c10d::ProcessGroupGloo::createDeviceForInterface(o.socket_ifname)
          : o.loopback() ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                         : c10d::ProcessGroupGloo::createDefaultDevice());
    } catch (const std::exception& e) {
      throw error("cannot open a Gloo device" +
                  (o.socket_ifname.empty() ? std::string() : " on " + o.socket_ifname) + ": " +
                  first_line(e));
    }
    gloo_options->threads = 1;  // one collective at a time; the cores belong to training
    try {
      gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(store, o.rank, o.world_size, gloo_options);
    } catch (const std::exception& e) {
      throw error("cannot connect the Gloo group: " + first_line(e));
    }
  }

  // The collectives, on the group the job runs.
  void allreduce(std::vector<at::Tensor>& buffer) {
#if RECOMPDIAG_HAVE_NCCL
    if (nccl) {
      nccl->allreduce(buffer)->wait();
      return;
    }
#endif
    gloo->allreduce(buffer)->wait();
  }
  void barrier() {
#if RECOMPDIAG_HAVE_NCCL
    if (nccl) {
      nccl->barrier()->wait();
      return;
    }
#endif
    gloo->barrier()->wait();
  }
  std::string backend() const {
#if RECOMPDIAG_HAVE_NCCL
    if (nccl) return nccl->getBackendName();
#endif
    return gloo->getBackendName();
  }
};

DataParallelGroup::DataParallelGroup(const runner::DistributedOptions& options,
                                     const c10::Device& device)
    : impl_(std::make_unique<Impl>()) {
  options.validate();
  check_backend(options, device.str());
  Impl& m = *impl_;
  m.options = options;
  m.where = "rank " + std::to_string(options.rank) + " of " + std::to_string(options.world_size);
  if (options.rank == 0) m.job_id = draw_job_id();
  // c10d logs its socket errors in several lines; every failure here becomes one JobError line
  // instead (the CLI's contract), so LibTorch's logging keeps quiet below fatal.
  quiet_torch_logging();
  m.connect();
  m.join();
  m.make_group();
}

DataParallelGroup::~DataParallelGroup() = default;

int DataParallelGroup::rank() const { return impl_->options.rank; }
int DataParallelGroup::world_size() const { return impl_->options.world_size; }
const std::string& DataParallelGroup::job_id() const { return impl_->job_id; }
std::string DataParallelGroup::backend() const { return impl_->backend(); }
double DataParallelGroup::shard_weight() const { return impl_->shard_weight; }

void DataParallelGroup::barrier(int64_t step) {
  Impl& m = *impl_;
  try {
    m.barrier();
  } catch (const std::exception& e) {
    throw m.error("barrier after step " + std::to_string(step) + " failed (a peer rank died or " +
                  "stalled beyond the collective timeout of " +
                  seconds_text(m.options.collective_timeout_s) + "): " + first_line(e));
  }
}

CollectiveCost DataParallelGroup::average(const std::vector<at::Tensor>& tensors, int64_t step,
                                          double weight) {
  Impl& m = *impl_;
  CollectiveCost cost;
  if (tensors.empty()) return cost;
  torch::NoGradGuard no_grad;
  // One flat buffer: one collective per step instead of one per tensor.
  std::vector<torch::Tensor> flat_parts;
  flat_parts.reserve(tensors.size());
  for (const torch::Tensor& t : tensors) flat_parts.push_back(t.reshape({-1}));
  std::vector<torch::Tensor> buffer{torch::cat(flat_parts)};
  cost.bytes = buffer[0].numel() * static_cast<int64_t>(buffer[0].element_size());
  if (weight != 1.0) buffer[0].mul_(weight);
  const auto t0 = Clock::now();
  try {
    m.allreduce(buffer);
  } catch (const std::exception& e) {
    throw m.error("all-reduce of step " + std::to_string(step) + " failed (a peer rank died or " +
                  "stalled beyond the collective timeout of " +
                  seconds_text(m.options.collective_timeout_s) + "): " + first_line(e));
  }
  cost.wait_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  buffer[0].div_(m.options.world_size);
  int64_t offset = 0;
  for (const torch::Tensor& t : tensors) {
    const int64_t n = t.numel();
    t.copy_(buffer[0].narrow(0, offset, n).view_as(t));
    offset += n;
  }
  return cost;
}

void DataParallelGroup::shard(std::vector<Batch>& batches) {
  const int64_t n = impl_->options.world_size;
  const int64_t r = impl_->options.rank;
  for (Batch& b : batches) {
    const int64_t rows = b.x.size(0);
    const int64_t begin = rows * r / n;
    const int64_t end = rows * (r + 1) / n;
    // The batch's loss is the mean over its rows: a rank's share of it is its rows over all.
    impl_->shard_weight = static_cast<double>((end - begin) * n) / static_cast<double>(rows);
    for (torch::Tensor* t : {&b.x, &b.y_cat, &b.y_bin, &b.sample_weight}) {
      *t = t->narrow(0, begin, end - begin).contiguous();
    }
  }
}

CollectiveCost DataParallelGroup::average_step(const std::vector<at::Tensor>& params,
                                               StepLosses& losses, int64_t step, bool stop) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  parts.reserve(params.size() + 1);
  for (const torch::Tensor& p : params) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    parts.push_back(p.grad());
  }
  // The three losses and this rank's stop request (0 or 1: any rank's makes the mean positive).
  torch::Tensor loss_values =
      torch::stack({losses.loss.detach(), losses.cat_loss.detach(), losses.bin_loss.detach(),
                    torch::full({}, stop ? 1.0f : 0.0f, losses.loss.options())});
  parts.push_back(loss_values);
  // Uneven shards (batch size not a multiple of the world size): each rank's mean loss and
  // gradient count in proportion to its rows, so the job's are exactly the whole batch's.
  CollectiveCost cost = average(parts, step, impl_->shard_weight);
  losses.loss = loss_values[0];
  losses.cat_loss = loss_values[1];
  losses.bin_loss = loss_values[2];
  if (loss_values.is_cpu()) {
    cost.stop = loss_values.data_ptr<float>()[3] > 0.0f;  // no op: no host sync to count
  } else {
    // Marked as the recorder's own read, which the probes tell from the training's syncs.
    RECORD_USER_SCOPE(probes::kRecorderReadScope);
    const probes::RecorderRead recorder_read;
    cost.stop = loss_values[3].item<float>() > 0.0f;
  }
  return cost;
}

}  // namespace recompdiag::trainer::detail
