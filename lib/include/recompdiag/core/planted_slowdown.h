#pragma once
/// \file
/// A planted slowdown: busy work added to every step of a run, a given share of its median step,
/// so that `recompdiag calibrate` can measure how often the gate finds a slowdown of that size on
/// the user's own job, on the user's own runner, without a line of the user's code changed. The
/// Monitor (and so RunRecorder, the Python Monitor and the trainer) adds it when the environment
/// says RECOMPDIAG_PLANT_SLOWDOWN=PCT. Torch-free; the work is plain arithmetic on the host.
///
///     std::optional<double> pct = planted_slowdown_from_environment();  // 10 for "10"
///     PlantedSlowdown plant(*pct);
///     // at each step's end, inside its timing:
///     plant.after_step(step_ms);

#include <cstdint>
#include <optional>
#include <vector>

namespace recompdiag {

/// The variable `recompdiag calibrate` sets for the side it slows down: a percentage in (0, 200].
inline constexpr char kPlantSlowdownVar[] = "RECOMPDIAG_PLANT_SLOWDOWN";

/// The percentage the environment asks for, or nullopt when kPlantSlowdownVar is unset or empty.
/// Throws InputError (one line naming the variable) for anything but a number in (0, 200].
std::optional<double> planted_slowdown_from_environment();

/// Busy work of `percent` of the median of a run's recent steps, added at each step's end.
///
/// The first kSkipSteps steps (a compile, its warm-up) get none. From then on each step runs
/// units of a fixed computation (dependent floating-point multiply-adds): as many as `percent` of
/// the median of the last kWindow steps' own times (without the work) takes, at the rate the
/// units ran at recently. So the work is a fixed amount of computation that slows down and speeds
/// up with the machine, as a real regression does, and it follows the step's own time. Not
/// thread-safe; call from the training thread.
class PlantedSlowdown {
 public:
  static constexpr int64_t kSkipSteps = 3;
  static constexpr size_t kWindow = 31;

  /// `percent` in (0, 200]; throws InputError otherwise.
  explicit PlantedSlowdown(double percent);

  /// At a step's end, inside its timing: runs this step's work. `step_ms` is the step's own time
  /// so far. Returns the work's milliseconds (0 on the skipped steps).
  double after_step(double step_ms);

  double percent() const { return percent_; }
  /// The median of the recent steps' own times the work is sized on (0 before any).
  double median_step_ms() const;

  /// The units of work that take `percent` of `median_step_ms` at `ms_per_unit`: what each step
  /// runs. Pure.
  static int64_t units_for(double percent, double median_step_ms, double ms_per_unit);

 private:
  double run_units(int64_t units);
  double percent_;
  int64_t steps_ = 0;
  std::vector<double> recent_;  // the last kWindow steps' own times, ms
  size_t next_ = 0;
  double ms_per_unit_ = 0.0;    // measured, an average over recent runs
  volatile double sink_ = 0.0;  // keeps the work from being optimized away
};

}  // namespace recompdiag
