#pragma once
/// \file
/// Change points of step-time series found by Apache Otava (formerly Hunter, from MongoDB's
/// E-divisive: Fleming et al., ICPE 2023, https://doi.org/10.1145/3578244.3583719): the existing
/// engine, not a detector written here. Otava is Python (`pip install apache-otava`); this runs
/// its `otava.analysis.compute_change_points` in a Python interpreter of the user's choosing, one
/// process for every series of a check.
///
///     OtavaOptions o;
///     o.python = "/opt/venv/bin/python";
///     const OtavaResult r = otava_change_points({{10, 10.2, 12.5, 12.4}}, o);
///     // r.change_points[0]: the first index of each new level

#include <cstddef>
#include <string>
#include <vector>

namespace recompdiag::runner {

/// Settings of otava_change_points(). Plain data.
struct OtavaOptions {
  /// The interpreter that has Apache Otava: a path, or a name looked up beside the running
  /// executable (a pip-installed recompdiag's environment), then on PATH.
  std::string python = "python3";
  /// Otava's significance level (its `max_pvalue`; its CLI's default is 0.001).
  double max_pvalue = 0.001;
  /// Otava's sliding window, in points.
  int window_len = 50;
  /// Otava's `min_magnitude`: a change point smaller than this relative change is merged away.
  double min_magnitude = 0.0;

  /// Throws InputError naming the flag (`min_magnitude`, which has none: the field) for an empty
  /// interpreter, a `max_pvalue` outside (0, 1), a window of fewer than 3 points or a negative
  /// `min_magnitude`. otava_change_points() and
  /// HistoryCheckOptions::validate() call it.
  void validate() const;
};

/// What Otava found.
struct OtavaResult {
  std::string version;  ///< apache-otava's, as the interpreter has it.
  /// Per series, the indexes of its change points (ascending: the first point of each new level).
  std::vector<std::vector<size_t>> change_points;
};

/// Each series' change points, as Otava finds them (a series of fewer than 3 points has none).
/// Throws InputError (one line) when `options.validate()` does, or the interpreter cannot be run or
/// has no Otava, IoError when it fails otherwise.
OtavaResult otava_change_points(const std::vector<std::vector<double>>& series,
                                const OtavaOptions& options);

}  // namespace recompdiag::runner
