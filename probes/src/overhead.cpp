#include "recompdiag/probes/overhead.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <ctime>
#include <vector>

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

}  // namespace recompdiag::probes
