#pragma once
/// \file
/// Error types shared by every recompdiag target.

#include <stdexcept>
#include <string>

namespace recompdiag {

/// Bad input from a user: a flag, a file, a value. The CLI prints `what()` as one line and exits 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace recompdiag
