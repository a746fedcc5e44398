#pragma once
// The `extra-work=P` fault: real computation (a chain of small matrix products on the host, not a
// sleep) inside the timed step, sized to cost about P percent of the healthy step. Private to the
// trainer; trainer.cpp calls after_step() once per step, inside the step's timing. Plain C++ run
// on LibTorch's intra-op threads (at::parallel_for), not LibTorch ops: the fault adds time, not
// op signatures or dispatcher events that would give it away to the probes.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace recompdiag::trainer::detail {

/// Units of work that cost `percent` of a step when one unit costs `unit_share` of the step's
/// training time: round(percent / 100 / unit_share), at least 1. Pure.
int64_t extra_work_units(double percent, double unit_share);

/// The count that a window of steps with the work asks for: extra_work_units() of the window's
/// median unit share, moved at most 2x either way from `current` (>= 1), so that a window spoilt
/// by a compile or a burst of load cannot throw the work far off. Pure.
int64_t corrected_extra_work_units(int64_t current, double percent, double unit_share);

/// Median of `v` (0 when empty). Pure.
double median_of(std::vector<double> v);

/// Sizes itself on the run's own steps and keeps the work at P percent of the step's training.
///
/// Steps 0-2 (the compile and its profiling runs) are left alone. At step 3 one unit of work (a
/// 48x48 double matrix product, its rows split over the intra-op threads) is timed in a short
/// loop, and that step's training time over it gives a first count. From step 3 on every step
/// runs the work, timed, and records the unit share: the work's time over the count, over the same
/// step's training time. Every 5 steps the count becomes P/100 over the median share of the last
/// 30 steps, moved 2x at most. A share is measured within one step, so a machine that slows down
/// or speeds up moves its two times alike, and the count follows the step's own time in each
/// phase. (A count fixed once against steps 5-14 missed by up to 2x: those steps are warm-up, the
/// dispatcher probe observing every step, and one median of 10 steps on a shared machine is
/// noisy; and the 10 healthy steps it set aside counted in a short phase's steady state.) The
/// work is a fixed amount of computation between corrections, so it slows down and speeds up with
/// the machine as the step does: a real regression, not a fixed delay. On a CUDA model the work
/// still runs on the host, after the step's loss read. Not thread-safe; neither copyable nor
/// movable.
class ExtraWork {
 public:
  /// `percent` of the healthy step time to add; > 0.
  explicit ExtraWork(double percent);
  ~ExtraWork();
  ExtraWork(const ExtraWork&) = delete;
  ExtraWork& operator=(const ExtraWork&) = delete;
  ExtraWork(ExtraWork&&) = delete;
  ExtraWork& operator=(ExtraWork&&) = delete;

  /// Called once per step, inside its timing, after the training work that took `step_ms`.
  void after_step(double step_ms);

  /// Units of work each step runs once sized (0 before step 3).
  int64_t units() const { return units_; }

 private:
  double unit_ms_in_loop();
  void run_units(int64_t n);

  double percent_;
  int64_t steps_seen_ = 0;
  int64_t units_ = 0;
  std::vector<double> unit_share_;  // the last 30 steps' unit shares, a ring
  size_t next_share_ = 0;           // where the ring's next share goes
  std::vector<double> x_;           // the chain's state: each product's result feeds the next
  std::vector<double> w_;
  std::vector<double> tmp_;
};

}  // namespace recompdiag::trainer::detail
