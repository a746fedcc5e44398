#pragma once
/// \file
/// The rank files of a data-parallel job, seen as one run.
///
/// Each rank of a job writes its own run file ("run.rank0.jsonl", ...) whose header carries its
/// `rank`, the `world_size` and the job's `job_id`. A job's step takes as long as its slowest rank:
/// the others wait for it in the all-reduce. job_run() builds that view, on which every analysis
/// and comparison of a single run works unchanged; straggler.h says which rank held the job up.
///
///     std::vector<RunFile> files = ...;                // rank files and single runs, any order
///     std::vector<RunSet> runs = group_rank_files(std::move(files));
///     for (const RunSet& r : runs) analyze_run(r.run);  // a job: slowest rank per step

#include <string>
#include <vector>

#include "recompdiag/core/run_io.h"

namespace recompdiag {

/// The run file of `rank`: "run.jsonl" -> "run.rank0.jsonl"; a path without the .jsonl suffix
/// gets ".rank0.jsonl" appended. Every writer of rank files names them so (the C++ trainer, the
/// Python Monitor under torchrun).
std::string rank_file_path(const std::string& out, int rank);

/// True when `run` is one rank of a data-parallel job (its header has a job id or a world size
/// above 1).
bool is_rank_file(const RunFile& run);
/// The same of a run header.
bool is_rank_header(const RunHeader& header);

/// The job formed by its rank files, as one run:
/// - header: rank 0's, with `path` naming the job ("job <id> (N ranks)");
/// - steps: for each step every rank completed, the wall time of the slowest rank; count fields
///   of the probe sections (counts, bytes, milliseconds) summed over the ranks, levels and flags
///   from rank 0; alerts of every rank, each once; loss from rank 0 (the ranks record the job's
///   mean loss);
/// - events: rank 0's, and other ranks' events that rank 0 has not (same kind, step and reason),
///   with "rank K: " before their reason and `detail.rank` set;
/// - summary: rank 0's when every rank wrote one, else none; its status is "failed" when a
///   rank's is, else "interrupted" when a rank's is.
/// `ranks` must be one complete job ordered by rank (group_rank_files() checks that).
RunFile job_run(const std::vector<RunFile>& ranks);

/// One run of a comparison side: a single-process run, or a job with its rank files.
struct RunSet {
  RunFile run;                 ///< The run, or the job as one run (job_run()).
  std::vector<RunFile> ranks;  ///< A job's rank files, by rank; empty for a single run.
  bool is_job() const { return !ranks.empty(); }
};

/// Groups rank files into jobs by job id (single runs stay as they are), in the order each run or
/// job first appears. Throws InputError naming the files for: a job missing a rank, a rank given
/// twice, rank files of one job disagreeing on the world size.
std::vector<RunSet> group_rank_files(std::vector<RunFile> files);

}  // namespace recompdiag
