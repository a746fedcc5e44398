#pragma once
/// \file
/// A run held column by column: every field of every step, in a few bytes per step instead of a
/// StepRecord's several hundred, so that analysis and comparison of week-long runs fit in memory.
///
/// Times and losses are kept as plain arrays; everything else (step numbers, phases, epochs,
/// probe counters, flags) as runs of arithmetic progressions, which is what they are: a counter
/// that stays at 180 ops per step, an Adam step counter that grows by one, a flag that is false
/// for a million steps. A column whose values do not form runs falls back to a plain array.
///
///     ColumnarRun run = read_columnar_run("a.jsonl");  // streams: no StepRecord is kept
///     RunAnalysis analysis = analyze_run(run);
///     StepRecord s = run.steps.at(10);                 // any step, rebuilt on demand

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "recompdiag/core/record.h"
#include "recompdiag/core/record_fields.h"
#include "recompdiag/core/run_io.h"

namespace recompdiag {

namespace detail {
struct ColumnCodec;  // column_cache.cpp: the columns to and from a cache file, bit for bit
}  // namespace detail

/// A column of 64-bit values stored as runs of arithmetic progressions, or as a plain array once
/// runs would cost more (more than one run per three values). Values round-trip exactly.
/// Appending is not thread-safe; const reads are.
class PackedColumn {
 public:
  /// The run holding an index: value(k) = first + stride * (k - start) for k in [start, end).
  struct Span {
    size_t start = 0;
    size_t end = 0;
    int64_t first = 0;
    int64_t stride = 0;
  };

  void push_back(int64_t value) {
    // The common case inline: the value continues the last run.
    if (run_length_ >= 2 && value == expected_) {
      ++run_length_;
      ++size_;
      expected_ = static_cast<int64_t>(static_cast<uint64_t>(expected_) +
                                       static_cast<uint64_t>(runs_.back().stride));
      return;
    }
    push_back_slow(value);
  }
  int64_t operator[](size_t i) const {
    // One progression for the whole column (a constant, a counter, an offset that grows by the
    // same step after step) is the common case: no search.
    if (runs_.size() == 1) {
      const Run& r = runs_.front();
      return static_cast<int64_t>(static_cast<uint64_t>(r.first) +
                                  static_cast<uint64_t>(r.stride) * (i - r.start));
    }
    return lookup(i);
  }
  /// The run holding `i` (< size()); a run of one step when the column is a plain array.
  Span span(size_t i) const;
  size_t size() const { return size_; }
  /// Heap bytes held.
  size_t memory_bytes() const;
  void shrink_to_fit();

  /// Reads a column in (mostly) increasing index order, remembering the run it is in.
  class Reader {
   public:
    explicit Reader(const PackedColumn& column) : column_(&column) {}
    int64_t operator()(size_t i) {
      if (i < span_.start || i >= span_.end) span_ = column_->span(i);
      return static_cast<int64_t>(static_cast<uint64_t>(span_.first) +
                                  static_cast<uint64_t>(span_.stride) * (i - span_.start));
    }

   private:
    const PackedColumn* column_;
    Span span_{1, 0, 0, 0};  // empty: the first read looks up its run
  };

 private:
  friend struct detail::ColumnCodec;
  struct Run {
    uint64_t start;
    int64_t first;
    int64_t stride;
  };
  void push_back_slow(int64_t value);
  int64_t lookup(size_t i) const;
  size_t run_index(size_t i) const;
  std::vector<Run> runs_;
  std::vector<int64_t> plain_;
  bool is_plain_ = false;
  size_t size_ = 0;
  size_t run_length_ = 0;  ///< Values in the last run (0 when plain).
  int64_t expected_ = 0;   ///< The value that would continue the last run.
};

/// The steps of one run as columns. Built by appending records in step order; read by index.
/// Appending is not thread-safe; const reads are.
class StepColumns {
 public:
  StepColumns();

