#pragma once
// input_error(): what an InputError says, for the suites that check refusals.

#include <doctest/doctest.h>

#include <string>

#include "recompdiag/core/error.h"

namespace recompdiag::test {

/// The message of the InputError `f` throws; fails the test when it throws nothing.
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError");
  return "";
}

}  // namespace recompdiag::test
