#pragma once
/// \file
/// Totals of every probe-section field over a set of steps, built by iterating the field tables
/// (record_fields.h): what the reports print per phase without naming a field.

#include <cstdint>
#include <vector>

#include "recompdiag/core/record.h"

namespace recompdiag {

/// One field's total over the steps that had its section.
struct FieldTotal {
  const char* name = "";  ///< The field's JSON name.
  double sum = 0.0;       ///< Sum over those steps (a flag counts the steps it was set).
  double max = 0.0;       ///< Largest value on one step.
  double last = 0.0;      ///< Value on the last of those steps (what a level ended at).
};

/// One section's totals.
struct SectionTotal {
  const char* name = "";           ///< The section's name ("dispatch", "jit", ...).
  int64_t steps = 0;               ///< Steps that had the section (sampled, for dispatch).
  std::vector<FieldTotal> fields;  ///< In table order.
};

/// Totals of every section, in run-file order. Plain data; copy freely.
class SectionTotals {
 public:
  /// Every section and field, at zero.
  SectionTotals();
  /// Adds the sections present in `step`.
  void add(const StepRecord& step);
  /// Adds `n` steps that start at `first` and whose integer fields grow by their value in
  /// `stride` per step, every other field constant (a run of StepColumns::for_each_run): the same
  /// totals as add() on each, up to rounding in the sums of floating-point fields.
  void add_run(const StepRecord& first, const StepRecord& stride, int64_t n);
  const std::vector<SectionTotal>& sections() const { return sections_; }

 private:
  std::vector<SectionTotal> sections_;
};

}  // namespace recompdiag
