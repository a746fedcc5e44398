#pragma once
/// \file
/// The probe counts of a set of steps (`ProbeCounts`) and the one table, `kProbeCounts`, from which
/// everything about them is derived: how each is added up from the field tables of
/// record_fields.h, whether a run measured it, what one of its events is called, the row the
/// reports list, the signal that attribution ranks, the umbrella count it is a part of, and its
/// `--fail-on` gate (name, help, value, and how the counted cost prices it).
///
/// Adding a count is its member in `ProbeCounts` and one line in `kProbeCounts`. A count of a new
/// probe section reads that section's fields with `fields_of<kSection, &S::member...>()`, which
/// checks at compile time that the fields are in the section's table; the table itself is checked
/// at compile time (distinct keys and gate names, umbrellas that exist, words for every count).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "recompdiag/core/record.h"
#include "recompdiag/core/record_fields.h"
#include "recompdiag/core/section_totals.h"

namespace recompdiag {

/// Sums of the probe counters over a set of steps. `has_*` tells whether the probe section was
/// present on any of those steps: absent means "not measured", never zero. How each count is added
/// up is its line in `kProbeCounts`.
struct ProbeCounts {
  int64_t steps = 0;
  /// Every probe-section field's total over these steps, from the field tables: what the JSON
  /// report writes per section, so that a new counter appears there without code.
  SectionTotals sections;
  bool has_jit = false;
  bool has_dispatch = false;
  bool has_cupti = false;
  bool has_optimizer = false;
  bool has_compiled = false;  ///< The torch.compile probe's section.
  /// Syncs and copies were counted: by the dispatcher, or by CUPTI on steps the dispatcher did not
  /// record (see `kProbeCounts`' `syncs`).
  bool has_transfers = false;
  int64_t jit_compiles = 0;
  int64_t jit_plan_builds = 0;  ///< New graph-executor specializations: JIT cache misses.
  int64_t jit_profiling_runs = 0;
  int64_t dynamo_compiles = 0;    ///< torch.compile compiles (first-seen compiled regions).
  int64_t dynamo_recompiles = 0;  ///< Of which a frame's later compiles: a guard failed.
  int64_t eager_fallbacks = 0;    ///< Calls of compiled frames that ran eagerly.
  /// torch's own compile counters were read (the compile ledger of the Python package).
  bool has_compile_ledger = false;
  int64_t graph_breaks = 0;          ///< torch.compile graph breaks.
  int64_t compile_cache_misses = 0;  ///< Inductor FX-graph and AOTAutograd cache misses.
  int64_t new_signatures = 0;  ///< First-seen dispatcher signatures.
  int64_t host_ops = 0;
  int64_t copies = 0;  ///< Cross-device copies, all directions: the dispatcher's, else CUPTI's.
  int64_t copy_bytes = 0;
  int64_t syncs = 0;  ///< Host syncs: the dispatcher's, else CUPTI's.
  int64_t new_kernels = 0;
  int64_t module_loads = 0;
  int64_t graph_instantiations = 0;
  int64_t optimizer_resets = 0;                ///< Steps whose optimizer step counter fell.
  int64_t optimizer_state_off_device = 0;      ///< Largest count seen on one step.
  int64_t optimizer_state_missing = 0;         ///< Largest count seen on one step.
  int64_t optimizer_state_dtype_mismatch = 0;  ///< Largest count seen on one step.
  int64_t lr_not_in_effect = 0;  ///< Steps whose effective lr is not the requested one.
  double lr_requested = 0.0;     ///< On the last such step.
  double lr_effective = 0.0;
  int64_t compile_events = 0;        ///< "compile" events at these steps.
  int64_t alerts = 0;                ///< Alerts raised at these steps.
  int64_t slow_step_alerts = 0;      ///< Of which slow_step: no signal of their own.
  int64_t memory_growth_alerts = 0;  ///< Of which memory_growth: steady growth of resident memory.
  bool has_memory = false;           ///< Some step has the memory section.
  int64_t resident_first_bytes = 0;  ///< Resident bytes at the first step with the section.
  int64_t resident_last_bytes = 0;   ///< And at the last.

