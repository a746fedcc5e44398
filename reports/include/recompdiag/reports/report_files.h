#pragma once
/// \file
/// Report files: written atomically (a temporary file in the same directory, then rename), so a
/// reader never sees half a report and an interrupted run leaves the previous one in place.

#include <functional>
#include <iosfwd>
#include <string>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/run_io.h"

namespace recompdiag::reports {

/// Whether write_file_atomically() could write `path` now, found without writing it: returns
/// when it could, else throws what that would throw (InputError for a directory or a missing or
/// read-only directory, IoError when not even an empty file fits). Lets a command refuse a bad
/// output path before a long run instead of after it.
void check_writable(const std::string& path);

/// Writes `content` to `path` atomically, as the overload below does.
void write_file_atomically(const std::string& path, const std::string& content);

/// Lets `fill` write the file's content to a temporary file next to `path`, then renames it into
/// place atomically (a link to a regular file keeps pointing at it). A `path` that exists and is
/// not a regular file (/dev/stdout, a pipe) is written in place, never replaced. Throws
/// InputError naming the path when its directory is missing or not writable or it is a
/// directory; IoError when the writing fails (disk full, file-size limit), leaving the previous
/// file untouched. The temporary file is removed on any failure.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

/// Writes DIR/report.md, DIR/report.html and DIR/report.json for an already computed comparison,
/// creating DIR if needed. Returns the Markdown report. Throws InputError when DIR cannot be
/// written, IoError when the disk fills up.
std::string write_reports(const Comparison& comparison, const std::string& out_dir);

/// What `recompdiag ab` writes after training both modes: compares the recompile run (baseline,
/// A) with the mutable run (B), writes DIR/report.{md,html,json} and returns the Markdown report
/// for printing. Throws InputError as compare_runs() and write_reports() do.
std::string write_ab_reports(const RunFile& recompile, const RunFile& mutable_run,
                             const CompareOptions& options, const std::string& out_dir);

}  // namespace recompdiag::reports
