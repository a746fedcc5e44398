#pragma once
// The line-by-line core of the run-file reader: what each line is, its record, and the rules for
// blank and broken lines. run_reader.cpp feeds it the lines of a file or of a string.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "recompdiag/core/record.h"
#include "recompdiag/core/record_sink.h"
#include "recompdiag/core/run_io.h"

namespace recompdiag::detail {

/// Parses the lines of one run file in order and hands each record to a sink: the header to
/// `on_run_start`, steps to `on_step` (a reused record: copy what you keep), events, and the
/// summary to `on_run_end`. Blank lines and a truncated last line go to `skipped`. Step lines take
/// the fast path (step_line.h) and fall back to simdjson's DOM. Throws RunFileError naming `path`
/// and the line. Not thread-safe; one per file.
class RunLineParser {
 public:
  RunLineParser(std::string path, RecordSink& sink, std::vector<SkippedLine>& skipped);
  ~RunLineParser();
  RunLineParser(const RunLineParser&) = delete;
  RunLineParser& operator=(const RunLineParser&) = delete;

  /// One line without its newline; `data` must be followed by at least 64 readable bytes
  /// (simdjson's padding), which the line's own text past `len` may provide.
  void feed(const char* data, size_t len, int64_t line_no);
  /// After the last line: records a pending truncated line, and throws when there was no header.
  void finish();

 private:
  struct Impl;
  Impl* impl_;
};

/// A sink that keeps every record in `Run` (RunFile or ColumnarRun: both have header, steps,
/// events and summary).
template <class Run>
class RunCollector : public RecordSink {
 public:
  explicit RunCollector(Run& out) : out_(out) {}
  void on_run_start(const RunHeader& header) override { out_.header = header; }
  void on_step(const StepRecord& step) override { out_.steps.push_back(step); }
  void on_event(const EventRecord& event) override { out_.events.push_back(event); }
  void on_run_end(const RunSummary& summary) override { out_.summary = summary; }

 private:
  Run& out_;
};

/// Feeds the lines of `text` to `parser`, then finishes it.
void feed_run_text(const std::string& text, RunLineParser& parser);

/// Feeds the lines of the file at `path` to `parser` in large chunks, then finishes it; after each
/// chunk calls `on_chunk` (when set) with the fraction of the file read so far. Throws
/// RunFileError (kCannotRead) when the file cannot be opened or read, and what the parser throws.
void feed_run_file(const std::string& path, RunLineParser& parser,
                   const std::function<void(double)>& on_chunk = {});

/// Parses `text` into `out` (a RunFile or a ColumnarRun), named `name` in errors. Throws as
/// RunLineParser.
template <class Run>
void parse_run_into(const std::string& text, const std::string& name, Run& out) {
  out.path = name;
  RunCollector<Run> collector(out);
  RunLineParser parser(name, collector, out.skipped);
  feed_run_text(text, parser);
}

/// Reads the file at `path` into `out` (a RunFile or a ColumnarRun). After the first chunk it
/// reserves the steps the whole file will hold, estimated from the bytes per step so far: a
/// million-step run otherwise pays repeated reallocation. Throws as feed_run_file().
template <class Run>
void read_run_into(const std::string& path, Run& out) {
  out.path = path;
  RunCollector<Run> collector(out);
  RunLineParser parser(path, collector, out.skipped);
  bool reserved = false;
  feed_run_file(path, parser, [&](double fraction) {
    if (reserved || out.steps.size() < 64 || fraction <= 0.0) return;
    reserved = true;
    out.steps.reserve(static_cast<size_t>(static_cast<double>(out.steps.size()) / fraction * 1.02) +
                      16);
  });
}

}  // namespace recompdiag::detail
