#pragma once
/// \file
/// The probe counts of a set of steps (`ProbeCounts`) and the one table, `kProbeCounts`, from which
/// everything about them is derived: how each is added up from the field tables of
/// record_fields.h, whether a run measured it, the row the reports list and the signal that
/// attribution ranks.
///
/// Adding a count is its member in `ProbeCounts` and one line in `kProbeCounts`. A count of a new
/// probe section reads that section's fields with `fields_of<kSection, &S::member...>()`, which
/// checks at compile time that the fields are in the section's table.

#include <array>
#include <cstddef>
#include <cstdint>

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
  int64_t copies = 0;  ///< Cross-device copies, all directions.
  int64_t copy_bytes = 0;
  int64_t syncs = 0;
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

  /// All cache misses: JIT plan builds, first-seen signatures and kernels, module loads and CUDA
  /// graph instantiations.
  int64_t cache_misses() const {
    return jit_plan_builds + new_signatures + new_kernels + module_loads + graph_instantiations;
  }
};

/// How a count adds up the per-step values of its source over a set of steps.
enum class CountAggregate {
  kSum,    ///< The sum over the steps (wrapping: fuzzed counters must not overflow).
  kMax,    ///< The largest value seen on one step: a level, such as tensors off device.
  kSteps,  ///< The steps whose value is not zero: a flag, or a condition of the step.
};

/// Where a count's per-step value comes from: a probe section of the step. Plain data; both null
/// for the counts the analysis keeps itself (steps, compile events, alerts).
struct CountSource {
  /// Whether the step has the section, and counts in it (a sampled dispatch section): the count
  /// is then measured.
  bool (*present)(const StepRecord& step) = nullptr;
  /// The step's value. Linear in the section's integer fields, so that applied to a stride of
  /// StepColumns::for_each_run it gives the value's stride.
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
  const char* one = nullptr;   ///< "JIT compile".
  const char* many = nullptr;  ///< "JIT compiles".
  Form form = Form::kCount;
};

/// One count of ProbeCounts: its JSON key, its table row, the probe flag that says whether a run
/// measured it (null: always measured), the member, and how it is added up and read. Plain data.
struct ProbeCountField {
  const char* key;              ///< JSON key: "jit_plan_builds".
  const char* label;            ///< Table row: "JIT plan builds".
  bool ProbeCounts::*measured;  ///< has_jit, ...; absent means "not measured", never zero.
  int64_t ProbeCounts::*value;
  CountSource source = {};  ///< Where each step's value comes from; null: kept by the analysis.
  CountAggregate aggregate = CountAggregate::kSum;
  bool reported = true;  ///< Listed by the JSON and HTML reports (kProbeCountFields).
  CountSignal signal = {};
};

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

/// The source that adds up fields `kMembers` of the compiled section on the steps that carry the
/// compile ledger: elsewhere those fields were not measured.
template <auto... kMembers>
constexpr CountSource compile_ledger_fields() {
  static_assert(((field_index(kCompiledSection, kMembers) < kCompiledSection.size) && ...),
                "a count reads fields of its section's table");
  return {&count_sources::compile_ledger_present, &count_sources::sum<kCompiledSection, kMembers...>};
}

