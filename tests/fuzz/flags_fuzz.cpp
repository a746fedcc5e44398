// libFuzzer target: the flag parsers that take free text: number lists (--epochs, --lr), per-phase
// loss weights, fault lists, the metrics listen address and the Pushgateway URL.
//
// The first byte picks the parser, the rest is the flag's value. Each either returns a value that
// passes its own checks or throws InputError; nothing else may escape.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "recompdiag/core/error.h"
#include "recompdiag/reports/prometheus_exporter.h"
#include "recompdiag/trainer/config.h"
#include "recompdiag/trainer/faults.h"

namespace {

// A parser's postcondition failed: crash loudly so libFuzzer keeps the input.
void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 5) {
      case 0:
        for (double v : recompdiag::trainer::parse_number_list(text, "--lr"))
          require(std::isfinite(v));
        break;
      case 1:
        for (const auto& phase : recompdiag::trainer::parse_phase_weights(text, "--loss-weights")) {
          require(!phase.empty());
        }
        break;
      case 2: {
        const recompdiag::trainer::FaultSet faults = recompdiag::trainer::parse_faults(text);
        // What parses must print back to the same set.
        const recompdiag::trainer::FaultSet again =
            recompdiag::trainer::parse_faults(faults.to_string());
        require(again.kinds == faults.kinds && again.extra_work_pct == faults.extra_work_pct);
        break;
      }
      case 3:
        (void)recompdiag::reports::parse_listen_address(text);
        break;
      case 4:
        (void)recompdiag::reports::parse_pushgateway_url(text);
        break;
    }
  } catch (const recompdiag::InputError&) {
  }
  return 0;
}
