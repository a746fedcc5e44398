#pragma once
/// \file
/// The compare benchmark (`recompdiag bench compare`): how long reading, comparing and rendering
/// two synthetic runs of real run files takes, and the memory it holds. Torch-free, like
/// `compare` itself.
///
///     CompareBenchOptions options;
///     options.steps = 1000000;
///     CompareBenchResult result = run_compare_bench(options);
///     std::cout << result.to_json().dump(2);

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace recompdiag::runner {

/// Settings of run_compare_bench(). Plain data.
struct CompareBenchOptions {
  int64_t steps = 1000000;  ///< Steps per run (two phases, half each).
  std::string dir;          ///< Where the run files go; empty: a fresh temporary directory.
  bool keep = false;        ///< Keep the run files (removed otherwise).

  /// Throws InputError for the first invalid value.
  void validate() const;
};

/// What run_compare_bench() measured: seconds of each part, memory, and the targets of 2 x 1M
/// steps (issue 12).
struct CompareBenchResult {
  static constexpr double kTargetSeconds = 1.5;         ///< read + compare + render.
  static constexpr double kTargetBytesPerStep = 128.0;  ///< Resident bytes per step.

  int64_t steps = 0;  ///< Per run.
  std::string dir;
  double file_mb = 0.0;     ///< Both run files.
  double generate_s = 0.0;  ///< Writing both runs (not in the total).
  double read_s = 0.0;      ///< Reading both (two threads).
  double compare_s = 0.0;
  std::array<double, 3> render_s{};       ///< Markdown, HTML, JSON.
  std::array<int64_t, 3> render_bytes{};  ///< Their sizes.
  double total_s = 0.0;                   ///< read + compare + render.
  double cpu_s = 0.0;                     ///< User + system CPU seconds of the timed part.
  int cores = 0;
  std::optional<double> load_before;   ///< One-minute load average before the timed part.
  double rss_before_mib = 0.0;         ///< Peak RSS before reading.
  double read_peak_mib = 0.0;          ///< Peak RSS after reading.
  double peak_mib = 0.0;               ///< Peak RSS at the end.
  double bytes_per_step = 0.0;         ///< (peak - before) / steps of both runs.
  double column_bytes_per_step = 0.0;  ///< Held by the two runs' step columns.
  std::string verdict;                 ///< The comparison's summary line.
  /// Both read again, as `compare` after `ab` reads them: from the column cache the first read
  /// wrote (core/column_cache.h), unless it is off (`column_cache` false: parsed again).
  bool column_cache = false;
  double cached_read_s = 0.0;
  double cached_total_s = 0.0;  ///< cached read + compare + render.

  bool time_target_met() const { return total_s < kTargetSeconds; }
  bool memory_target_met() const { return bytes_per_step <= kTargetBytesPerStep; }

  /// bench_json_head("compare") and every field above under its own name (render_s and
  /// render_bytes as [md, html, json], load_before null when unknown), then "targets".
  nlohmann::ordered_json to_json() const;
  /// The inverse of to_json() (a --sweep round's child prints it). Throws InputError when a key
  /// is missing.
  static CompareBenchResult from_json(const nlohmann::json& j);
};

/// Writes the two runs (B's phase 2 is 3% slower), then reads, compares and renders them as
/// `recompdiag compare` does, timing each part. Throws InputError for invalid options and IoError
/// when the directory cannot be made.
CompareBenchResult run_compare_bench(const CompareBenchOptions& options);

/// Runs the bench once per entry of `steps`, each round in a fresh process (`self_command`
/// followed by `--steps N --json -`), so that each round's peak RSS is its own. Throws InputError
/// for a value under 4 or a round that fails.
std::vector<CompareBenchResult> run_compare_bench_sweep(
    const std::vector<int64_t>& steps, const std::vector<std::string>& self_command);

}  // namespace recompdiag::runner
