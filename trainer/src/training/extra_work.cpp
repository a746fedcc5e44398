#include "training/extra_work.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

namespace recompdiag::trainer::detail {

namespace {

constexpr int64_t kSkipSteps = 3;     // the compile and its profiling runs: far from a step's time
constexpr int64_t kCorrectEvery = 5;  // steps with the work between corrections of the count
constexpr size_t kShareWindow = 30;   // unit shares a correction takes the median of
constexpr size_t kSize = 48;          // matrices are kSize x kSize doubles

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int64_t extra_work_units(double percent, double unit_share) {
  const double units = percent / 100.0 / std::max(unit_share, 1e-9);
  return std::max<int64_t>(1, std::llround(std::min(units, 1e9)));
}

int64_t corrected_extra_work_units(int64_t current, double percent, double unit_share) {
  const int64_t now = std::max<int64_t>(1, current);
  return std::clamp(extra_work_units(percent, unit_share), std::max<int64_t>(1, now / 2), now * 2);
}

ExtraWork::ExtraWork(double percent)
    : percent_(percent), x_(kSize * kSize), w_(kSize * kSize), tmp_(kSize * kSize) {
  // w's rows sum to one, so the chain's values stay bounded however long it runs.
  for (size_t i = 0; i < kSize; ++i) {
    for (size_t j = 0; j < kSize; ++j) {
      x_[i * kSize + j] = std::sin(static_cast<double>(i * kSize + j));
      w_[i * kSize + j] = (1.0 + static_cast<double>((i * 7 + j * 13) % 5)) / (3.0 * kSize);
    }
  }
  unit_share_.reserve(kShareWindow);
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

double ExtraWork::unit_ms_in_loop() {
  // Short, as it runs inside a step's timing: the corrections do the precise part.
  run_units(2);  // first-touch costs out of the timing
  std::vector<double> unit_ms;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = Clock::now();
    run_units(4);
    unit_ms.push_back(ms_since(t0) / 4.0);
  }
  return median_of(std::move(unit_ms));
}

void ExtraWork::after_step(double step_ms) {
  const int64_t step = steps_seen_++;
  if (step < kSkipSteps) return;
  if (step == kSkipSteps) {
    // A first guess from this step's own training: the corrections measure the unit's cost as it
    // runs inside the steps. No healthy steps are set aside: in a short phase, steps without the
    // work would count in the steady state and hide part of the cost.
    units_ = extra_work_units(percent_, unit_ms_in_loop() / std::max(step_ms, 1e-6));
  }
  const auto t0 = Clock::now();
  run_units(units_);
  // The share is taken within the step: its training and its work ran under the same load. The
  // training time already holds what the previous step's work cost it (waking the intra-op
  // threads): measured here at 0 +- 2% of the step, too small to correct for.
  const double share = ms_since(t0) / static_cast<double>(units_) / std::max(step_ms, 1e-6);
  if (unit_share_.size() < kShareWindow) {
    unit_share_.push_back(share);
  } else {
    unit_share_[next_share_] = share;
  }
  next_share_ = (next_share_ + 1) % kShareWindow;
  if ((step + 1 - kSkipSteps) % kCorrectEvery == 0) {
    units_ = corrected_extra_work_units(units_, percent_, median_of(unit_share_));
  }
}

}  // namespace recompdiag::trainer::detail
