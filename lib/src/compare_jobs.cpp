// compare_jobs(): comparisons whose runs may be data-parallel jobs.

#include "recompdiag/core/compare.h"

namespace recompdiag {

Comparison compare_jobs(const std::vector<RunSet>& a, const std::vector<RunSet>& b,
                        const CompareOptions& options) {
  // Columns, not copies of the records: a million-step run is compared in a few bytes per step.
  std::vector<ColumnarRun> runs_a, runs_b;
  for (const RunSet& s : a) runs_a.push_back(to_columnar(s.run));
  for (const RunSet& s : b) runs_b.push_back(to_columnar(s.run));
  Comparison c = compare_run_sets(runs_a, runs_b, options);
  // c.a and c.b analyse the first run of each side: the job's view, whose stretches the ranks
  // explain.
  if (!a.empty() && a.front().is_job()) c.job_a = analyze_job(a.front().ranks, c.a);
  if (!b.empty() && b.front().is_job()) c.job_b = analyze_job(b.front().ranks, c.b);
  return c;
}

}  // namespace recompdiag
