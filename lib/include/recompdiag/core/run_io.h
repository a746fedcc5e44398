#pragma once
/// \file
/// Reading and writing run files (JSON Lines, see record.h).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "recompdiag/core/error.h"
#include "recompdiag/core/record.h"
#include "recompdiag/core/record_sink.h"

namespace recompdiag {

/// Appends records to a run file, one line per record, each written with a single write(2) as soon
/// as it is produced, so a run killed at any moment keeps every completed line.
///
/// Not thread-safe: one writer per thread. Owns a file descriptor: neither copyable nor movable.
class RunWriter {
 public:
  /// Creates (truncates) `path`. Throws InputError when it cannot be opened for writing.
  explicit RunWriter(const std::string& path);
  ~RunWriter();
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;
  RunWriter(RunWriter&&) = delete;
  RunWriter& operator=(RunWriter&&) = delete;

  /// Writes the header line. Call once, first.
  void write(const RunHeader& header);
  /// Writes one step line. Reuses an internal buffer: no allocation once warm.
  void write(const StepRecord& step);
  void write(const EventRecord& event);
  void write(const RunSummary& summary);

  const std::string& path() const { return path_; }
  /// Lines written so far.
  int64_t lines() const { return lines_; }

 private:
  void write_line();
  std::string path_;
  int fd_ = -1;
  int64_t lines_ = 0;
  std::string buffer_;
};

/// A RecordSink that writes every record to a run file as it arrives (see RunWriter).
class RunFileSink : public RecordSink {
 public:
  /// Opens `path`; throws InputError when it cannot be written.
  explicit RunFileSink(const std::string& path) : writer_(path) {}
  void on_run_start(const RunHeader& header) override { writer_.write(header); }
  void on_step(const StepRecord& step) override { writer_.write(step); }
  void on_event(const EventRecord& event) override { writer_.write(event); }
  void on_run_end(const RunSummary& summary) override { writer_.write(summary); }
  const RunWriter& writer() const { return writer_; }

 private:
  RunWriter writer_;
};

/// The run header's fields as a JSON object (schema first), as the run file and reports carry it.
nlohmann::ordered_json run_header_json(const RunHeader& header);

/// Formats records as single JSON lines (without the trailing newline), as RunWriter writes them.
std::string to_json_line(const RunHeader& header);
std::string to_json_line(const StepRecord& step);
std::string to_json_line(const EventRecord& event);
std::string to_json_line(const RunSummary& summary);
/// Appends the JSON form of a step to `out`; the hot path of RunWriter.
void append_json(std::string& out, const StepRecord& step);

/// A line the reader skipped, and why.
struct SkippedLine {
  int64_t line = 0;  ///< 1-based line number.
  std::string why;
};

/// A run file that cannot be read: which file, which line and what kind of fault, so that a caller
/// can act on the kind without parsing the message. `what()` is "<path>:<line>: <reason>", or
/// "<path>: <reason>" when no line is at fault. It is an InputError: the CLI prints it as one line
/// and exits 2.
class RunFileError : public InputError {
 public:
  /// What is wrong with the file.
  enum class Kind {
    kCannotRead,     ///< The file cannot be opened or read (missing, a directory, no permission).
    kEmpty,          ///< No record at all: an empty file or blank lines only.
    kNotARunFile,    ///< The first line is not a run header (`"type":"run"`).
    kUnknownSchema,  ///< A run header of a schema version this reader does not know.
    kNotJson,        ///< A line that is not JSON, other than a killed run's truncated last line.
    kInvalidRecord,  ///< A JSON line that is no valid record: a field missing or of the wrong type,
                     ///< a NaN or negative time, a second run header, an unknown event.
  };

  /// `line` is 1-based, or 0 when the fault is the whole file's.
  RunFileError(Kind kind, std::string path, int64_t line, std::string reason)
      : InputError(path + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + reason),
        kind_(kind),
        path_(std::move(path)),
        line_(line),
        reason_(std::move(reason)) {}

  Kind kind() const { return kind_; }
  /// The file as the caller named it (parse_run_file: its `name`).
  const std::string& path() const { return path_; }
  /// 1-based number of the line at fault; 0 when the fault is the whole file's.
  int64_t line() const { return line_; }
  /// The message without the file and line.
  const std::string& reason() const { return reason_; }

 private:
  Kind kind_;
  std::string path_;
  int64_t line_;
  std::string reason_;
};

/// Everything read from one run file.
struct RunFile {
  std::string path;
  RunHeader header;
  std::vector<StepRecord> steps;
  std::vector<EventRecord> events;
  std::optional<RunSummary> summary;  ///< Absent when the run did not finish.
  std::vector<SkippedLine> skipped;   ///< Blank lines and a truncated last line.
};

/// Reads a run file. Tolerates blank lines and a truncated last line (listed in `skipped`) and
/// ignores unknown fields. Throws RunFileError (an InputError) naming the file, the line and the
/// kind of fault for: a missing or empty file, a first line that is not a run header, an unknown
/// schema version, a malformed line that is not the last, a step with a NaN or negative time.
RunFile read_run_file(const std::string& path);

/// Parses a run file held in memory; `name` is used in error messages. Throws as read_run_file.
RunFile parse_run_file(const std::string& text, const std::string& name);

}  // namespace recompdiag
