#pragma once
// The run files of one side of a comparison, as `compare` takes them: files, directories (every
// *.jsonl inside) and globs. The rank files of a data-parallel job among them are grouped into
// one run by group_rank_files() (core/job.h), by their headers' job id and world size.

#include <string>
#include <utility>
#include <vector>

#include "recompdiag/core/run_io.h"
#include "recompdiag/core/step_columns.h"

namespace recompdiag::trainer::cli {

/// Expands each of `specs` (given with `flag`): a directory gives its *.jsonl files in name
/// order, a pattern with * ? or [ gives its matches in name order, anything else is a file
/// path, kept as given (reading it reports a missing file). Throws InputError naming the flag
/// when a directory or a pattern yields no file.
std::vector<std::string> expand_run_paths(const std::vector<std::string>& specs,
                                          const std::string& flag);

/// Reads every file, several at once (one per core, at least two); throws the InputError of the first file (in order) that
/// cannot be read, which names it.
std::vector<RunFile> read_run_set(const std::vector<std::string>& paths);

/// The same into columns (read_columnar_run()): a few bytes per step instead of a record.
std::vector<ColumnarRun> read_columnar_run_set(const std::vector<std::string>& paths);

/// Both sides of a comparison into columns, read together so that side B's files need not wait
/// for side A's: one file per side still keeps two cores busy.
std::pair<std::vector<ColumnarRun>, std::vector<ColumnarRun>> read_columnar_sides(
    const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace recompdiag::trainer::cli
