// Reading the run files of a comparison's sides, and the one path from them to a Comparison.

#include "recompdiag/core/run_set.h"

#include <glob.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <thread>

#include "recompdiag/core/column_cache.h"
#include "recompdiag/core/error.h"

namespace recompdiag {

std::vector<std::string> expand_run_paths(const std::vector<std::string>& specs,
                                          const std::string& flag) {
  std::vector<std::string> out;
  for (const std::string& spec : specs) {
    std::error_code ec;
    if (std::filesystem::is_directory(spec, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::directory_iterator(spec, ec)) {
        if (entry.path().extension() == ".jsonl") found.push_back(entry.path().string());
      }
      if (ec) throw InputError(flag + " " + spec + ": cannot list the directory: " + ec.message());
      if (found.empty()) throw InputError(flag + " " + spec + ": no *.jsonl run files in it");
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (spec.find_first_of("*?[") != std::string::npos) {
      glob_t g{};
      const int rc = ::glob(spec.c_str(), 0, nullptr, &g);
      std::vector<std::string> found;
      if (rc == 0) found.assign(g.gl_pathv, g.gl_pathv + g.gl_pathc);
      ::globfree(&g);
      if (found.empty()) throw InputError(flag + " '" + spec + "': no file matches");
      out.insert(out.end(), found.begin(), found.end());  // glob sorts by name
    } else {
      out.push_back(spec);
    }
  }
  return out;
}

namespace {

// Readers at once: one per file up to the cores (at least two: reading waits on the disk too),
// each taking the next unread file, so that one big file never holds back the others.
size_t reader_threads(size_t files) {
  const size_t cores = std::max(2u, std::thread::hardware_concurrency());
  return std::min(files, std::min<size_t>(cores, 8));
}

template <class Run>
std::vector<Run> read_all(const std::vector<std::string>& paths,
                          Run (*read)(const std::string& path)) {
  std::vector<Run> out(paths.size());
  std::vector<std::exception_ptr> failed(paths.size());
  std::atomic<size_t> next{0};
  auto reader = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) {
      try {
        out[i] = read(paths[i]);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < reader_threads(paths.size()); ++t) helpers.emplace_back(reader);
  reader();
  for (std::thread& t : helpers) t.join();
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);  // the first file, in order, that could not be read
  }
  return out;
}

}  // namespace

std::vector<RunFile> read_run_set(const std::vector<std::string>& paths) {
  return read_all<RunFile>(paths, &read_run_file);
}

std::vector<ColumnarRun> read_columnar_run_set(const std::vector<std::string>& paths) {
  // Through the column cache: a long run read again (`compare` after `ab`, `history add` after
  // the gate) costs its columns' bytes, not a parse.
  return read_all<ColumnarRun>(
      paths, static_cast<ColumnarRun (*)(const std::string&)>(&read_columnar_run_cached));
}

std::pair<std::vector<ColumnarRun>, std::vector<ColumnarRun>> read_columnar_sides(
    const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> paths = a;
  paths.insert(paths.end(), b.begin(), b.end());
  std::vector<ColumnarRun> runs = read_columnar_run_set(paths);
  std::vector<ColumnarRun> runs_b(std::make_move_iterator(runs.begin() + a.size()),
                                  std::make_move_iterator(runs.end()));
  runs.resize(a.size());
  return {std::move(runs), std::move(runs_b)};
}

Comparison compare_run_paths(const std::vector<std::string>& a, const std::vector<std::string>& b,
                             const CompareOptions& options) {
  // Runs are read into columns; rank files of one data-parallel job form one run (its step is
  // the slowest rank's), which needs their records.
  auto [columns_a, columns_b] = read_columnar_sides(a, b);
  bool jobs = false;
  for (const auto* side : {&columns_a, &columns_b}) {
    for (const ColumnarRun& r : *side) jobs = jobs || is_rank_header(r.header);
  }
  if (!jobs) return compare_run_sets(columns_a, columns_b, options);
  auto records = [](std::vector<ColumnarRun>& side) {
    std::vector<RunFile> out;
    for (ColumnarRun& r : side) {
      out.push_back(to_run_file(r));
      ColumnarRun spent = std::move(r);  // frees the columns now that the records hold them
    }
    return group_rank_files(std::move(out));
  };
  return compare_jobs(records(columns_a), records(columns_b), options);
}

RunReport report_run_paths(const std::vector<std::string>& paths, const AnalysisOptions& options) {
  if (paths.empty()) throw InputError("no run file to report on");
  RunReport report;
  report.paths = paths;
  std::vector<ColumnarRun> runs = read_columnar_run_set(paths);
  const bool job = std::any_of(runs.begin(), runs.end(),
                               [](const ColumnarRun& r) { return is_rank_header(r.header); });
  if (!job) {
    if (runs.size() > 1) {
      throw InputError("a report is of one run or one job's rank files; " +
                       std::to_string(runs.size()) + " runs were given (" + paths.front() + ", " +
                       paths[1] + (runs.size() > 2 ? ", ..." : "") +
                       "): compare two runs with `recompdiag compare`");
    }
    report.run = analyze_run(runs.front(), options);
    return report;
  }
  std::vector<RunFile> records;
  for (ColumnarRun& r : runs) records.push_back(to_run_file(r));
  runs.clear();
  std::vector<RunSet> sets = group_rank_files(std::move(records));
  if (sets.size() > 1) {
    throw InputError("a report is of one run or one job's rank files; these files are " +
                     std::to_string(sets.size()) + " runs (" + sets[0].run.path + ", " +
                     sets[1].run.path + (sets.size() > 2 ? ", ..." : "") +
                     "): compare two runs with `recompdiag compare`");
  }
  report.run = analyze_run(sets.front().run, options);
  if (sets.front().is_job()) report.job = analyze_job(sets.front().ranks, report.run);
  return report;
}

RunFile first_run(const std::vector<std::string>& paths) {
  if (paths.empty()) throw InputError("no run files");
  RunFile first = read_run_file(paths.front());
  if (!is_rank_header(first.header)) return first;  // a plain run: its file alone
  // A rank file: the job its rank files make, found among all of them.
  std::vector<RunSet> sets = group_rank_files(read_run_set(paths));
  return std::move(sets.front().run);
}

}  // namespace recompdiag