  /// Appends one step (copies what it needs; `step` may be reused by the caller).
  void push_back(const StepRecord& step);
  size_t size() const { return wall_ms_.size(); }
  bool empty() const { return wall_ms_.empty(); }

  /// The step-number, phase and epoch columns, for a PackedColumn::Reader in long loops.
  const PackedColumn& step_column() const { return step_; }
  const PackedColumn& phase_column() const { return phase_; }
  const PackedColumn& epoch_column() const { return epoch_; }

  int64_t step(size_t i) const { return step_[i]; }
  int phase(size_t i) const { return static_cast<int>(phase_[i]); }
  int epoch(size_t i) const { return static_cast<int>(epoch_[i]); }
  double wall_ms(size_t i) const { return wall_ms_[i]; }
  double loss(size_t i) const { return loss_[i]; }
  /// Number of head losses of step `i`, and the first of them (contiguous).
  size_t head_count(size_t i) const;
  const double* head_losses(size_t i) const { return head_values_.data() + head_offset_[i]; }
  /// The loss weights in effect at step `i`.
  const std::vector<double>& loss_weights(size_t i) const;
  /// Alerts raised at steps, as (step index, rule name), in step order.
  const std::vector<std::pair<size_t, std::string>>& alerts() const { return alerts_; }

  /// Step `i` rebuilt as a record, every field as it was appended.
  StepRecord at(size_t i) const;
  /// The same into `out`, reusing its vectors' storage.
  void get(size_t i, StepRecord& out) const;

  /// Calls `f(first, stride, n)` for consecutive runs of steps covering [lo, hi): `first` is the
  /// run's first step; within the run, each probe section is present on every step or on none,
  /// every flag and floating-point field of the sections is constant, and every integer field
  /// grows by its value in `stride` per step (zero elsewhere). Step numbers, times, losses and
  /// alerts are not part of it: read them from their columns.
  void for_each_run(size_t lo, size_t hi,
                    const std::function<void(const StepRecord& first, const StepRecord& stride,
                                             size_t n)>& f) const;

  /// Room for `steps` steps in the plain columns, so that they grow without copying.
  void reserve(size_t steps);
  /// Heap bytes held by all columns.
  size_t memory_bytes() const;
  /// Releases spare capacity (after the last append).
  void shrink_to_fit();

 private:
  friend struct detail::ColumnCodec;
  struct SectionColumns {
    PackedColumn present;
    std::vector<PackedColumn> fields;
  };
  static constexpr size_t kSections = kSectionCount;  // one per probe section

  PackedColumn step_, phase_, epoch_, step_in_phase_, lr_, device_present_, device_ms_;
  PackedColumn head_offset_;
  std::vector<double> wall_ms_, loss_, head_values_;
  std::vector<std::pair<size_t, std::vector<double>>> weights_;  ///< (first step, weights).
  std::vector<std::pair<size_t, std::string>> alerts_;
  std::array<SectionColumns, kSections> sections_;
};

/// Everything read from one run file, its steps as columns (compare RunFile).
struct ColumnarRun {
  std::string path;
  RunHeader header;
  StepColumns steps;
  std::vector<EventRecord> events;
  std::optional<RunSummary> summary;  ///< Absent when the run did not finish.
  std::vector<SkippedLine> skipped;   ///< Blank lines and a truncated last line.
};

/// Reads a run file into columns, one line at a time: memory follows the columns, not the file or
/// a StepRecord per step. Accepts and refuses exactly what read_run_file() does, with the same
/// RunFileError.
ColumnarRun read_columnar_run(const std::string& path);

/// The same from text held in memory; `name` is used in error messages.
ColumnarRun parse_columnar_run(const std::string& text, const std::string& name);

/// A RunFile's steps as columns (header, events and summary copied).
ColumnarRun to_columnar(const RunFile& run);

/// Columns back to records: every step rebuilt.
RunFile to_run_file(const ColumnarRun& run);

}  // namespace recompdiag
