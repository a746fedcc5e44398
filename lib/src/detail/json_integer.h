#pragma once
// Reads a JSON number into an integer type without undefined behaviour: shared by the run reader's
// header, event and summary lines and by the noise-profile reader.

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

namespace recompdiag::detail {

/// Stores `v` in *out when it is an integer, or an integral number, that fits T; otherwise returns
/// why not ("is not an integer", "is out of range") for the caller's error line, and leaves *out.
/// A plain cast of 1e19, or of 2^40 into an int, is undefined or silently wrong.
template <class T>
const char* json_integer(const nlohmann::json& v, T* out) {
  constexpr auto lo = std::numeric_limits<T>::min();
  constexpr auto hi = std::numeric_limits<T>::max();
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(hi)) return "is out of range";
  } else if (v.is_number_integer()) {
    const auto i = v.get<int64_t>();
    const bool fits = lo >= 0 ? i >= 0 && static_cast<uint64_t>(i) <= static_cast<uint64_t>(hi)
                              : i >= static_cast<int64_t>(lo) && i <= static_cast<int64_t>(hi);
    if (!fits) return "is out of range";
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::floor(d) != d) return "is not an integer";
    // hi + 1 is a power of two, exact as a double, where hi itself may not be.
    if (d < static_cast<double>(lo) || d >= 2.0 * static_cast<double>(hi / 2 + 1))
      return "is out of range";
    *out = static_cast<T>(d);
    return nullptr;
  } else {
    return "is not an integer";
  }
  *out = v.get<T>();
  return nullptr;
}

}  // namespace recompdiag::detail