// clang-format off
/// Every count of ProbeCounts, the reported ones in the order of the reports' table. The one list
/// of counts: add_steps() adds them up, the reports list the `reported` ones, attribution ranks
/// those with a `signal` (equal scores by weight, then in this order).
///
/// Weights are prior costs of one occurrence: a compile costs far more than a first-seen op
/// signature, which costs more than one extra sync.
inline constexpr ProbeCountField kProbeCounts[] = {
    {"steps", "steps", nullptr, &ProbeCounts::steps},
    {"compile_events", "compile events", nullptr, &ProbeCounts::compile_events},
    // The root event: signatures and plan builds follow it.
    {"jit_compiles", "JIT compiles", &ProbeCounts::has_jit, &ProbeCounts::jit_compiles,
     fields_of<kJitSection, &JitStats::compiles>(), CountAggregate::kSum, true,
     {"jit_compiles", 5000.0, "JIT compile", "JIT compiles", CountSignal::Form::kCompiles}},
    {"jit_plan_builds", "JIT plan builds", &ProbeCounts::has_jit, &ProbeCounts::jit_plan_builds,
     fields_of<kJitSection, &JitStats::plan_builds>(), CountAggregate::kSum, true,
     {"jit_plan_builds", 50.0, "JIT plan build (new specialization)", "JIT plan builds (new specializations)"}},
    {"jit_profiling_runs", "JIT profiling runs", &ProbeCounts::has_jit, &ProbeCounts::jit_profiling_runs,
     fields_of<kJitSection, &JitStats::profiling_runs>(), CountAggregate::kSum, true,
     {"jit_profiling_runs", 20.0, "JIT profiling run", "JIT profiling runs"}},
    {"dynamo_compiles", "torch.compile compiles", &ProbeCounts::has_compiled, &ProbeCounts::dynamo_compiles,
     fields_of<kCompiledSection, &CompiledStats::compiles>(), CountAggregate::kSum, true,
     {"dynamo_compiles", 5000.0, "torch.compile compile", "torch.compile compiles", CountSignal::Form::kCompiles}},
    {"dynamo_recompiles", "torch.compile recompiles", &ProbeCounts::has_compiled, &ProbeCounts::dynamo_recompiles,
     fields_of<kCompiledSection, &CompiledStats::recompiles>()},
    // Past the recompile limit a frame runs eagerly at every call: a per-step cost.
    {"eager_fallbacks", "eager calls of compiled frames", &ProbeCounts::has_compiled, &ProbeCounts::eager_fallbacks,
     fields_of<kCompiledSection, &CompiledStats::eager_fallbacks>(), CountAggregate::kSum, true,
     {"eager_fallbacks", 20.0, "eager call of a compiled frame", "eager calls of compiled frames", CountSignal::Form::kExtra}},
    // A graph break splits a frame: a resume function and its compile, and the graph's work
    // runs in pieces from then on.
    {"graph_breaks", "torch.compile graph breaks", &ProbeCounts::has_compile_ledger, &ProbeCounts::graph_breaks,
     compile_ledger_fields<&CompiledStats::graph_breaks>(), CountAggregate::kSum, true,
     {"graph_breaks", 500.0, "torch.compile graph break", "torch.compile graph breaks"}},
    {"compile_cache_misses", "torch.compile cache misses (FX graph, AOTAutograd)", &ProbeCounts::has_compile_ledger, &ProbeCounts::compile_cache_misses,
     compile_ledger_fields<&CompiledStats::fx_cache_misses, &CompiledStats::aot_cache_misses>(), CountAggregate::kSum, true,
     {"compile_cache_misses", 100.0, "torch.compile cache miss", "torch.compile cache misses"}},
    {"new_signatures", "first-seen op signatures", &ProbeCounts::has_dispatch, &ProbeCounts::new_signatures,
     fields_of<kDispatchSection, &DispatchStats::new_signatures>(), CountAggregate::kSum, true,
     {"new_signatures", 5.0, "first-seen op signature", "first-seen op signatures"}},
    {"host_ops", "host ops", &ProbeCounts::has_dispatch, &ProbeCounts::host_ops,
     fields_of<kDispatchSection, &DispatchStats::host_ops>(), CountAggregate::kSum, true,
     {"host_ops", 1.0, "extra host op", "extra host ops", CountSignal::Form::kExtra}},
    {"copies", "cross-device copies", &ProbeCounts::has_dispatch, &ProbeCounts::copies,
     fields_of<kDispatchSection, &DispatchStats::copies_h2d, &DispatchStats::copies_d2h, &DispatchStats::copies_d2d>(),
     CountAggregate::kSum, true,
     {"copies", 2.0, "extra cross-device copy", "extra cross-device copies", CountSignal::Form::kCopies}},
    {"copy_bytes", "copied bytes", &ProbeCounts::has_dispatch, &ProbeCounts::copy_bytes,
     fields_of<kDispatchSection, &DispatchStats::bytes_h2d, &DispatchStats::bytes_d2h, &DispatchStats::bytes_d2d>()},
    {"syncs", "host syncs", &ProbeCounts::has_dispatch, &ProbeCounts::syncs,
     fields_of<kDispatchSection, &DispatchStats::syncs>(), CountAggregate::kSum, true,
     {"syncs", 2.0, "extra host sync", "extra host syncs", CountSignal::Form::kExtra}},
    {"new_kernels", "first-seen kernels", &ProbeCounts::has_cupti, &ProbeCounts::new_kernels,
     fields_of<kCuptiSection, &CuptiStats::new_kernels>(), CountAggregate::kSum, true,
     {"new_kernels", 10.0, "first-seen kernel", "first-seen kernels"}},
    {"module_loads", "module loads", &ProbeCounts::has_cupti, &ProbeCounts::module_loads,
     fields_of<kCuptiSection, &CuptiStats::module_loads>(), CountAggregate::kSum, true,
     {"module_loads", 100.0, "GPU module load", "GPU module loads"}},
    {"graph_instantiations", "CUDA graph instantiations", &ProbeCounts::has_cupti, &ProbeCounts::graph_instantiations,
     fields_of<kCuptiSection, &CuptiStats::graph_instantiations>(), CountAggregate::kSum, true,
     {"graph_instantiations", 100.0, "CUDA graph instantiation", "CUDA graph instantiations"}},
    // A reset optimizer state changes what the run learns as well as its speed: always name it.
    {"optimizer_resets", "optimizer state resets", &ProbeCounts::has_optimizer, &ProbeCounts::optimizer_resets,
     fields_of<kOptimizerSection, &OptimizerStats::state_reset>(), CountAggregate::kSteps, true,
     {"optimizer_reset", 200.0, "state reset", "state resets", CountSignal::Form::kOptimizerReset}},
    {"optimizer_state_off_device", "optimizer state off device (max)", &ProbeCounts::has_optimizer, &ProbeCounts::optimizer_state_off_device,
     fields_of<kOptimizerSection, &OptimizerStats::state_off_device>(), CountAggregate::kMax, true,
     {"optimizer_state_off_device", 5.0, "optimizer state tensor off device", "optimizer state tensors off device"}},
    {"optimizer_state_missing", "optimizer state missing (max)", &ProbeCounts::has_optimizer, &ProbeCounts::optimizer_state_missing,
     fields_of<kOptimizerSection, &OptimizerStats::state_missing>(), CountAggregate::kMax},
    {"optimizer_state_dtype_mismatch", "optimizer state with another dtype (max)", &ProbeCounts::has_optimizer, &ProbeCounts::optimizer_state_dtype_mismatch,
     fields_of<kOptimizerSection, &OptimizerStats::state_dtype_mismatch>(), CountAggregate::kMax, false,
     {"optimizer_state_dtype", 5.0, "optimizer state tensor with another dtype than its parameter",
      "optimizer state tensors with another dtype than its parameter"}},
    // Per step: an lr that is not in effect changes what every step learns.
    {"lr_not_in_effect", "steps with the lr not in effect", &ProbeCounts::has_optimizer, &ProbeCounts::lr_not_in_effect,
     {&count_sources::present<kOptimizerSection>, &count_sources::lr_not_in_effect}, CountAggregate::kSteps, false,
     {"lr_not_in_effect", 50.0, "step", "steps", CountSignal::Form::kLr}},
    {"alerts", "alerts", nullptr, &ProbeCounts::alerts, {}, CountAggregate::kSum, true,
     {"alerts", 1.0, "alert", "alerts", CountSignal::Form::kAlerts}},
    {"slow_step_alerts", "slow_step alerts", nullptr, &ProbeCounts::slow_step_alerts, {}, CountAggregate::kSum, false},
    // Memory that grows steadily ends the run once it runs out, however fast the steps are: it
    // outranks every bounded cost (a storm of 100 compiles scores 500,000).
    {"memory_growth_alerts", "memory_growth alerts", nullptr, &ProbeCounts::memory_growth_alerts, {}, CountAggregate::kSum, false,
     {"memory_growth", 1.0e6, "memory_growth alert", "memory_growth alerts", CountSignal::Form::kMemoryGrowth}},
};
// clang-format on

namespace detail {
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

}  // namespace recompdiag