  /// All cache misses: the counts of `kProbeCounts` that are parts of `cache_misses` (JIT plan
  /// builds, first-seen signatures and kernels, module loads and CUDA graph instantiations).
  int64_t cache_misses() const;
  /// JIT compiles: its probe's, or the compile events torch.compile's probe does not account for,
  /// whichever saw more (compile events name no compiler).
  int64_t jit_compiles_seen() const {
    return std::max(jit_compiles, compile_events - dynamo_compiles);
  }
};

/// How a count adds up the per-step values of its source over a set of steps.
enum class CountAggregate {
  kSum,    ///< The sum over the steps (wrapping: fuzzed counters must not overflow).
  kMax,    ///< The largest value seen on one step: a level, such as tensors off device.
  kSteps,  ///< The steps whose value is not zero: a flag, or a condition of the step.
};

/// Where a count's per-step value comes from: a probe section of the step. Plain data; both null
/// for the counts the analysis keeps itself (steps, compile events, alerts) and for umbrellas.
struct CountSource {
  /// Whether the step has the section, and counts in it (a sampled dispatch section): the count
  /// is then measured.
  bool (*present)(const StepRecord& step) = nullptr;
  /// The step's value. Linear in the section's integer fields within a run of alike steps, so
  /// that applied to a stride of StepColumns::for_each_run it gives the value's stride.
  int64_t (*value)(const StepRecord& step) = nullptr;
};

/// How a count reads as an attribution signal (`Signal`): the `kind`, a prior cost `weight` per
/// occurrence that ranks it, and its words. Plain data.
struct CountSignal {
  /// How the signal is counted and worded.
  enum class Form {
    kCount,  ///< The count itself, "N <one|many>".
    /// What a stretch has beyond its phase's steady rate, for counters that also occur in steady
    /// state: "N <one|many>".
    kExtra,
    kCopies,          ///< kExtra, and the extra bytes copied.
    /// Probe compiles, or the compile events beyond the other compilers' probe compiles (JIT,
    /// torch.compile), whichever saw more, with the reasons.
    kCompiles,
    kOptimizerReset,  ///< Probe resets or rebuild events, whichever saw more, with the reason.
    kLr,              ///< The lr requested and the lr in effect.
    kMemoryGrowth,    ///< How far resident memory grew.
    kAlerts,          ///< Alerts other than slow_step and memory_growth (those say nothing new).
  };
  const char* kind = nullptr;  ///< `Signal::kind`; nullptr: the count is no signal.
  double weight = 0.0;
  Form form = Form::kCount;
  /// The signal's words where they are not the count's (`ProbeCountField::one`, `many`): "extra
  /// host sync". nullptr: the count's.
  const char* one = nullptr;
  const char* many = nullptr;
};

struct PhaseAnalysis;
struct RunAnalysis;

/// Whose clock measured the compile time of a count the counted cost prices: TorchScript's
/// compile events (between steps, EventRecord detail "compile_ms") or torch.compile's
/// `compiled.compile_ms` (in steps).
enum class CompileClock { kNone, kJitEvents, kDynamoSteps };

/// A count as `--fail-on` gates it, and as the comparison lists its changes: compared exactly
/// between the sides, per phase. Plain data; `name` null: not a gate count.
struct CountGate {
  const char* name = nullptr;  ///< `--fail-on` name: "plan_builds".
  const char* help = nullptr;  ///< One line for `--help` and the docs.
  /// The gate's value where it is not the count's own (then it is always measured); nullptr: the
  /// count's, or for an umbrella the sum of its parts'.
  int64_t (*value)(const ProbeCounts& phase_counts, const RunAnalysis& run, int phase) = nullptr;
  /// false: an umbrella judged for `--fail-on` alone; the report lists its parts' changes.
  bool listed = true;
  /// Priced by the counted cost (the time of the steps that carry its events).
  bool costed = false;
  /// The events one step carries where they are not the source's value (linear, as
  /// `CountSource::value`); nullptr: the source's, or for an umbrella the sum of its parts'.
  int64_t (*events)(const StepRecord& step) = nullptr;
  CompileClock clock = CompileClock::kNone;
};

/// One count of ProbeCounts: its JSON key, its table row, what one of its events is called, the
/// probe flag that says whether a run measured it (null: always measured), the member, how it is
/// added up and read, the umbrella it is a part of, and its gate. An umbrella (`compiles`,
/// `cache_misses`) has no member: it is the sum of the counts whose `part_of` names it. Plain data,
/// built with `count()` and `umbrella()` and the setters below.
struct ProbeCountField {
  const char* key = nullptr;       ///< JSON key: "jit_plan_builds".
  const char* label = nullptr;     ///< Table row: "JIT plan builds".
  const char* one = nullptr;       ///< One event: "JIT plan build".
  const char* many = nullptr;      ///< Several: "JIT plan builds".
  bool ProbeCounts::*measured = nullptr;  ///< has_jit, ...; absent means "not measured", never zero.
  int64_t ProbeCounts::*value = nullptr;  ///< nullptr: an umbrella.
  CountSource source = {};  ///< Where each step's value comes from; null: kept by the analysis.
  CountAggregate aggregate = CountAggregate::kSum;
  bool reported = true;  ///< Listed by the JSON and HTML reports (kProbeCountFields).
  CountSignal signal = {};
  const char* part_of = nullptr;  ///< The key of the umbrella this count is a part of.
  CountGate gate = {};

