#pragma once
/// \file
/// A noise profile: how far apart healthy runs of one config land on this machine, measured
/// from runs instead of assumed. `compare` needs it to judge one independent run per side (a
/// block bootstrap within a run cannot see the shift between runs); `recompdiag bench noise`
/// writes one.
///
///     std::vector<ColumnarRun> runs = {read_columnar_run("h1.jsonl"), read_columnar_run("h2.jsonl"),
///                                      read_columnar_run("h3.jsonl")};
///     NoiseProfile profile = measure_noise_profile(runs);
///     write_noise_profile(profile, "noise.json");
///     CompareOptions options;
///     apply_noise_profile(read_noise_profile("noise.json"), "noise.json", options);

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/step_columns.h"

namespace recompdiag {

/// The run-to-run spread of one phase's steady median.
struct PhaseNoise {
  int phase = 1;
  /// Standard deviation of log(steady median) across the runs: 0.05 is about 5%.
  double spread = 0.0;
  /// Each run's steady median, in the order measured.
  std::vector<double> medians_ms;
};

/// What measure_noise_profile() found. Plain data.
struct NoiseProfile {
  static constexpr int kSchema = 1;
  /// The spread compare uses: the largest phase's (a phase measured less precisely counts).
  double run_noise = 0.0;
  /// Degrees of freedom of that estimate (runs - 1): compare judges against t with this many.
  int64_t degrees_of_freedom = 0;
  int64_t runs = 0;
  std::vector<PhaseNoise> phases;
  std::string host;          ///< Of the first run.
  std::string tool_version;  ///< Of the first run.
  nlohmann::json config;     ///< The runs' config (they share it; seeds may differ).
  std::vector<std::string> paths;

  nlohmann::json to_json() const;
};

/// Measures the spread from healthy runs of one config that ran independently (one after the
/// other, not taking turns). Throws InputError naming the file when there are fewer than three
/// runs, a run has no steady steps in a phase the first has, or the runs' configs differ (seeds
/// aside).
NoiseProfile measure_noise_profile(const std::vector<ColumnarRun>& runs,
                                   const AnalysisOptions& analysis = {});

/// Writes the profile as JSON (atomically: a temporary file, then rename). Throws IoError.
void write_noise_profile(const NoiseProfile& profile, const std::string& path);

/// Reads a profile written by write_noise_profile(). Throws InputError naming the file for a
/// missing file, bad JSON, another schema or a spread outside [0, 1).
NoiseProfile read_noise_profile(const std::string& path);

/// Sets `options.run_noise`, its degrees of freedom and its source ("noise profile PATH: N runs
/// on HOST") from `profile`.
void apply_noise_profile(const NoiseProfile& profile, const std::string& path,
                         CompareOptions& options);

}  // namespace recompdiag
