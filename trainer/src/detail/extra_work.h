#pragma once
// The `extra-work=P` fault: real computation (a chain of small matrix products on the host, not a
// sleep) inside the timed step, sized to cost about P percent of the healthy step. Private to the
// trainer; trainer.cpp calls after_step() once per step, inside the step's timing. Plain C++ run
// on LibTorch's intra-op threads (at::parallel_for), not LibTorch ops: the fault adds time, not
// op signatures or dispatcher events that would give it away to the probes.

#include <cstdint>
#include <vector>

namespace recompdiag::trainer::detail {

/// Calibrates itself on the run's own steps, then adds the same amount of work to every step.
///
/// Steps 0-4 (compile, profiling runs) are left alone; steps 5-14 are timed without extra work
/// and their median is the healthy step time. Then one unit of work (a 48x48 double matrix
/// product, its rows split over the intra-op threads) is timed, and steps 15-24 run round(P/100 x median / unit) units; what those steps
/// take over the healthy median (the work, plus the training slowed by it: the intra-op threads
/// fall asleep during the work) corrects the count once, at most 4x either way. From step 25 on the work is a fixed amount of
/// computation, so it slows down and speeds up with the machine as the step does: a real
/// regression, not a fixed delay. On a CUDA model the work still runs on
/// the host, after the step's loss read. Not thread-safe; neither copyable nor movable.
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

  /// Units of work each step runs once calibrated (0 before).
  int64_t units() const { return units_; }

 private:
  void calibrate();
  void run_units(int64_t n);

  double percent_;
  int64_t steps_seen_ = 0;
  int64_t units_ = 0;
  std::vector<double> healthy_ms_;
  std::vector<double> in_step_ms_;  // steps 15-24: training plus the work
  std::vector<double> x_;           // the chain's state: each product's result feeds the next
  std::vector<double> w_;
  std::vector<double> tmp_;
};

}  // namespace recompdiag::trainer::detail
