#pragma once
/// \file
/// Micro-benchmarks of the probes whose cost is too small to see in step medians: what observing
/// one ATen op costs the dispatcher probe, and what the `comm` probe costs a data-parallel step.
/// For `recompdiag bench overhead` and the benchmark output (the whole-step ratio is the trainer's).

#include <cstdint>

namespace recompdiag::probes {

/// Median thread-CPU nanoseconds per small CPU op (an in-place add of two 1-element tensors, which
/// runs no nested dispatcher op) over interleaved rounds: without the observer, with it (signatures
/// on), and with it without signatures.
struct ObserverCost {
  int64_t ops_per_round = 0;
  int rounds = 0;
  double ns_per_op_off = 0.0;
  double ns_per_op_on = 0.0;
  double ns_per_op_on_no_signatures = 0.0;
  /// ns_per_op_on - ns_per_op_off.
  double added_ns_per_op = 0.0;
  /// Ops the probe counted over all "on" rounds, and over all "on without signatures" rounds: at
  /// least rounds * ops_per_round each when the observer really ran (0 when it was unavailable).
  int64_t ops_observed_on = 0;
  int64_t ops_observed_on_no_signatures = 0;
};

/// Runs the micro-benchmark on the calling thread (about rounds * 3 * ops_per_round ops). Creates
/// and destroys dispatcher probes: do not call while a Monitor is alive (its probe would make these
/// unavailable; then the "on" figures equal the "off" ones and nothing is observed).
ObserverCost measure_observer_cost(int64_t ops_per_round = 200000, int rounds = 7);

/// Median thread-CPU nanoseconds per step of the `comm` probe's work over interleaved rounds:
/// `probe_ns`, its hot path in a step with one all-reduce (begin_step, the two clock reads that
/// time the collective, record_collective, end_step); `write_ns`, what its section adds to the
/// step's run-file line (appending a step record with the section minus one without).
struct CommProbeCost {
  int64_t steps_per_round = 0;
  int rounds = 0;
  double probe_ns = 0.0;
  double write_ns = 0.0;
  /// Bytes the section adds to each step line.
  int64_t line_bytes = 0;
};

/// Runs the micro-benchmark on the calling thread (about rounds * 3 * steps_per_round steps of
/// work, no LibTorch op). Thread-safe: touches nothing shared.
CommProbeCost measure_comm_probe_cost(int64_t steps_per_round = 200000, int rounds = 7);

}  // namespace recompdiag::probes
