#include "detail/extra_work.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace recompdiag::trainer::detail {

namespace {

constexpr int64_t kSkipSteps = 5;          // compile and profiling runs: not the healthy step
constexpr int64_t kCalibrationSteps = 10;  // timed to find the healthy step's median
constexpr int64_t kCheckSteps = 10;        // with the work, timed to correct the unit count
constexpr size_t kSize = 48;               // matrices are kSize x kSize doubles

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

ExtraWork::ExtraWork(double percent)
    : percent_(percent), x_(kSize * kSize), w_(kSize * kSize), tmp_(kSize * kSize) {
  // w's rows sum to one, so the chain's values stay bounded however long it runs.
  for (size_t i = 0; i < kSize; ++i) {
    for (size_t j = 0; j < kSize; ++j) {
      x_[i * kSize + j] = std::sin(static_cast<double>(i * kSize + j));
      w_[i * kSize + j] = (1.0 + static_cast<double>((i * 7 + j * 13) % 5)) / (3.0 * kSize);
    }
  }
}

ExtraWork::~ExtraWork() = default;

void ExtraWork::run_units(int64_t n) {
  for (int64_t u = 0; u < n; ++u) {
    // Rows split over LibTorch's intra-op threads, as an extra op of the step would be: work on
    // the main thread alone would let those threads fall asleep, and waking them would cost the
    // next step far more than the work itself.
    at::parallel_for(0, static_cast<int64_t>(kSize), 8, [&](int64_t begin, int64_t end) {
      for (auto i = static_cast<size_t>(begin); i < static_cast<size_t>(end); ++i) {
        for (size_t j = 0; j < kSize; ++j) {
          double s = 0.0;
          for (size_t k = 0; k < kSize; ++k) s += x_[i * kSize + k] * w_[k * kSize + j];
          tmp_[i * kSize + j] = s;
        }
      }
    });
    x_.swap(tmp_);  // the result feeds the next product: no product can be skipped
  }
  // Keep the result observable so the optimiser cannot drop the chain.
  volatile double sink = x_[0];
  (void)sink;
}

void ExtraWork::calibrate() {
  run_units(3);  // first-touch costs out of the timing
  std::vector<double> unit_ms;
  for (int r = 0; r < 15; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run_units(8);
    const auto t1 = std::chrono::steady_clock::now();
    unit_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() / 8.0);
  }
  const double unit = std::max(median_of(unit_ms), 1e-6);
  const double target_ms = percent_ / 100.0 * median_of(healthy_ms_);
  units_ = std::max<int64_t>(1, std::llround(target_ms / unit));
}

void ExtraWork::after_step(double step_ms) {
  const int64_t step = steps_seen_++;
  if (step < kSkipSteps) return;
  if (step < kSkipSteps + kCalibrationSteps) {
    healthy_ms_.push_back(step_ms);
    if (step + 1 == kSkipSteps + kCalibrationSteps) calibrate();
    return;
  }
  if (step >= kSkipSteps + kCalibrationSteps + kCheckSteps) {
    run_units(units_);
    return;
  }
  // The work's cost inside a run can differ from its cost in a tight loop: caches, and above all
  // the intra-op threads, which go to sleep while the work runs and must be woken by the next
  // step's parallel ops. So the count is corrected once against what the steps with the work
  // really take: this step's training time (slowed by the previous step's work) plus the work.
  const auto t0 = std::chrono::steady_clock::now();
  run_units(units_);
  const auto t1 = std::chrono::steady_clock::now();
  in_step_ms_.push_back(step_ms + std::chrono::duration<double, std::milli>(t1 - t0).count());
  if (step + 1 == kSkipSteps + kCalibrationSteps + kCheckSteps) {
    const double healthy = median_of(healthy_ms_);
    const double target_ms = percent_ / 100.0 * healthy;
    const double actual_ms = median_of(in_step_ms_) - healthy;
    // A noisy machine can hide or inflate the cost; never scale by more than 4x either way.
    const double scale = std::clamp(target_ms / std::max(actual_ms, 1e-9), 0.25, 4.0);
    units_ = std::max<int64_t>(1, std::llround(static_cast<double>(units_) * scale));
  }
}

}  // namespace recompdiag::trainer::detail
