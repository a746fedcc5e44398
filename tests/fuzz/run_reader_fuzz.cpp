// libFuzzer target: the run-file reader, and the analysis of whatever it accepts.
//
// Any input either parses into a RunFile or is refused with InputError; nothing else may escape,
// crash, or trip AddressSanitizer or UndefinedBehaviorSanitizer. What parses must analyse. The
// columnar reader must accept and refuse exactly the same inputs, and give back the same steps.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "recompdiag/core/analysis.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/step_columns.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::optional<recompdiag::RunFile> run;
  std::optional<recompdiag::ColumnarRun> columns;
  try {
    run = recompdiag::parse_run_file(text, "fuzz.jsonl");
    (void)recompdiag::analyze_run(*run);
  } catch (const recompdiag::InputError&) {
    // Refused with one clear line: what bad input should get.
  }
  try {
    columns = recompdiag::parse_columnar_run(text, "fuzz.jsonl");
  } catch (const recompdiag::InputError&) {
  }
  if (run.has_value() != columns.has_value()) std::abort();
  if (run) {
    if (run->steps.size() != columns->steps.size()) std::abort();
    for (size_t i = 0; i < run->steps.size(); ++i) {
      if (recompdiag::to_json_line(run->steps[i]) != recompdiag::to_json_line(columns->steps.at(i)))
        std::abort();
    }
  }
  return 0;
}
