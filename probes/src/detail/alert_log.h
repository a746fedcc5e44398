#pragma once
// The alert lines a Monitor writes to stderr (MonitorOptions::log_alerts): the first alert of each
// rule and subject whole, the repeats counted and said once, at the end of the run. A terminal
// that trains for hours then shows one line per problem, not one per step that has it; the run
// file keeps every alert.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "recompdiag/core/health.h"

namespace recompdiag::probes::detail {

/// Not thread-safe: the training thread writes (Monitor::end_step). Holds one entry per rule and
/// subject seen, a handful in any run.
class AlertLog {
 public:
  explicit AlertLog(std::ostream& out) : out_(out) {}

  /// Writes "recompdiag alert [rule] step N: evidence. advice" for the first alert of its rule
  /// and subject; counts a repeat.
  void write(const Alert& alert);

  /// Writes one line per rule and subject that repeated: "recompdiag alert [rule] repeated N more
  /// times (steps A-B)", with the subject where it has one. Once: later calls write nothing.
  void finish();

 private:
  struct Entry {
    std::string rule;
    std::string subject;
    int64_t repeats = 0;
    int64_t first_repeat = 0;
    int64_t last_repeat = 0;
  };
  std::ostream& out_;
  std::vector<Entry> seen_;
  bool finished_ = false;
};

}  // namespace recompdiag::probes::detail
