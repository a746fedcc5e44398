#pragma once
/// \file
/// Error types shared by every recompdiag target.

#include <cstdint>
#include <stdexcept>
#include <string>

namespace recompdiag {

/// Bad input from a user: a flag, a file, a value. The CLI prints `what()` as one line and exits 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The environment failed an operation that the input was fine for: a run file that can no longer
/// be written (disk full, file-size limit). The CLI prints `what()` as one line and exits 1; what
/// was written before stays readable.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A data-parallel job failed around this process although its own input was fine: a rank never
/// joined the rendezvous, or a peer died or stalled in a collective. The CLI prints `what()` as
/// one line and exits 1; the rank's run file keeps every completed step.
class JobError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws InputError("NAME must be >= LOW, got VALUE") when `value` is below `low`: the bound
/// check of the options structs' validate().
inline void require_at_least(const std::string& name, int64_t value, int64_t low) {
  if (value < low) {
    throw InputError(name + " must be >= " + std::to_string(low) + ", got " +
                     std::to_string(value));
  }
}

/// Throws InputError("NAME must be in (LOW, HIGH], got VALUE"), the brackets as asked (an
/// infinite HIGH words it "NAME must be > LOW"), when `value` is outside the range or not a
/// number: the range check of the options structs' validate().
void require_in_range(const std::string& name, double value, double low, double high, bool low_open,
                      bool high_open);

/// The same of a fraction that its flag takes as a percentage: "--threshold must be a percentage
/// in [0, 100), got 120" for a `value` of 1.2 against [0, 1).
void require_percentage(const std::string& name, double value, double low, double high,
                        bool low_open, bool high_open);

}  // namespace recompdiag
