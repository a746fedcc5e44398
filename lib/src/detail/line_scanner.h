#pragma once
// A strict scanner for the lines of a run file: the subset of JSON that RunWriter writes, read in
// one pass. Every method returns false on anything outside that subset; the caller then hands
// the line to simdjson. Used by step_line.cpp.

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace recompdiag::detail {

inline bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// A key as the writer writes it, `"name":`, compared 8 bytes at a time. The caller guarantees
// 64 readable bytes past the line (simdjson's padding), so the loads never leave the buffer.
class KeyPattern {
 public:
  static constexpr size_t kMax = 32;

  explicit KeyPattern(std::string_view name) : name_(name) {
    const std::string text = "\"" + std::string(name) + "\":";
    size_ = text.size();
    if (size_ > kMax) return;  // never matches; the general path reads the key
    std::array<char, kMax> bytes{};
    std::array<unsigned char, kMax> mask{};
    std::memcpy(bytes.data(), text.data(), size_);
    std::memset(mask.data(), 0xff, size_);
    std::memcpy(words_.data(), bytes.data(), kMax);
    std::memcpy(masks_.data(), mask.data(), kMax);
  }

  std::string_view name() const { return name_; }

  // Whether [p, end) starts with the pattern.
  bool matches(const char* p, const char* end) const {
    if (size_ > kMax || static_cast<size_t>(end - p) < size_) return false;
    for (size_t w = 0; w * 8 < size_; ++w) {
      uint64_t v = 0;
      std::memcpy(&v, p + w * 8, 8);
      if (((v ^ words_[w]) & masks_[w]) != 0) return false;
    }
    return true;
  }
  size_t size() const { return size_; }

 private:
  std::string_view name_;
  size_t size_ = 0;
  std::array<uint64_t, kMax / 8> words_{};
  std::array<uint64_t, kMax / 8> masks_{};
};

// A JSON number as scanned: its text, its digits as an integer (exact up to 19 digits), the digits
// after the point (-1: no point) and whether it has an exponent.
struct Number {
  const char* start = nullptr;
  uint64_t mantissa = 0;
  int digits = 0;
  int fraction = -1;
  bool negative = false;
  bool exponent = false;
};

// A cursor over one line. Every method skips leading whitespace and returns false when what it
// expects is not there; the caller then gives up on the fast path.
class Scanner {
 public:
  Scanner(const char* p, const char* end) : p_(p), end_(end) {}

  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool at_end() {
    ws();
    return p_ == end_;
  }
  bool eat(char c) {
    ws();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  // The next character after whitespace, or 0 at the end.
  char peek() {
    ws();
    return p_ == end_ ? '\0' : *p_;
  }
  bool literal(const char* word, size_t n) {
    ws();
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
    p_ += n;
    return true;
  }
  // Skips `key` when the text (after whitespace) starts with it.
  bool key(const KeyPattern& key) {
    ws();
    if (!key.matches(p_, end_)) return false;
    p_ += key.size();
    return true;
  }

  // A string of printable ASCII without escapes: what simdjson would also read as is.
  bool string(std::string_view& out) {
    if (!eat('"')) return false;
    const char* s = p_;
    while (p_ < end_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        out = std::string_view(s, static_cast<size_t>(p_ - s));
        ++p_;
        return true;
      }
      if (c == '\\' || c < 0x20 || c >= 0x80) return false;
      ++p_;
    }
    return false;
  }

  // A number checked against JSON's grammar (no '+', no leading zeros, digits around the point
  // and in the exponent) and ended by a delimiter, in one pass.
  bool number(Number& n) {
    ws();
    n = Number{};
    n.start = p_;
    if (p_ < end_ && *p_ == '-') {
      n.negative = true;
      ++p_;
    }
    if (p_ == end_) return false;
    if (*p_ == '0') {
      ++p_;
      n.digits = 1;
    } else if (is_digit(*p_)) {
      for (; p_ < end_ && is_digit(*p_); ++p_, ++n.digits)
        n.mantissa = n.mantissa * 10 + static_cast<uint64_t>(*p_ - '0');
    } else {
      return false;
    }
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      n.fraction = 0;
      if (p_ == end_ || !is_digit(*p_)) return false;
      for (; p_ < end_ && is_digit(*p_); ++p_, ++n.digits, ++n.fraction)
        n.mantissa = n.mantissa * 10 + static_cast<uint64_t>(*p_ - '0');
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      n.exponent = true;
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !is_digit(*p_)) return false;
      while (p_ < end_ && is_digit(*p_)) ++p_;
    }
    return p_ == end_ || *p_ == ',' || *p_ == '}' || *p_ == ']' || *p_ == ' ' || *p_ == '\t' ||
           *p_ == '\r' || *p_ == '\n';
  }

  // An integer literal of at most 18 digits (a fraction or an exponent goes the slow way).
  bool integer(int64_t& v) {
    Number n;
    if (!number(n) || n.fraction >= 0 || n.exponent || n.digits > 18) return false;
    v = n.negative ? -static_cast<int64_t>(n.mantissa) : static_cast<int64_t>(n.mantissa);
    return true;
  }

  // A number, or null as NaN: what the simdjson path's get_double() reads.
  bool real(double& v) {
    if (peek() == 'n') {
      if (!literal("null", 4)) return false;
      v = std::numeric_limits<double>::quiet_NaN();
      return true;
    }
    Number n;
    if (!number(n)) return false;
    if (n.fraction < 0 && !n.exponent) {
      // simdjson reads an integer as one and converts it (so "-0" is 0); beyond 18 digits it
      // switches representation: leave those to it.
      if (n.digits > 18) return false;
      const auto i = static_cast<int64_t>(n.mantissa);
      v = static_cast<double>(n.negative ? -i : i);
      return true;
    }
    // Clinger's fast path: a mantissa of at most 2^53 over at most 10^22, both exact in a double,
    // so one correctly rounded division gives the correctly rounded value, as from_chars does.
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    if (!n.exponent && n.digits <= 19 && n.fraction <= 22 && n.mantissa <= (uint64_t{1} << 53)) {
      const double x = static_cast<double>(n.mantissa) / kPow10[n.fraction];
      v = n.negative ? -x : x;
      return true;
    }
    const auto r = std::from_chars(n.start, p_, v);
    return r.ec == std::errc() && r.ptr == p_;
  }

  bool boolean(bool& v) {
    if (literal("true", 4)) {
      v = true;
      return true;
    }
    if (literal("false", 5)) {
      v = false;
      return true;
    }
    return false;
  }

  // Skips a scalar value of a key nobody reads.
  bool skip_scalar() {
    const char c = peek();
    if (c == '"') {
      std::string_view ignored;
      return string(ignored);
    }
    if (c == 't' || c == 'f') {
      bool ignored = false;
      return boolean(ignored);
    }
    double ignored = 0.0;
    return real(ignored);
  }

  bool reals(std::vector<double>& out) {
    out.clear();
    if (!eat('[')) return false;
    if (eat(']')) return true;
    do {
      double v = 0.0;
      if (!real(v)) return false;
      out.push_back(v);
    } while (eat(','));
    return eat(']');
  }

  bool strings(std::vector<std::string>& out) {
    if (!eat('[')) return false;
    if (eat(']')) return true;
    do {
      std::string_view v;
      if (!string(v)) return false;
      out.emplace_back(v);
    } while (eat(','));
    return eat(']');
  }

 private:
  const char* p_;
  const char* end_;
};

// Reads key after key of an object whose keys are `keys`, trying first the key after the last
// one read (the writer's order) and then any; `read(index)` reads the value of a known key, an
// unknown key's scalar value is skipped. False when anything is outside the fast path.
template <class Keys, class Read>
bool read_members(Scanner& in, const Keys& keys, Read&& read) {
  const size_t n = keys.size();
  size_t next = 0;
  do {
    size_t found = n;
    if (next < n && in.key(keys[next])) {
      found = next;
    } else {
      std::string_view key;
      if (!in.string(key) || !in.eat(':')) return false;
      for (size_t i = 0; i < n && found == n; ++i) {
        if (keys[i].name() == key) found = i;
      }
      if (found == n) {
        if (!in.skip_scalar()) return false;
        continue;
      }
    }
    if (!read(found)) return false;
    next = found + 1;
  } while (in.eat(','));
  return true;
}

}  // namespace recompdiag::detail
