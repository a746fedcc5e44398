#include "recompdiag/trainer/noise_bench.h"

#include <cstdio>
#include <filesystem>

#include "recompdiag/core/error.h"
#include "recompdiag/core/step_columns.h"
#include "recompdiag/trainer/ab_experiment.h"

namespace recompdiag::trainer {

void NoiseBenchOptions::validate() const {
  config.validate();
  require_at_least("--runs", runs, 3);
  if (out_dir.empty()) throw InputError("--out-dir must not be empty");
}

NoiseProfile run_noise_bench(const NoiseBenchOptions& o) {
  o.validate();
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw InputError("--out-dir " + o.out_dir + ": " + ec.message());
  std::vector<ColumnarRun> runs;
  for (int r = 1; r <= o.runs; ++r) {
    const std::string path =
        (std::filesystem::path(o.out_dir) / ("noise-" + std::to_string(r) + ".jsonl")).string();
    const int code = run_in_child(o.config, path, "noise", /*quiet=*/true);
    if (code != 0) {
      throw InputError("bench noise: run " + std::to_string(r) + " failed (exit " +
                       std::to_string(code) + ")");
    }
    runs.push_back(read_columnar_run(path));
    if (!o.quiet) std::fprintf(stderr, "recompdiag: bench noise: run %d/%d done\n", r, o.runs);
  }
  return measure_noise_profile(runs, AnalysisOptions{});
}

}  // namespace recompdiag::trainer
