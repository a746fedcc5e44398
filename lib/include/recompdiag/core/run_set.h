#pragma once
/// \file
/// The run files of the two sides of a comparison, as `compare` takes them (files, directories of
/// *.jsonl, globs), read several at once, and compare_run_paths(): the one entry point from run
/// files to a Comparison that `compare`, `ab`, the benches and the Python package call. The rank
/// files of a data-parallel job among them are one run (group_rank_files(), job.h).

#include <string>
#include <utility>
#include <vector>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/job.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/step_columns.h"
#include "recompdiag/core/straggler.h"

namespace recompdiag {

/// Expands each of `specs` (given with `flag`): a directory gives its *.jsonl files in name
/// order, a pattern with * ? or [ gives its matches in name order, anything else is a file
/// path, kept as given (reading it reports a missing file). Throws InputError naming the flag
/// when a directory or a pattern yields no file.
std::vector<std::string> expand_run_paths(const std::vector<std::string>& specs,
                                          const std::string& flag);

/// Reads every file, several at once (one per core, at least two); throws the InputError of the
/// first file (in order) that cannot be read, which names it.
std::vector<RunFile> read_run_set(const std::vector<std::string>& paths);

/// The same into columns (read_columnar_run()): a few bytes per step instead of a record.
std::vector<ColumnarRun> read_columnar_run_set(const std::vector<std::string>& paths);

/// Both sides of a comparison into columns, read together so that side B's files need not wait
/// for side A's: one file per side still keeps two cores busy.
std::pair<std::vector<ColumnarRun>, std::vector<ColumnarRun>> read_columnar_sides(
    const std::vector<std::string>& a, const std::vector<std::string>& b);

/// Compares the runs in files `a` (the baseline) against those in `b`: the runs read into
/// columns and compare_run_sets(), or, when a side holds rank files of a data-parallel job,
/// every file's records grouped into jobs and compare_jobs(). Throws InputError naming the file
/// that cannot be read, and as compare_run_sets() does.
Comparison compare_run_paths(const std::vector<std::string>& a, const std::vector<std::string>& b,
                             const CompareOptions& options = {});

/// One run's findings, or one job's: what `recompdiag report` reports.
struct RunReport {
  std::vector<std::string> paths;  ///< The run files read.
  RunAnalysis run;                 ///< The run, or the job as one run (job_run()).
  std::optional<JobAnalysis> job;  ///< A job's per-rank table and its stragglers.
};

/// Reads `paths`, one run file or the rank files of one data-parallel job, and analyzes the run
/// (a job as one run, with analyze_job()). Throws InputError when `paths` is empty, when a file
/// cannot be read (naming it), and when the files are more than one run ("one run or one job").
RunReport report_run_paths(const std::vector<std::string>& paths,
                           const AnalysisOptions& options = {});

/// The first run of `paths` as compare_run_paths() sees it: the first file's run, or the job its
/// rank files make (for a trace of what was compared).
RunFile first_run(const std::vector<std::string>& paths);

}  // namespace recompdiag
