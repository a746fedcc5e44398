#pragma once
/// \file
/// Which rank held a data-parallel job up, and why: per-rank step and wait statistics, and for
/// each slow stretch of the job the rank the others waited for, with its own cause.
///
/// In a synchronous job every rank waits in the step's all-reduce for the last one to arrive. The
/// rank that waited least in a slow stretch is the straggler; what it did there (a compile, plan
/// builds, an alert) is the cause of every rank's slow steps.
///
///     std::vector<RunSet> sets = group_rank_files(files);
///     RunAnalysis job = analyze_run(sets[0].run);
///     JobAnalysis j = analyze_job(sets[0].ranks, job);
///     for (const StragglerFinding& f : j.stragglers) {
///       if (f.straggler >= 0) std::cout << "rank " << f.straggler << " held the job up\n";
///     }

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/run_io.h"

namespace recompdiag {

/// Settings of analyze_job().
struct StragglerOptions {
  /// A stretch has a straggler when the ranks' waits differ by at least this many milliseconds
  /// and by at least `min_wait_share` of the stretch's extra time; the share is waived when the
  /// rank that waited least is the only one that compiled in the stretch.
  double min_wait_spread_ms = 2.0;
  double min_wait_share = 0.25;

  /// Throws InputError naming the field for a negative wait spread or a share outside [0, 1].
  /// analyze_job() calls it.
  void validate() const;
};

/// One rank of a job, over all its steps.
struct RankSummary {
  int rank = 0;
  std::string path;
  int64_t steps = 0;
  double median_step_ms = 0.0;
  double p95_step_ms = 0.0;
  double median_wait_ms = 0.0;  ///< Median time per step in collectives.
  double total_wait_s = 0.0;    ///< All its time in collectives.
  double wait_share = 0.0;      ///< total_wait_s over its total step time.
  int64_t compiles = 0;         ///< Its compile events.
  bool finished = false;        ///< Its file has a summary line, not marked failed.
};

/// What a straggler did in its stretch that held the others up, the most specific found.
enum class StragglerCause {
  kNone,              ///< No rank stands out.
  kCompiled,          ///< A compile event: `cause_reason`, and `compile_ms` where it says.
  kPlanBuilds,        ///< `cause_count` JIT plan builds.
  kProfilingRuns,     ///< `cause_count` JIT profiling runs.
  kOptimizerRebuild,  ///< An optimizer rebuild event: `cause_reason`.
  kAlert,             ///< An alert of its steps: the rule in `cause_reason`.
  kComputedLonger,    ///< No probe signal of its own.
};

/// The rank the others waited for in one slow stretch of the job.
struct StragglerFinding {
  int64_t first_step = 0;
  int64_t last_step = 0;
  int phase = 1;
  int straggler = -1;        ///< The rank that waited least; -1 when no rank stands out.
  std::vector<int> waiters;  ///< The other ranks.
  double wait_min_ms = 0.0;  ///< Least extra wait of a waiter over the straggler's wait.
  double wait_max_ms = 0.0;  ///< Most extra wait of a waiter.
  /// What the straggler did (kNone without one), and what that names.
  StragglerCause cause_kind = StragglerCause::kNone;
  int64_t cause_count = 0;
  std::string cause_reason;
  std::optional<double> compile_ms;  ///< kCompiled: the compile's time, where its event says it.
  /// kCompiled: every rank compiled in the stretch, and the straggler arrived last.
  bool every_rank_compiled = false;
};

/// What analyze_job() finds.
struct JobAnalysis {
  std::string job_id;
  int world_size = 1;
  std::vector<RankSummary> ranks;            ///< By rank.
  std::vector<StragglerFinding> stragglers;  ///< One per slow stretch of the job, in step order.
  /// The ranks' compile events differ in number: some rank recompiled where others did not (a
  /// rank-dependent shape, an uneven last batch), and every other rank waits for each one.
  bool compiles_differ = false;
};

/// Analyzes a job from its rank files (ordered by rank, as group_rank_files() gives them) and the
/// analysis of the job as one run (analyze_run(job_run(ranks))), whose slow stretches it explains.
/// Pure; never throws for valid input (throws InputError when `options.validate()` does).
JobAnalysis analyze_job(const std::vector<RunFile>& ranks, const RunAnalysis& job,
                        const StragglerOptions& options = {});

}  // namespace recompdiag
