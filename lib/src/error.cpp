// The range checks of the options structs' validate(), in one wording.

#include "recompdiag/core/error.h"

#include <cmath>
#include <cstdio>

namespace recompdiag {

namespace {

std::string number_words(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Throws InputError("NAME must be WHAT in (LOW, HIGH], got VALUE") unless `value` is in the
// range (NaN never is); an infinite HIGH words it "NAME must be > LOW". `scale` multiplies the
// bounds and the value in the words (100: a fraction said as a percentage).
void require_range_words(const std::string& name, const char* what, double value, double low,
                         double high, bool low_open, bool high_open, double scale) {
  const bool above = low_open ? value > low : value >= low;
  const bool below = high_open ? value < high : value <= high;
  if (above && below) return;
  const std::string range = std::isinf(high)
                                ? std::string(low_open ? "> " : ">= ") + number_words(low * scale)
                                : std::string(what) + "in " + (low_open ? "(" : "[") +
                                      number_words(low * scale) + ", " +
                                      number_words(high * scale) + (high_open ? ")" : "]");
  throw InputError(name + " must be " + range + ", got " + number_words(value * scale));
}

}  // namespace

void require_in_range(const std::string& name, double value, double low, double high, bool low_open,
                      bool high_open) {
  require_range_words(name, "", value, low, high, low_open, high_open, 1.0);
}

void require_percentage(const std::string& name, double value, double low, double high,
                        bool low_open, bool high_open) {
  require_range_words(name, "a percentage ", value, low, high, low_open, high_open, 100.0);
}

}  // namespace recompdiag
