// The reader's fast path for step lines (see detail/step_line.h). A step line is the bulk of
// every run file; simdjson's DOM and on-demand parsers both cost about twice this scanner on them
// (issue 12). The scanner is strict: it accepts only a subset of JSON and returns false on
// anything else, so that every error message and every unusual but valid line still comes from
// the simdjson path.
#include "detail/step_line.h"

#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "detail/json_integer.h"
#include "detail/line_scanner.h"
#include "recompdiag/core/record_fields.h"

namespace recompdiag::detail {

namespace {

// Where each field of a section lives and what type it is, built once per section from its table.
struct SectionLayout {
  enum class Type { kInt, kDouble, kBool };

  template <class S>
  explicit SectionLayout(const Section<S>& section) {
    const S probe{};
    const auto* base = reinterpret_cast<const char*>(&probe);
    for (const Field<S>& f : section) {
      keys.emplace_back(f.name);
      std::visit(
          [&](auto member) {
            using T = std::decay_t<decltype(probe.*member)>;
            types.push_back(std::is_same_v<T, bool>     ? Type::kBool
                            : std::is_same_v<T, double> ? Type::kDouble
                                                        : Type::kInt);
            offsets.push_back(
                static_cast<size_t>(reinterpret_cast<const char*>(&(probe.*member)) - base));
          },
          f.member);
    }
  }

  std::vector<KeyPattern> keys;
  std::vector<Type> types;
  std::vector<size_t> offsets;
};

// Reads one value of field `i` of `layout` into the struct at `base`.
bool read_field(Scanner& in, const SectionLayout& layout, size_t i, char* base) {
  char* at = base + layout.offsets[i];
  switch (layout.types[i]) {
    case SectionLayout::Type::kBool: {
      bool b = false;
      if (!in.boolean(b)) return false;
      std::memcpy(at, &b, sizeof b);
      return true;
    }
    case SectionLayout::Type::kDouble: {
      double d = 0.0;
      if (!in.real(d)) return false;
      std::memcpy(at, &d, sizeof d);
      return true;
    }
    case SectionLayout::Type::kInt: {
      int64_t v = 0;
      if (!in.integer(v)) return false;
      std::memcpy(at, &v, sizeof v);
      return true;
    }
  }
  return false;
}

template <class S>
bool read_section(Scanner& in, const Section<S>& section, std::optional<S>& target) {
  static_assert(std::is_trivially_copyable_v<S>);
  static const SectionLayout kLayout(section);
  S s{};
  auto* base = reinterpret_cast<char*>(&s);
  if (!in.eat('{')) return false;
  if (!in.eat('}')) {
    if (!read_members(in, kLayout.keys,
                      [&](size_t i) { return read_field(in, kLayout, i, base); }) ||
        !in.eat('}'))
      return false;
  }
  target = s;
  return true;
}

// The keys of a step line in the writer's order: the step's own, then the probe sections, then
// the alerts.
enum TopKey : size_t {
  kStep,
  kPhase,
  kEpoch,
  kStepInPhase,
  kWallMs,
  kDeviceMs,
  kLoss,
  kHeadLosses,
  kLossWeights,
  kLr,
  kFirstSection,
};

std::vector<KeyPattern> step_keys() {
  std::vector<KeyPattern> keys;
  for (const char* name : {"step", "phase", "epoch", "step_in_phase", "wall_ms", "device_ms",
                           "loss", "head_losses", "loss_weights", "lr"})
    keys.emplace_back(name);
  for_each_section([&](const auto& section) { keys.emplace_back(section.name); });
  keys.emplace_back("alerts");
  return keys;
}

bool read_step_value(Scanner& in, size_t key, size_t alerts_key, StepRecord& s, bool* has_wall) {
  int64_t i = 0;
  switch (key) {
    case kStep:
      return in.integer(s.step);
    case kPhase:
    case kEpoch:
      // Past int's range: the slow path refuses it with the field's name.
      return in.integer(i) &&
             detail::integer_from(i, key == kPhase ? &s.phase : &s.epoch) == nullptr;
    case kStepInPhase:
      return in.integer(s.step_in_phase);
    case kWallMs:
      *has_wall = true;
      return in.real(s.wall_ms);
    case kDeviceMs: {
      if (in.peek() == 'n') return in.literal("null", 4);  // absent, as the simdjson path reads
      double v = 0.0;
      if (!in.real(v)) return false;
      s.device_ms = v;
      return true;
    }
    case kLoss:
      return in.real(s.loss);
    case kHeadLosses:
      return in.reals(s.head_losses);
    case kLossWeights:
      return in.reals(s.loss_weights);
    case kLr:
      return in.real(s.lr);
    default:
      break;
  }
  if (key == alerts_key) return in.strings(s.alerts);  // appended: repeated keys accumulate
  bool ok = false;
  size_t k = kFirstSection;
  for_each_section([&](const auto& section) {
    if (k++ == key) ok = read_section(in, section, s.*section.record);
  });
  return ok;
}

void reset(StepRecord& s) {
  std::vector<double> heads = std::move(s.head_losses);
  std::vector<double> weights = std::move(s.loss_weights);
  std::vector<std::string> alerts = std::move(s.alerts);
  heads.clear();
  weights.clear();
  alerts.clear();
  s = StepRecord{};
  s.head_losses = std::move(heads);
  s.loss_weights = std::move(weights);
  s.alerts = std::move(alerts);
}

}  // namespace

bool parse_step_line(const char* data, size_t len, StepRecord& out, bool* has_wall) {
  static const std::vector<KeyPattern> kKeys = step_keys();
  constexpr char kPrefix[] = "{\"type\":\"step\"";
  constexpr size_t kPrefixLen = sizeof kPrefix - 1;
  *has_wall = false;
  if (len < kPrefixLen || std::memcmp(data, kPrefix, kPrefixLen) != 0) return false;
  reset(out);
  Scanner in(data + kPrefixLen, data + len);
  if (in.eat(',') && !read_members(in, kKeys, [&](size_t key) {
        return read_step_value(in, key, kKeys.size() - 1, out, has_wall);
      }))
    return false;
  return in.eat('}') && in.at_end();
}

}  // namespace recompdiag::detail
