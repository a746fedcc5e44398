// Deterministic counts compared exactly: a compile, a sync or a copy that B has and A has not is
// a finding whatever the timing says. Which counts, their names, help and values are their gates
// in kProbeCounts (probe_counts.h).

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "detail/compare_parts.h"
#include "recompdiag/core/error.h"

namespace recompdiag {

namespace {

bool gated(const ProbeCountField& f) { return f.gate.name != nullptr; }

bool is_part_of(const ProbeCountField& part, const ProbeCountField& umbrella) {
  return part.part_of != nullptr && std::string_view(part.part_of) == umbrella.key;
}

// Whether a run measured count `f`: a gate value of its own always is; an umbrella when any of
// its parts is.
bool gate_measured(const ProbeCountField& f, const ProbeCounts& counts) {
  if (f.gate.value != nullptr) return true;
  if (f.value != nullptr) return f.measured == nullptr || counts.*f.measured;
  for (const ProbeCountField& part : kProbeCounts) {
    if (is_part_of(part, f) && gate_measured(part, counts)) return true;
  }
  return false;
}

const ProbeCountField& gate_count(const std::string& name) {
  for (const ProbeCountField& f : kProbeCounts) {
    if (gated(f) && name == f.gate.name) return f;
  }
  throw std::logic_error("no gate count named " + name);
}

}  // namespace

namespace detail {

int64_t gate_value(const ProbeCountField& f, const ProbeCounts& counts, const RunAnalysis& run,
                   int phase) {
  if (f.gate.value != nullptr) return f.gate.value(counts, run, phase);
  if (f.value != nullptr) return counts.*f.value;
  uint64_t sum = 0;  // wrapping: fuzzed counters must not overflow
  for (const ProbeCountField& part : kProbeCounts) {
    if (is_part_of(part, f)) sum += static_cast<uint64_t>(gate_value(part, counts, run, phase));
  }
  return static_cast<int64_t>(sum);
}

std::optional<int64_t> gate_count_value(const std::string& name, const ProbeCounts& counts,
                                        const RunAnalysis& run, int phase) {
  const ProbeCountField& f = gate_count(name);
  if (!gate_measured(f, counts)) return std::nullopt;
  return gate_value(f, counts, run, phase);
}

}  // namespace detail

namespace gate_values {

int64_t jit_compiles(const ProbeCounts& phase_counts, const RunAnalysis&, int) {
  return phase_counts.jit_compiles_seen();
}

int64_t alerts_beyond_timing(const ProbeCounts&, const RunAnalysis& run, int phase) {
  int64_t n = 0;
  for (const AlertInstance& a : run.alerts) n += a.phase == phase && a.rule != "slow_step";
  return n;
}

}  // namespace gate_values

const std::vector<GateCount>& gate_counts() {
  static const std::vector<GateCount> counts = [] {
    std::vector<GateCount> out;
    for (const ProbeCountField& f : kProbeCounts) {
      if (gated(f)) out.push_back({f.gate.name, f.gate.help});
    }
    return out;
  }();
  return counts;
}

const std::vector<std::string>& count_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const GateCount& c : gate_counts()) out.push_back(c.name);
    return out;
  }();
  return names;
}

std::vector<std::string> parse_fail_on(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const size_t comma = text.find(',', start);
    const std::string name =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto& names = count_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string accepted;
      for (const auto& n : names) accepted += (accepted.empty() ? "" : ", ") + n;
      throw InputError("--fail-on: unknown count '" + name + "' (accepted: " + accepted + ")");
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

namespace detail {

namespace {

// What tells the events of count `f` on one step (CostedCount::sources).
void add_event_sources(const ProbeCountField& f, std::vector<int64_t (*)(const StepRecord&)>& out) {
  if (f.gate.events != nullptr) {
    out.push_back(f.gate.events);
  } else if (f.source.value != nullptr) {
    out.push_back(f.source.value);
  } else {
    for (const ProbeCountField& part : kProbeCounts) {
      if (is_part_of(part, f)) add_event_sources(part, out);
    }
  }
}

}  // namespace

const std::vector<CostedCount>& costed_counts() {
  static const std::vector<CostedCount> costed = [] {
    std::vector<CostedCount> out;
    for (const ProbeCountField& f : kProbeCounts) {
      if (!gated(f) || !f.gate.costed) continue;
      CostedCount c{f.gate.name, {}, f.gate.clock};
      add_event_sources(f, c.sources);
      out.push_back(std::move(c));
    }
    return out;
  }();
  return costed;
}

void compare_counts(int phase, const SideRuns& a, const SideRuns& b, const CompareOptions& options,
                    std::vector<CountChange>& out) {
  const size_t first = out.size();
  std::vector<CountChange> umbrellas;  // judged for --fail-on; their refinements are listed
  for (const ProbeCountField& def : kProbeCounts) {
    if (!gated(def)) continue;
    bool measured = true;
    int64_t lo[2] = {INT64_MAX, INT64_MAX};
    int64_t hi[2] = {INT64_MIN, INT64_MIN};
    for (int side = 0; side < 2; ++side) {
      const SideRuns& runs = side == 0 ? a : b;
      for (size_t i = 0; i < runs.analyses.size(); ++i) {
        const PhaseAnalysis& pa = phase_of(runs, i);
        measured &= gate_measured(def, pa.counts);
        const int64_t v = gate_value(def, pa.counts, runs.analyses[i], phase);
        lo[side] = std::min(lo[side], v);
        hi[side] = std::max(hi[side], v);
      }
    }
    if (!measured) continue;
    const bool more = lo[1] > hi[0];
    const bool fewer = hi[1] < lo[0];
    if (!more && !fewer) continue;
    CountChange c;
    c.phase = phase;
    c.count = def.gate.name;
    c.a_min = lo[0];
    c.a_max = hi[0];
    c.b_min = lo[1];
    c.b_max = hi[1];
    const auto& fail_on = options.fail_on;
    c.fails = more && std::find(fail_on.begin(), fail_on.end(), c.count) != fail_on.end();
    if (c.fails) c.failed_by = c.count;
    (def.gate.listed ? out : umbrellas).push_back(std::move(c));
  }
  // An umbrella that fails the gate fails it through the refinements that grew; through itself,
  // listed, when none of them grew on its own (one compiler's more offsets in another's spread).
  for (CountChange& u : umbrellas) {
    if (!u.fails) continue;
    bool marked = false;
    for (size_t i = first; i < out.size(); ++i) {
      CountChange& c = out[i];
      if (is_part_of(gate_count(c.count), gate_count(u.count)) && c.b_min > c.a_max) {
        if (!c.fails) c.failed_by = u.count;
        c.fails = marked = true;
      }
    }
    if (!marked) out.push_back(std::move(u));
  }
}

}  // namespace detail

}  // namespace recompdiag
