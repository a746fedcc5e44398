#pragma once
/// \file
/// The run-to-run spread of this machine, measured (`recompdiag bench noise`): healthy runs of one
/// config, each in a fresh child process, one after the other (as independent runs of a CI are),
/// summarised as a noise profile that `compare --noise-profile` reads.
///
///     NoiseBenchOptions options;
///     options.runs = 5;
///     options.out_dir = "noise-runs";
///     NoiseProfile profile = run_noise_bench(options);
///     write_noise_profile(profile, "noise.json");

#include <string>

#include "recompdiag/core/noise_profile.h"
#include "recompdiag/trainer/config.h"

namespace recompdiag::trainer {

/// Settings of run_noise_bench(). Plain data.
struct NoiseBenchOptions {
  /// The config whose spread is measured: the one the gate will compare (default: the scenario).
  TrainConfig config;
  /// Healthy runs, at least 3; the spread's own uncertainty falls with more (its degrees of
  /// freedom are runs - 1, which compare's t reference uses).
  int runs = 5;
  /// Where the run files go (created): DIR/noise-1.jsonl, ...
  std::string out_dir = "recompdiag-noise";
  bool quiet = false;  ///< No progress line per run.

  /// Throws InputError for the first invalid value.
  void validate() const;
};

/// Trains the runs and measures their profile. Forks one child per run (LibTorch is not touched
/// in this process). Throws InputError for invalid options or a run that fails.
NoiseProfile run_noise_bench(const NoiseBenchOptions& options);

}  // namespace recompdiag::trainer