  /// This line with `member` set to `value`.
  template <class T>
  constexpr ProbeCountField with(T ProbeCountField::*member, T value) const {
    ProbeCountField f = *this;
    f.*member = value;
    return f;
  }

  /// Read per step from `s`, added up as `how`.
  constexpr ProbeCountField from(CountSource s, CountAggregate how = CountAggregate::kSum) const {
    return with(&ProbeCountField::source, s).with(&ProbeCountField::aggregate, how);
  }
  /// Not listed by the reports.
  constexpr ProbeCountField unreported() const { return with(&ProbeCountField::reported, false); }
  /// Ranked by attribution as `s`.
  constexpr ProbeCountField ranked(CountSignal s) const { return with(&ProbeCountField::signal, s); }
  /// A part of the umbrella `umbrella_key`.
  constexpr ProbeCountField part(const char* umbrella_key) const {
    return with(&ProbeCountField::part_of, umbrella_key);
  }
  /// Gated as `g`.
  constexpr ProbeCountField gated(CountGate g) const { return with(&ProbeCountField::gate, g); }
};

/// A count of member `value`, measured when `measured` is set (null: always).
constexpr ProbeCountField count(const char* key, const char* label, const char* one,
                                const char* many, bool ProbeCounts::*measured,
                                int64_t ProbeCounts::*value) {
  return {key, label, one, many, measured, value};
}

/// An umbrella count: the sum of its parts, measured when any of them is. Never reported (its
/// parts are).
constexpr ProbeCountField umbrella(const char* key, const char* one, const char* many) {
  ProbeCountField f = count(key, many, one, many, nullptr, nullptr);
  f.reported = false;
  return f;
}

namespace count_sources {

/// Whether `step` has `kSection` and counts in it.
template <const auto& kSection>
bool present(const StepRecord& step) {
  return kSection.of(step) != nullptr;
}

/// The sum of fields `kMembers` of `kSection` in `step` (0 without the section), in wrapping
/// arithmetic; a flag counts 1.
template <const auto& kSection, auto... kMembers>
int64_t sum(const StepRecord& step) {
  const auto& s = step.*kSection.record;
  if (!s) return 0;
  return static_cast<int64_t>((uint64_t{0} + ... + static_cast<uint64_t>((*s).*kMembers)));
}

/// Whether `step` counts in section `kFirst` (the dispatcher's, on the steps it samples), or has
/// no `kFirst` section at all and counts in `kSecond` (CUPTI's): the probe `first_probe` reads.
template <const auto& kFirst, const auto& kSecond>
bool first_present(const StepRecord& step) {
  return kFirst.of(step) != nullptr || (!(step.*kFirst.record) && kSecond.of(step) != nullptr);
}

/// `kFirstValue` (the dispatcher's) where `step` has section `kFirst` at all, else `kSecondValue`
/// (CUPTI's): two probes that see the same events from two layers, never added (that would count
/// each twice). By the section's presence alone, never its flags: a stride of
/// StepColumns::for_each_run has the sections of its run but no flags. Linear within such a run.
template <const auto& kFirst, int64_t (*kFirstValue)(const StepRecord&),
          int64_t (*kSecondValue)(const StepRecord&)>
int64_t first_probe(const StepRecord& step) {
  return step.*kFirst.record ? kFirstValue(step) : kSecondValue(step);
}

/// Whether `step` has the compiled section with torch's own counters (the compile ledger).
inline bool compile_ledger_present(const StepRecord& step) {
  const CompiledStats* c = kCompiledSection.of(step);
  return c != nullptr && c->ledger;
}

/// 1 when the step's optimizer section holds an lr that is not in effect (lr_in_effect()).
inline int64_t lr_not_in_effect(const StepRecord& step) {
  return step.optimizer && !lr_in_effect(*step.optimizer) ? 1 : 0;
}

}  // namespace count_sources

/// The source that adds up fields `kMembers` of section `kSection` (a constant of
/// record_fields.h): a count built on the field tables. Fails to compile when a member is not in
/// the section's table.
template <const auto& kSection, auto... kMembers>
constexpr CountSource fields_of() {
  static_assert(((field_index(kSection, kMembers) < kSection.size) && ...),
                "a count reads fields of its section's table");
  return {&count_sources::present<kSection>, &count_sources::sum<kSection, kMembers...>};
}

/// The source of one count that two probes see: `kFirstValue` (a `fields_of` of section `kFirst`)
/// on the steps that have that section, else `kSecondValue` (of `kSecond`): the dispatcher's where
/// it runs, CUPTI's where it does not.
template <const auto& kFirst, int64_t (*kFirstValue)(const StepRecord&), const auto& kSecond,
          int64_t (*kSecondValue)(const StepRecord&)>
constexpr CountSource first_of() {
  return {&count_sources::first_present<kFirst, kSecond>,
          &count_sources::first_probe<kFirst, kFirstValue, kSecondValue>};
}

/// The source that adds up fields `kMembers` of the compiled section on the steps that carry the
/// compile ledger: elsewhere those fields were not measured.
template <auto... kMembers>
constexpr CountSource compile_ledger_fields() {
  static_assert(((field_index(kCompiledSection, kMembers) < kCompiledSection.size) && ...),
                "a count reads fields of its section's table");
  return {&count_sources::compile_ledger_present, &count_sources::sum<kCompiledSection, kMembers...>};
}

/// The gates' own values (compare_counts.cpp).
namespace gate_values {
/// ProbeCounts::jit_compiles_seen(): compile events count as JIT compiles, so always measured.
int64_t jit_compiles(const ProbeCounts& phase_counts, const RunAnalysis& run, int phase);
/// The run's alerts in `phase`, slow_step's left out: it comes and goes with the machine.
int64_t alerts_beyond_timing(const ProbeCounts& phase_counts, const RunAnalysis& run, int phase);
}  // namespace gate_values

/// The umbrellas' keys.
inline constexpr const char* kCompilesUmbrella = "compiles";
inline constexpr const char* kCacheMissesUmbrella = "cache_misses";

// clang-format off
/// Every count of ProbeCounts, the reported ones in the order of the reports' table and the gated
/// ones in the order of the report's count changes. The one list of counts: add_steps() adds them
/// up, the reports list the `reported` ones, attribution ranks those with a `signal` (equal scores
/// by weight, then in this order), the comparison gates those with a `gate` (gate_counts()) and
/// its counted cost prices the `costed` ones, the story names the umbrellas' parts at a switch.
///
/// Weights are prior costs of one occurrence: a compile costs far more than a first-seen op
/// signature, which costs more than one extra sync.
inline constexpr ProbeCountField kProbeCounts[] = {
    count("steps", "steps", "step", "steps", nullptr, &ProbeCounts::steps),
    count("compile_events", "compile events", "compile event", "compile events", nullptr, &ProbeCounts::compile_events),
    umbrella(kCompilesUmbrella, "compile", "compiles")
        .gated({"compiles", "every compiler's compiles: TorchScript's (jit_compiles) and torch.compile's (dynamo_compiles)",
                nullptr, false}),
    // The root event: signatures and plan builds follow it.
    count("jit_compiles", "JIT compiles", "JIT compile", "JIT compiles", &ProbeCounts::has_jit, &ProbeCounts::jit_compiles)
        .from(fields_of<kJitSection, &JitStats::compiles>())
        .ranked({"jit_compiles", 5000.0, CountSignal::Form::kCompiles})
        .part(kCompilesUmbrella)
        // A compile is paid in the steps after it too: the graph executor's profiling runs.
        .gated({"jit_compiles", "TorchScript compiles (torch::jit::compile, or compile events)", &gate_values::jit_compiles,
                true, true, fields_of<kJitSection, &JitStats::compiles, &JitStats::profiling_runs>().value,
                CompileClock::kJitEvents}),
    count("jit_plan_builds", "JIT plan builds", "JIT plan build", "JIT plan builds", &ProbeCounts::has_jit, &ProbeCounts::jit_plan_builds)
        .from(fields_of<kJitSection, &JitStats::plan_builds>())
        .ranked({"jit_plan_builds", 50.0, CountSignal::Form::kCount, "JIT plan build (new specialization)", "JIT plan builds (new specializations)"})
        .part(kCacheMissesUmbrella)
        .gated({"plan_builds", "TorchScript graph-executor plans built (new specializations: JIT cache misses)", nullptr,
                true, true}),
    count("jit_profiling_runs", "JIT profiling runs", "JIT profiling run", "JIT profiling runs", &ProbeCounts::has_jit, &ProbeCounts::jit_profiling_runs)
        .from(fields_of<kJitSection, &JitStats::profiling_runs>())
        .ranked({"jit_profiling_runs", 20.0}),
    count("dynamo_compiles", "torch.compile compiles", "torch.compile compile", "torch.compile compiles", &ProbeCounts::has_compiled, &ProbeCounts::dynamo_compiles)
        .from(fields_of<kCompiledSection, &CompiledStats::compiles>())
        .ranked({"dynamo_compiles", 5000.0, CountSignal::Form::kCompiles})
        .part(kCompilesUmbrella)
        .gated({"dynamo_compiles", "torch.compile compiles (its recompiles included)", nullptr, true, true, nullptr,
                CompileClock::kDynamoSteps}),
    count("dynamo_recompiles", "torch.compile recompiles", "torch.compile recompile", "torch.compile recompiles", &ProbeCounts::has_compiled, &ProbeCounts::dynamo_recompiles)
        .from(fields_of<kCompiledSection, &CompiledStats::recompiles>()),
    // Past the recompile limit a frame runs eagerly at every call: a per-step cost.
    count("eager_fallbacks", "eager calls of compiled frames", "eager call of a compiled frame", "eager calls of compiled frames", &ProbeCounts::has_compiled, &ProbeCounts::eager_fallbacks)
        .from(fields_of<kCompiledSection, &CompiledStats::eager_fallbacks>())
        .ranked({"eager_fallbacks", 20.0, CountSignal::Form::kExtra})
        .gated({"eager_fallbacks", "calls of torch.compile frames that ran eagerly (past the recompile limit, or a fallback)"}),
    // A graph break splits a frame: a resume function and its compile, and the graph's work
    // runs in pieces from then on.
    count("graph_breaks", "torch.compile graph breaks", "torch.compile graph break", "torch.compile graph breaks", &ProbeCounts::has_compile_ledger, &ProbeCounts::graph_breaks)
        .from(compile_ledger_fields<&CompiledStats::graph_breaks>())
        .ranked({"graph_breaks", 500.0})
        .gated({"graph_breaks", "torch.compile graph breaks: each splits a frame and compiles a resume function (the Python package's ledger)"}),
    count("compile_cache_misses", "torch.compile cache misses (FX graph, AOTAutograd)", "torch.compile cache miss", "torch.compile cache misses", &ProbeCounts::has_compile_ledger, &ProbeCounts::compile_cache_misses)
        .from(compile_ledger_fields<&CompiledStats::fx_cache_misses, &CompiledStats::aot_cache_misses>())
        .ranked({"compile_cache_misses", 100.0})
        .gated({"compile_cache_misses", "torch.compile's cache misses: Inductor's FX-graph cache and AOTAutograd's (the Python package's ledger); a cold cache against a warm one shows here"}),
    count("new_signatures", "first-seen op signatures", "first-seen op signature", "first-seen op signatures", &ProbeCounts::has_dispatch, &ProbeCounts::new_signatures)
        .from(fields_of<kDispatchSection, &DispatchStats::new_signatures>())
        .ranked({"new_signatures", 5.0})
        .part(kCacheMissesUmbrella),
    count("host_ops", "host ops", "host op", "host ops", &ProbeCounts::has_dispatch, &ProbeCounts::host_ops)
        .from(fields_of<kDispatchSection, &DispatchStats::host_ops>())
        .ranked({"host_ops", 1.0, CountSignal::Form::kExtra, "extra host op", "extra host ops"}),
    count("copies", "cross-device copies", "cross-device copy", "cross-device copies", &ProbeCounts::has_transfers, &ProbeCounts::copies)
        .from(first_of<kDispatchSection, fields_of<kDispatchSection, &DispatchStats::copies_h2d, &DispatchStats::copies_d2h, &DispatchStats::copies_d2d>().value,
                       kCuptiSection, fields_of<kCuptiSection, &CuptiStats::memcpy_h2d, &CuptiStats::memcpy_d2h, &CuptiStats::memcpy_d2d>().value>())
        .ranked({"copies", 2.0, CountSignal::Form::kCopies, "extra cross-device copy", "extra cross-device copies"})
        .gated({"copies", "cross-device copies, every direction: the dispatcher's where it runs, else CUPTI's memcpys", nullptr, true, true}),
    count("copy_bytes", "copied bytes", "copied byte", "copied bytes", &ProbeCounts::has_transfers, &ProbeCounts::copy_bytes)
        .from(first_of<kDispatchSection, fields_of<kDispatchSection, &DispatchStats::bytes_h2d, &DispatchStats::bytes_d2h, &DispatchStats::bytes_d2d>().value,
                       kCuptiSection, fields_of<kCuptiSection, &CuptiStats::bytes_h2d, &CuptiStats::bytes_d2h, &CuptiStats::bytes_d2d>().value>()),
    count("syncs", "host syncs", "host sync", "host syncs", &ProbeCounts::has_transfers, &ProbeCounts::syncs)
        .from(first_of<kDispatchSection, fields_of<kDispatchSection, &DispatchStats::syncs>().value,
                       kCuptiSection, fields_of<kCuptiSection, &CuptiStats::syncs>().value>())
        .ranked({"syncs", 2.0, CountSignal::Form::kExtra, "extra host sync", "extra host syncs"})
        .gated({"syncs", "host syncs: the dispatcher's where it runs, else CUPTI's synchronizations", nullptr, true, true}),
    count("new_kernels", "first-seen kernels", "first-seen kernel", "first-seen kernels", &ProbeCounts::has_cupti, &ProbeCounts::new_kernels)
        .from(fields_of<kCuptiSection, &CuptiStats::new_kernels>())
        .ranked({"new_kernels", 10.0})
        .part(kCacheMissesUmbrella),
    count("module_loads", "module loads", "GPU module load", "GPU module loads", &ProbeCounts::has_cupti, &ProbeCounts::module_loads)
        .from(fields_of<kCuptiSection, &CuptiStats::module_loads>())
        .ranked({"module_loads", 100.0})
        .part(kCacheMissesUmbrella),
    count("graph_instantiations", "CUDA graph instantiations", "CUDA graph instantiation", "CUDA graph instantiations", &ProbeCounts::has_cupti, &ProbeCounts::graph_instantiations)
        .from(fields_of<kCuptiSection, &CuptiStats::graph_instantiations>())
        .ranked({"graph_instantiations", 100.0})
        .part(kCacheMissesUmbrella),
    umbrella(kCacheMissesUmbrella, "cache miss", "cache misses")
        .gated({"cache_misses", "every cache miss: plan builds, first-seen op signatures and kernels, GPU module loads, CUDA graph instantiations",
                nullptr, true, true}),
    // A reset optimizer state changes what the run learns as well as its speed: always name it.
    count("optimizer_resets", "optimizer state resets", "state reset", "state resets", &ProbeCounts::has_optimizer, &ProbeCounts::optimizer_resets)
        .from(fields_of<kOptimizerSection, &OptimizerStats::state_reset>(), CountAggregate::kSteps)
        .ranked({"optimizer_reset", 200.0, CountSignal::Form::kOptimizerReset}),
    count("optimizer_state_off_device", "optimizer state off device (max)", "optimizer state tensor off device", "optimizer state tensors off device", &ProbeCounts::has_optimizer, &ProbeCounts::optimizer_state_off_device)
        .from(fields_of<kOptimizerSection, &OptimizerStats::state_off_device>(), CountAggregate::kMax)
        .ranked({"optimizer_state_off_device", 5.0}),
    count("optimizer_state_missing", "optimizer state missing (max)", "parameter without optimizer state", "parameters without optimizer state", &ProbeCounts::has_optimizer, &ProbeCounts::optimizer_state_missing)
        .from(fields_of<kOptimizerSection, &OptimizerStats::state_missing>(), CountAggregate::kMax),
    count("optimizer_state_dtype_mismatch", "optimizer state with another dtype (max)", "optimizer state tensor with another dtype than its parameter", "optimizer state tensors with another dtype than its parameter", &ProbeCounts::has_optimizer, &ProbeCounts::optimizer_state_dtype_mismatch)
        .from(fields_of<kOptimizerSection, &OptimizerStats::state_dtype_mismatch>(), CountAggregate::kMax)
        .unreported()
        .ranked({"optimizer_state_dtype", 5.0}),
    // Per step: an lr that is not in effect changes what every step learns.
    count("lr_not_in_effect", "steps with the lr not in effect", "step", "steps", &ProbeCounts::has_optimizer, &ProbeCounts::lr_not_in_effect)
        .from({&count_sources::present<kOptimizerSection>, &count_sources::lr_not_in_effect}, CountAggregate::kSteps)
        .unreported()
        .ranked({"lr_not_in_effect", 50.0, CountSignal::Form::kLr}),
    count("alerts", "alerts", "alert", "alerts", nullptr, &ProbeCounts::alerts)
        .ranked({"alerts", 1.0, CountSignal::Form::kAlerts})
        .gated({"alerts", "health alerts, slow_step's left out (it comes and goes with the machine)", &gate_values::alerts_beyond_timing}),
    count("slow_step_alerts", "slow_step alerts", "slow_step alert", "slow_step alerts", nullptr, &ProbeCounts::slow_step_alerts)
        .unreported(),
    // Memory that grows steadily ends the run once it runs out, however fast the steps are: it
    // outranks every bounded cost (a storm of 100 compiles scores 500,000).
    count("memory_growth_alerts", "memory_growth alerts", "memory_growth alert", "memory_growth alerts", nullptr, &ProbeCounts::memory_growth_alerts)
        .unreported()
        .ranked({"memory_growth", 1.0e6, CountSignal::Form::kMemoryGrowth}),
};
// clang-format on

namespace detail {

constexpr bool same_text(const char* a, const char* b) {
  return std::string_view(a) == std::string_view(b);
}

/// What the compiler checks of the table: distinct keys and gate names, every count has words,
/// every umbrella has parts and no source of its own, every part an umbrella that exists, every
/// gate its help, every costed count something that tells its events per step.
constexpr bool probe_counts_well_formed() {
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.key == nullptr || f.label == nullptr || f.one == nullptr || f.many == nullptr) return false;
    if (f.value == nullptr && f.source.value != nullptr) return false;  // an umbrella's own source
    bool umbrella_has_parts = f.value != nullptr;
    for (const ProbeCountField& g : kProbeCounts) {
      if (&g != &f && same_text(g.key, f.key)) return false;
      if (&g != &f && f.gate.name && g.gate.name && same_text(g.gate.name, f.gate.name)) return false;
      if (g.part_of && same_text(g.part_of, f.key)) umbrella_has_parts = true;
    }
    if (!umbrella_has_parts) return false;
    if (f.part_of) {
      bool found = false;
      for (const ProbeCountField& g : kProbeCounts) {
        found = found || (g.value == nullptr && same_text(g.key, f.part_of));
      }
      if (!found) return false;
    }
    if (f.gate.name && f.gate.help == nullptr) return false;
    if (f.gate.costed && f.gate.events == nullptr && f.source.value == nullptr && f.value != nullptr) {
      return false;  // priced, but nothing says which steps carry its events
    }
  }
  return true;
}
static_assert(probe_counts_well_formed(),
              "kProbeCounts: distinct keys and gate names, words for every count, umbrellas with "
              "parts, gates with help, costed counts with per-step events");

