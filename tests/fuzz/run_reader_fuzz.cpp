// libFuzzer target: the run-file reader, and the analysis of whatever it accepts.
//
// Any input either parses into a RunFile or is refused with InputError; nothing else may escape,
// crash, or trip AddressSanitizer or UndefinedBehaviorSanitizer. What parses must analyse.

#include <cstddef>
#include <cstdint>
#include <string>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const recompdiag::RunFile run = recompdiag::parse_run_file(text, "fuzz.jsonl");
    (void)recompdiag::analyze_run(run);
  } catch (const recompdiag::InputError&) {
    // Refused with one clear line: what bad input should get.
  }
  return 0;
}
