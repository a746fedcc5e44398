#include "recompdiag/probes/overhead.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "recompdiag/core/run_io.h"
#include "recompdiag/probes/comm_probe.h"
#include "recompdiag/probes/dispatcher_probe.h"

namespace recompdiag::probes {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Thread CPU time, not wall time: the figure is the observer's work, which
// other processes on a busy machine would otherwise drown.
double thread_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double ns_per_op(at::Tensor& t, int64_t ops) {
  const double start = thread_ns();
  const at::Tensor one = at::ones({1});
  for (int64_t i = 0; i < ops; ++i) t.add_(one);
  return (thread_ns() - start) / static_cast<double>(ops);
}

}  // namespace

ObserverCost measure_observer_cost(int64_t ops_per_round, int rounds) {
  ObserverCost out;
  out.ops_per_round = std::max<int64_t>(1, ops_per_round);
  out.rounds = std::max(1, rounds);
  at::Tensor t = at::zeros({1});
  std::vector<double> off, on, on_plain;
  ns_per_op(t, out.ops_per_round / 10 + 1);  // warm up
  for (int r = 0; r < out.rounds; ++r) {
    off.push_back(ns_per_op(t, out.ops_per_round));
    {
      DispatcherProbe probe;
      probe.begin_step(0);
      on.push_back(ns_per_op(t, out.ops_per_round));
      out.ops_observed_on += probe.end_step().ops;
    }
    {
      DispatcherOptions options;
      options.signatures = false;
      DispatcherProbe probe(options);
      probe.begin_step(0);
      on_plain.push_back(ns_per_op(t, out.ops_per_round));
      out.ops_observed_on_no_signatures += probe.end_step().ops;
    }
  }
  out.ns_per_op_off = median(off);
  out.ns_per_op_on = median(on);
  out.ns_per_op_on_no_signatures = median(on_plain);
  out.added_ns_per_op = out.ns_per_op_on - out.ns_per_op_off;
  return out;
}

CommProbeCost measure_comm_probe_cost(int64_t steps_per_round, int rounds) {
  CommProbeCost out;
  out.steps_per_round = std::max<int64_t>(1, steps_per_round);
  out.rounds = std::max(1, rounds);
  CommProbe probe;
  StepRecord record;
  record.head_losses = {0.5, 0.25};
  record.loss_weights = {0.7, 0.3};
  std::string line;
  volatile double sink = 0.0;  // keeps the timed work from being optimised away
  auto probe_round = [&] {
    const double start = thread_ns();
    for (int64_t i = 0; i < out.steps_per_round; ++i) {
      probe.begin_step({});
      const auto t0 = std::chrono::steady_clock::now();  // as the group times its all-reduce
      const auto t1 = std::chrono::steady_clock::now();
      probe.record_collective(4096, std::chrono::duration<double, std::milli>(t1 - t0).count());
      probe.end_step(record);
      sink = sink + record.comm->wait_ms;
    }
    return (thread_ns() - start) / static_cast<double>(out.steps_per_round);
  };
  auto write_round = [&](bool with_comm) {
    if (with_comm) {
      record.comm = CommStats{1, 4096, 0.125};
    } else {
      record.comm.reset();
    }
    const double start = thread_ns();
    for (int64_t i = 0; i < out.steps_per_round; ++i) {
      line.clear();
      append_json(line, record);
      sink = sink + static_cast<double>(line.size());
    }
    return (thread_ns() - start) / static_cast<double>(out.steps_per_round);
  };
  probe_round();  // warm up
  std::vector<double> probe_ns, write_ns;
  for (int r = 0; r < out.rounds; ++r) {
    probe_ns.push_back(probe_round());
    const double with = write_round(true);
    const size_t with_bytes = line.size();
    const double without = write_round(false);
    write_ns.push_back(with - without);
    out.line_bytes = static_cast<int64_t>(with_bytes) - static_cast<int64_t>(line.size());
  }
  out.probe_ns = median(probe_ns);
  out.write_ns = median(write_ns);
  return out;
}

}  // namespace recompdiag::probes
