// Deterministic counts compared exactly: a compile, a sync or a copy that B has and A has not is
// a finding whatever the timing says.

#include <algorithm>
#include <stdexcept>

#include "detail/compare_parts.h"
#include "recompdiag/core/error.h"

namespace recompdiag {

namespace {

/// One count: its `--fail-on` name and help line, how a sentence names it, when a run measured
/// it, its value, and whether the report lists its changes (an umbrella count is judged for
/// `--fail-on` alone: its refinements are listed).
struct CountDef {
  const char* name;
  const char* help;   // one line for --help and the docs
  const char* one;    // "JIT compile"
  const char* words;  // "JIT compile", "JIT compiles"
  bool (*measured)(const ProbeCounts&);
  int64_t (*value)(const PhaseAnalysis&, const RunAnalysis&);
  bool listed = true;
  const char* refines = nullptr;  // the umbrella count this one is a part of
  // Priced by the counted cost: the events one step carries; null when not priced.
  int64_t (*per_step)(const StepRecord&) = nullptr;
  detail::CompileClock clock = detail::CompileClock::kNone;
};

bool always(const ProbeCounts&) { return true; }

// The events one step carries, per costed count.
int64_t jit_events(const StepRecord& s) {
  // A compile is paid in the steps after it too: the graph executor's profiling runs.
  return s.jit ? s.jit->compiles + s.jit->profiling_runs : 0;
}
int64_t step_dynamo_compiles(const StepRecord& s) { return s.compiled ? s.compiled->compiles : 0; }
int64_t step_plan_builds(const StepRecord& s) { return s.jit ? s.jit->plan_builds : 0; }
int64_t step_cache_misses(const StepRecord& s) {
  return step_plan_builds(s) + (s.dispatch ? s.dispatch->new_signatures : 0) +
         (s.cupti ? s.cupti->new_kernels + s.cupti->module_loads + s.cupti->graph_instantiations
                  : 0);
}
int64_t step_syncs(const StepRecord& s) {
  return (s.dispatch ? s.dispatch->syncs : 0) + (s.cupti ? s.cupti->syncs : 0);
}
int64_t step_copies(const StepRecord& s) {
  return (s.dispatch ? s.dispatch->copies_h2d + s.dispatch->copies_d2h + s.dispatch->copies_d2d
                     : 0) +
         (s.cupti ? s.cupti->memcpy_h2d + s.cupti->memcpy_d2h + s.cupti->memcpy_d2d : 0);
}

// Alerts of the phase, without the timing rule: slow steps come and go with the machine.
int64_t deterministic_alerts(const PhaseAnalysis& pa, const RunAnalysis& run) {
  int64_t n = 0;
  for (const AlertInstance& a : run.alerts) n += a.phase == pa.phase && a.rule != "slow_step";
  return n;
}

// The one list of gate counts: count_names(), gate_counts() (the --help and docs lines),
// parse_fail_on() and the report's count changes come from it. `compiles` counts every
// compiler's; jit_compiles and dynamo_compiles are its refinements.
const CountDef kCounts[] = {
    {"compiles",
     "every compiler's compiles: TorchScript's (jit_compiles) and torch.compile's "
     "(dynamo_compiles)",
     "compile", "compiles", always,
     [](const PhaseAnalysis& p, const RunAnalysis&) {
       return detail::jit_compiles_seen(p.counts) + p.counts.dynamo_compiles;
     },
     false},
    {"jit_compiles", "TorchScript compiles (torch::jit::compile, or compile events)", "JIT compile",
     "JIT compiles", always,
     [](const PhaseAnalysis& p, const RunAnalysis&) { return detail::jit_compiles_seen(p.counts); },
     true, "compiles", jit_events, detail::CompileClock::kJitEvents},
    {"plan_builds",
     "TorchScript graph-executor plans built (new specializations: JIT cache misses)",
     "JIT plan build", "JIT plan builds", [](const ProbeCounts& c) { return c.has_jit; },
     [](const PhaseAnalysis& p, const RunAnalysis&) { return p.counts.jit_plan_builds; }, true,
     nullptr, step_plan_builds},
    {"syncs", "host syncs (the dispatcher's; CUPTI's synchronizations on a GPU)", "host sync",
     "host syncs", [](const ProbeCounts& c) { return c.has_dispatch || c.has_cupti; },
     [](const PhaseAnalysis& p, const RunAnalysis&) { return p.counts.syncs; }, true, nullptr,
     step_syncs},
    {"copies", "cross-device copies, every direction", "cross-device copy", "cross-device copies",
     [](const ProbeCounts& c) { return c.has_dispatch || c.has_cupti; },
     [](const PhaseAnalysis& p, const RunAnalysis&) { return p.counts.copies; }, true, nullptr,
     step_copies},
    {"cache_misses",
     "every cache miss: plan builds, first-seen op signatures and kernels, GPU module loads, CUDA "
     "graph instantiations",
     "cache miss", "cache misses",
     [](const ProbeCounts& c) { return c.has_dispatch || c.has_jit || c.has_cupti; },
     [](const PhaseAnalysis& p, const RunAnalysis&) { return p.counts.cache_misses(); }, true,
     nullptr, step_cache_misses},
    {"alerts", "health alerts, slow_step's left out (it comes and goes with the machine)", "alert",
     "alerts", always, deterministic_alerts},
    {"dynamo_compiles", "torch.compile compiles (its recompiles included)", "torch.compile compile",
     "torch.compile compiles", [](const ProbeCounts& c) { return c.has_compiled; },
     [](const PhaseAnalysis& p, const RunAnalysis&) { return p.counts.dynamo_compiles; }, true,
     "compiles", step_dynamo_compiles, detail::CompileClock::kDynamoSteps},
    {"graph_breaks",
     "torch.compile graph breaks: each splits a frame and compiles a resume function (the Python "
     "package's ledger)",
     "torch.compile graph break", "torch.compile graph breaks",
     [](const ProbeCounts& c) { return c.has_compile_ledger; },
     [](const PhaseAnalysis& p, const RunAnalysis&) { return p.counts.graph_breaks; }},
    {"compile_cache_misses",
     "torch.compile's cache misses: Inductor's FX-graph cache and AOTAutograd's (the Python "
     "package's ledger); a cold cache against a warm one shows here",
     "torch.compile cache miss", "torch.compile cache misses",
     [](const ProbeCounts& c) { return c.has_compile_ledger; },
     [](const PhaseAnalysis& p, const RunAnalysis&) { return p.counts.compile_cache_misses; }},
    {"eager_fallbacks",
     "calls of torch.compile frames that ran eagerly (past the recompile limit, or a fallback)",
     "eager call of a compiled frame", "eager calls of compiled frames",
     [](const ProbeCounts& c) { return c.has_compiled; },
     [](const PhaseAnalysis& p, const RunAnalysis&) { return p.counts.eager_fallbacks; }},
};

const CountDef& count_def(const std::string& name) {
  for (const CountDef& d : kCounts) {
    if (name == d.name) return d;
  }
  throw std::logic_error("no gate count named " + name);
}

std::string range(int64_t lo, int64_t hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

}  // namespace

const std::vector<GateCount>& gate_counts() {
  static const std::vector<GateCount> counts = [] {
    std::vector<GateCount> out;
    for (const CountDef& d : kCounts) out.push_back({d.name, d.help});
    return out;
  }();
  return counts;
}

const std::vector<std::string>& count_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const CountDef& d : kCounts) out.push_back(d.name);
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

const std::vector<CostedCount>& costed_counts() {
  static const std::vector<CostedCount> costed = [] {
    std::vector<CostedCount> out;
    for (const CountDef& d : kCounts) {
      if (d.per_step) out.push_back({d.name, d.per_step, d.clock});
    }
    return out;
  }();
  return costed;
}

void compare_counts(int phase, const SideRuns& a, const SideRuns& b, const CompareOptions& options,
                    std::vector<CountChange>& out) {
  const size_t first = out.size();
  std::vector<CountChange> umbrellas;  // judged for --fail-on; their refinements are listed
  for (const CountDef& def : kCounts) {
    bool measured = true;
    int64_t lo[2] = {INT64_MAX, INT64_MAX};
    int64_t hi[2] = {INT64_MIN, INT64_MIN};
    for (int side = 0; side < 2; ++side) {
      const SideRuns& runs = side == 0 ? a : b;
      for (size_t i = 0; i < runs.analyses.size(); ++i) {
        const PhaseAnalysis& pa = runs.analyses[i].phases[runs.phase_index[i]];
        measured &= def.measured(pa.counts);
        const int64_t v = def.value(pa, runs.analyses[i]);
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
    c.count = def.name;
    c.a_min = lo[0];
    c.a_max = hi[0];
    c.b_min = lo[1];
    c.b_max = hi[1];
    const auto& fail_on = options.fail_on;
    c.fails = more && std::find(fail_on.begin(), fail_on.end(), c.count) != fail_on.end();
    if (c.fails) c.failed_by = c.count;
    const int64_t by = more ? lo[1] - hi[0] : lo[0] - hi[1];
    c.change = std::to_string(by) + (more ? " more " : " fewer ") + (by == 1 ? def.one : def.words);
    c.text = "B: " + c.change + " in phase " + std::to_string(phase) + " (" + range(lo[0], hi[0]) +
             " -> " + range(lo[1], hi[1]) + ")";
    (def.listed ? out : umbrellas).push_back(std::move(c));
  }
  // An umbrella that fails the gate fails it through the refinements that grew; through itself,
  // listed, when none of them grew on its own (one compiler's more offsets in another's spread).
  for (CountChange& u : umbrellas) {
    if (!u.fails) continue;
    bool marked = false;
    for (size_t i = first; i < out.size(); ++i) {
      CountChange& c = out[i];
      const CountDef& def = count_def(c.count);
      if (def.refines && u.count == def.refines && c.b_min > c.a_max) {
        if (!c.fails) c.failed_by = u.count;
        c.fails = marked = true;
      }
    }
    if (!marked) out.push_back(std::move(u));
  }
}

}  // namespace detail

}  // namespace recompdiag
