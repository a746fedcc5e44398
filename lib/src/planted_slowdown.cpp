// The planted slowdown of `recompdiag calibrate` (planted_slowdown.h).
#include "recompdiag/core/planted_slowdown.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include "recompdiag/core/error.h"

namespace recompdiag {

namespace {

constexpr int kOpsPerUnit = 256;  // a unit is about a microsecond on a current core

}  // namespace

std::optional<double> planted_slowdown_from_environment() {
  const char* value = std::getenv(kPlantSlowdownVar);
  if (value == nullptr || *value == '\0') return std::nullopt;
  char* end = nullptr;
  const double pct = std::strtod(value, &end);
  if (end == value || *end != '\0' || !(pct > 0.0 && pct <= 200.0)) {
    throw InputError(std::string(kPlantSlowdownVar) + " must be a percentage in (0, 200], got '" +
                     value + "'");
  }
  return pct;
}

PlantedSlowdown::PlantedSlowdown(double percent) : percent_(percent) {
  if (!(percent > 0.0 && percent <= 200.0)) {
    throw InputError("a planted slowdown must be a percentage in (0, 200], got " +
                     std::to_string(percent));
  }
  recent_.reserve(kWindow);
}

double PlantedSlowdown::run_units(int64_t units) {
  const auto t0 = std::chrono::steady_clock::now();
  double x = 1.0 + static_cast<double>(steps_ % 7) * 1e-9;
  for (int64_t u = 0; u < units; ++u) {
    for (int i = 0; i < kOpsPerUnit; ++i) x = x * 0.9999999 + 1e-7;
  }
  sink_ = sink_ + x;
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double PlantedSlowdown::median_step_ms() const {
  if (recent_.empty()) return 0.0;
  std::vector<double> sorted = recent_;
  const auto mid = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
  std::nth_element(sorted.begin(), mid, sorted.end());
  return *mid;
}

int64_t PlantedSlowdown::units_for(double percent, double median_step_ms, double ms_per_unit) {
  if (!(ms_per_unit > 0.0) || !(median_step_ms > 0.0)) return 0;
  return static_cast<int64_t>(percent / 100.0 * median_step_ms / ms_per_unit + 0.5);
}

double PlantedSlowdown::after_step(double step_ms) {
  const int64_t step = steps_++;
  if (step < kSkipSteps || !(step_ms > 0.0)) return 0.0;
  if (recent_.size() < kWindow) {
    recent_.push_back(step_ms);
  } else {
    recent_[next_] = step_ms;
    next_ = (next_ + 1) % kWindow;
  }
  if (ms_per_unit_ <= 0.0) {  // the first: the units' rate, from a short run
    ms_per_unit_ = run_units(1000) / 1000.0;
    if (!(ms_per_unit_ > 0.0)) ms_per_unit_ = 1e-3;
  }
  const int64_t units = units_for(percent_, median_step_ms(), ms_per_unit_);
  if (units <= 0) return 0.0;
  const double ms = run_units(units);
  // The rate follows the machine, slowly: one run's hiccup moves it a little.
  ms_per_unit_ = 0.8 * ms_per_unit_ + 0.2 * (ms / static_cast<double>(units));
  return ms;
}

}  // namespace recompdiag