inline constexpr std::size_t kReportedProbeCounts = [] {
  std::size_t n = 0;
  for (const ProbeCountField& f : kProbeCounts) n += f.reported ? 1 : 0;
  return n;
}();

}  // namespace detail

/// The counts the JSON and HTML reports list, in the HTML table's order: the `reported` lines of
/// kProbeCounts.
inline constexpr std::array<ProbeCountField, detail::kReportedProbeCounts> kProbeCountFields = [] {
  std::array<ProbeCountField, detail::kReportedProbeCounts> out{};
  std::size_t i = 0;
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.reported) out[i++] = f;
  }
  return out;
}();

inline int64_t ProbeCounts::cache_misses() const {
  uint64_t n = 0;  // wrapping: fuzzed counters must not overflow
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.part_of != nullptr && detail::same_text(f.part_of, kCacheMissesUmbrella)) {
      n += static_cast<uint64_t>(this->*f.value);
    }
  }
  return static_cast<int64_t>(n);
}

/// The parts of the umbrella `key` (kCompilesUmbrella, kCacheMissesUmbrella) added up in the
/// counts of a phase or a window: every compile, or every cache miss, whichever probe saw it.
inline int64_t umbrella_total(const ProbeCounts& counts, std::string_view key) {
  int64_t sum = 0;
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.part_of != nullptr && key == f.part_of && f.value != nullptr) sum += counts.*f.value;
  }
  return sum;
}

/// The same in one step's sections: each part's source, where the step has it.
inline int64_t umbrella_total(const StepRecord& step, std::string_view key) {
  int64_t sum = 0;
  for (const ProbeCountField& f : kProbeCounts) {
    if (f.part_of == nullptr || key != f.part_of || f.source.value == nullptr) continue;
    if (f.source.present != nullptr && !f.source.present(step)) continue;
    sum += f.source.value(step);
  }
  return sum;
}

/// How many counts the counted cost prices (costed gates): each takes a bit of a step's mask.
inline constexpr size_t kCostedCounts = [] {
  size_t n = 0;
  for (const ProbeCountField& f : kProbeCounts) n += f.gate.name != nullptr && f.gate.costed;
  return n;
}();

}  // namespace recompdiag
