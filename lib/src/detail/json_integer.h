#pragma once
// Converts a JSON number into an integer type without undefined behaviour: the simdjson reader of
// step lines, the nlohmann reader of header, event and summary lines, and the noise-profile reader
// all go through these checks.

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

namespace recompdiag::detail {

// Each stores the number in *out when it is integral and fits T; otherwise it returns why not
// ("is not an integer", "is out of range") for the caller's error line, and leaves *out. A plain
// cast of 1e19, or of 2^40 into an int, is undefined or silently wrong.

template <class T>
const char* integer_from(int64_t i, T* out) {
  constexpr auto lo = std::numeric_limits<T>::min();
  constexpr auto hi = std::numeric_limits<T>::max();
  const bool fits = lo >= 0 ? i >= 0 && static_cast<uint64_t>(i) <= static_cast<uint64_t>(hi)
                            : i >= static_cast<int64_t>(lo) && i <= static_cast<int64_t>(hi);
  if (!fits) return "is out of range";
  *out = static_cast<T>(i);
  return nullptr;
}

template <class T>
const char* integer_from(uint64_t u, T* out) {
  if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return "is out of range";
  *out = static_cast<T>(u);
  return nullptr;
}

template <class T>
const char* integer_from(double d, T* out) {
  constexpr auto lo = std::numeric_limits<T>::min();
  constexpr auto hi = std::numeric_limits<T>::max();
  if (std::floor(d) != d) return "is not an integer";
  // hi + 1 is a power of two, exact as a double, where hi itself may not be.
  if (d < static_cast<double>(lo) || d >= 2.0 * static_cast<double>(hi / 2 + 1))
    return "is out of range";
  *out = static_cast<T>(d);
  return nullptr;
}

template <class T>
const char* json_integer(const nlohmann::json& v, T* out) {
  if (v.is_number_unsigned()) return integer_from(v.get<uint64_t>(), out);
  if (v.is_number_integer()) return integer_from(v.get<int64_t>(), out);
  if (v.is_number_float()) return integer_from(v.get<double>(), out);
  return "is not an integer";
}

}  // namespace recompdiag::detail
