// libFuzzer target: `compare` on two fuzzed run files.
//
// The input holds both files, split at the first 0xFF byte (never valid in UTF-8 JSON text):
// baseline before it, candidate after. Both are parsed; when both parse, they are compared. Only
// InputError may escape.

#include <cstddef>
#include <cstdint>
#include <string>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\xff');
  if (split == std::string::npos) return 0;
  try {
    const recompdiag::RunFile a = recompdiag::parse_run_file(input.substr(0, split), "a.jsonl");
    const recompdiag::RunFile b = recompdiag::parse_run_file(input.substr(split + 1), "b.jsonl");
    recompdiag::CompareOptions options;
    options.bootstrap.resamples = 200;  // the interval's arithmetic, not its precision
    (void)recompdiag::compare_runs(a, b, options);
  } catch (const recompdiag::InputError&) {
  }
  return 0;
}
