#pragma once
/// \file
/// One field table per probe section of a step (dispatch, jit, optimizer, placement, cupti, comm,
/// memory, cuda_memory, compiled): each field's JSON name, struct member, unit, help text and the Prometheus
/// series it feeds.
///
/// Everything that handles a section iterates its table instead of naming fields: the run-file
/// writer and reader, the per-section totals of the reports, the Prometheus exporter and the
/// probes' counters. Adding a counter is the struct member in record.h plus one line here. A new
/// section is its struct, its table, its `Section` and one line in `for_each_section`.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <variant>

#include "recompdiag/core/record.h"

namespace recompdiag {

/// Unit of a field, as the run file holds it.
enum class FieldUnit {
  kCount,         ///< Events in the step.
  kBytes,         ///< Bytes in the step.
  kMilliseconds,  ///< Time in the step (the exporter serves seconds).
  kFlag,          ///< True or false.
  kLevel,         ///< A level at step end (a state size, an lr), not summed over steps.
};

/// Kind of the Prometheus series a field feeds.
enum class MetricKind {
  kNone,     ///< Not exported.
  kCounter,  ///< Added per step, labelled by run and phase.
  kGauge,    ///< Set at each step, labelled by run.
};

/// The Prometheus series a field feeds: a family of the exporter's catalogue, and the one label
/// that tells this field's series apart from its siblings in that family (or none).
struct MetricTarget {
  MetricKind kind = MetricKind::kNone;
  const char* family = nullptr;  ///< Family name, e.g. "recompdiag_cache_misses_total".
  const char* label = nullptr;   ///< Label name, e.g. "kind"; nullptr when the family has none.
  const char* value = nullptr;   ///< Label value, e.g. "dispatcher_signature".
};

/// A counter fed by a field: one series per run and phase.
constexpr MetricTarget counter(const char* family, const char* label = nullptr,
                               const char* value = nullptr) {
  return {MetricKind::kCounter, family, label, value};
}
/// A gauge fed by a field: one series per run, set to the latest step's value.
constexpr MetricTarget gauge(const char* family, const char* label = nullptr,
                             const char* value = nullptr) {
  return {MetricKind::kGauge, family, label, value};
}

/// One field of section struct `S`.
template <class S>
struct Field {
  const char* name;  ///< JSON key in the step line.
  std::variant<int64_t S::*, double S::*, bool S::*> member;
  FieldUnit unit;
  const char* help;     ///< One sentence: what the field counts.
  MetricTarget metric;  ///< Where the exporter serves it; kNone when it does not.
};

/// A probe section: its name (the key of the step line and of `RunHeader::probes`), where it
/// lives in a `StepRecord`, and its field table. Plain constant data.
template <class S>
struct Section {
  const char* name;
  std::optional<S> StepRecord::*record;
  const Field<S>* fields;
  std::size_t size;
  /// Whether a present section holds counts (the dispatcher's unsampled steps do not); nullptr:
  /// always.
  bool (*counted)(const S&) = nullptr;

  const Field<S>* begin() const { return fields; }
  const Field<S>* end() const { return fields + size; }
  /// The section of `step` when present and counted, else nullptr.
  const S* of(const StepRecord& step) const {
    const std::optional<S>& s = step.*record;
    if (!s || (counted != nullptr && !counted(*s))) return nullptr;
    return &*s;
  }
};

/// The value of field `f` of `s` as a double (a flag is 0 or 1).
template <class S>
double field_value(const S& s, const Field<S>& f) {
  return std::visit([&](auto member) { return static_cast<double>(s.*member); }, f.member);
}

// clang-format off
inline constexpr Field<DispatchStats> kDispatchFields[] = {
    {"ops", &DispatchStats::ops, FieldUnit::kCount, "Top-level ATen ops seen in the step", {}},
    {"ops_cpu", &DispatchStats::ops_cpu, FieldUnit::kCount, "Ops whose tensors were on the host",
     counter("recompdiag_dispatched_ops_total", "target", "cpu")},
    {"ops_cuda", &DispatchStats::ops_cuda, FieldUnit::kCount, "Ops whose tensors were on a CUDA device",
     counter("recompdiag_dispatched_ops_total", "target", "cuda")},
    {"host_ops", &DispatchStats::host_ops, FieldUnit::kCount, "Ops on the host while the expected device is CUDA",
     counter("recompdiag_host_ops_total")},
    {"copies_h2d", &DispatchStats::copies_h2d, FieldUnit::kCount, "Cross-device copies host to device",
     counter("recompdiag_cross_device_copies_total", "direction", "h2d")},
    {"copies_d2h", &DispatchStats::copies_d2h, FieldUnit::kCount, "Cross-device copies device to host",
     counter("recompdiag_cross_device_copies_total", "direction", "d2h")},
    {"copies_d2d", &DispatchStats::copies_d2d, FieldUnit::kCount, "Copies between two devices",
     counter("recompdiag_cross_device_copies_total", "direction", "d2d")},
    {"bytes_h2d", &DispatchStats::bytes_h2d, FieldUnit::kBytes, "Bytes copied host to device",
     counter("recompdiag_cross_device_copy_bytes_total", "direction", "h2d")},
    {"bytes_d2h", &DispatchStats::bytes_d2h, FieldUnit::kBytes, "Bytes copied device to host",
     counter("recompdiag_cross_device_copy_bytes_total", "direction", "d2h")},
    {"bytes_d2d", &DispatchStats::bytes_d2d, FieldUnit::kBytes, "Bytes copied between devices",
     counter("recompdiag_cross_device_copy_bytes_total", "direction", "d2d")},
    {"syncs", &DispatchStats::syncs, FieldUnit::kCount, "Host syncs (item, _local_scalar_dense, nonzero, ...), the recorder's excluded",
     counter("recompdiag_syncs_total", "source", sections::kDispatch)},
    {"recorder_syncs", &DispatchStats::recorder_syncs, FieldUnit::kCount, "Host reads made by the recorder itself (the loss values)",
     counter("recompdiag_syncs_total", "source", "recorder")},
    {"new_signatures", &DispatchStats::new_signatures, FieldUnit::kCount, "First-seen (op, dtypes, shapes, device) signatures: dispatcher cache misses",
     counter("recompdiag_cache_misses_total", "kind", "dispatcher_signature")},
    {"dropped", &DispatchStats::dropped, FieldUnit::kCount, "Events the probe could not store (table full)",
     counter("recompdiag_dropped_probe_records_total", "probe", sections::kDispatch)},
    {"sampled", &DispatchStats::sampled, FieldUnit::kFlag, "False when sampling skipped the step: the counters are absent", {}},
    {"counted", &DispatchStats::counted, FieldUnit::kFlag, "On an unsampled step, whether ops and syncs were still counted", {}},
};

inline constexpr Field<JitStats> kJitFields[] = {
    {"compiles", &JitStats::compiles, FieldUnit::kCount, "Compilation units created (torch::jit::compile)",
     counter("recompdiag_compile_events_total", "kind", "jit_compile")},
    {"plan_builds", &JitStats::plan_builds, FieldUnit::kCount, "Graph-executor optimized plans built (new specializations)",
     counter("recompdiag_compile_events_total", "kind", "plan_build")},
    {"profiling_runs", &JitStats::profiling_runs, FieldUnit::kCount, "Runs the profiling executor spent recording shapes",
     counter("recompdiag_compile_events_total", "kind", "profiling_run")},
};

inline constexpr Field<OptimizerStats> kOptimizerFields[] = {
    {"params", &OptimizerStats::params, FieldUnit::kLevel, "Parameters the optimizer holds", {}},
    {"params_with_state", &OptimizerStats::params_with_state, FieldUnit::kLevel, "Parameters that have optimizer state", {}},
    {"state_tensors", &OptimizerStats::state_tensors, FieldUnit::kLevel, "Defined optimizer state tensors (moments)", {}},
    {"state_bytes", &OptimizerStats::state_bytes, FieldUnit::kLevel, "Bytes of optimizer state",
     gauge("recompdiag_optimizer_state_bytes")},
    {"state_off_device", &OptimizerStats::state_off_device, FieldUnit::kLevel, "State tensors on another device than their parameter",
     gauge("recompdiag_optimizer_state_tensors", "location", "off_device")},
    {"state_dtype_mismatch", &OptimizerStats::state_dtype_mismatch, FieldUnit::kLevel, "State tensors with another dtype than their parameter",
     gauge("recompdiag_optimizer_state_dtype_mismatch_tensors")},
    {"state_missing", &OptimizerStats::state_missing, FieldUnit::kLevel, "Parameters with a gradient but no state after a step",
     gauge("recompdiag_optimizer_state_missing_params")},
    {"step_min", &OptimizerStats::step_min, FieldUnit::kLevel, "Smallest Adam step counter across parameters", {}},
    {"step_max", &OptimizerStats::step_max, FieldUnit::kLevel, "Largest Adam step counter across parameters", {}},
    {"state_reset", &OptimizerStats::state_reset, FieldUnit::kFlag, "A step counter fell since the previous step (state rebuilt)",
     counter("recompdiag_optimizer_state_resets_total")},
    {"lr_requested", &OptimizerStats::lr_requested, FieldUnit::kLevel, "The lr the trainer asked for",
     gauge("recompdiag_learning_rate_requested")},
    {"lr_effective", &OptimizerStats::lr_effective, FieldUnit::kLevel, "The lr in the optimizer's param groups", {}},
};

inline constexpr Field<PlacementStats> kPlacementFields[] = {
    {"params_off_device", &PlacementStats::params_off_device, FieldUnit::kLevel, "Parameters not on the expected device",
     gauge("recompdiag_tensors_off_device", "kind", "parameter")},
    {"grads_off_device", &PlacementStats::grads_off_device, FieldUnit::kLevel, "Gradients not on the expected device",
     gauge("recompdiag_tensors_off_device", "kind", "gradient")},
    {"buffers_off_device", &PlacementStats::buffers_off_device, FieldUnit::kLevel, "Buffers not on the expected device",
     gauge("recompdiag_tensors_off_device", "kind", "buffer")},
};

inline constexpr Field<CuptiStats> kCuptiFields[] = {
    {"kernels", &CuptiStats::kernels, FieldUnit::kCount, "GPU kernels that ran",
     counter("recompdiag_kernels_total")},
    {"new_kernels", &CuptiStats::new_kernels, FieldUnit::kCount, "Kernel names first seen in this step",
     counter("recompdiag_cache_misses_total", "kind", "new_kernel")},
    {"module_loads", &CuptiStats::module_loads, FieldUnit::kCount, "New GPU code loaded: kernel-cache misses",
     counter("recompdiag_cache_misses_total", "kind", "kernel_module_load")},
    {"graph_instantiations", &CuptiStats::graph_instantiations, FieldUnit::kCount, "CUDA graphs instantiated",
     counter("recompdiag_compile_events_total", "kind", "cuda_graph_instantiation")},
    {"memcpy_h2d", &CuptiStats::memcpy_h2d, FieldUnit::kCount, "CUDA memcpy activities host to device",
     counter("recompdiag_cuda_memcpy_total", "direction", "h2d")},
    {"memcpy_d2h", &CuptiStats::memcpy_d2h, FieldUnit::kCount, "CUDA memcpy activities device to host",
     counter("recompdiag_cuda_memcpy_total", "direction", "d2h")},
    {"memcpy_d2d", &CuptiStats::memcpy_d2d, FieldUnit::kCount, "CUDA memcpy activities device to device",
     counter("recompdiag_cuda_memcpy_total", "direction", "d2d")},
    {"bytes_h2d", &CuptiStats::bytes_h2d, FieldUnit::kBytes, "Bytes of CUDA memcpy host to device",
     counter("recompdiag_cuda_memcpy_bytes_total", "direction", "h2d")},
    {"bytes_d2h", &CuptiStats::bytes_d2h, FieldUnit::kBytes, "Bytes of CUDA memcpy device to host",
     counter("recompdiag_cuda_memcpy_bytes_total", "direction", "d2h")},
    {"bytes_d2d", &CuptiStats::bytes_d2d, FieldUnit::kBytes, "Bytes of CUDA memcpy device to device",
     counter("recompdiag_cuda_memcpy_bytes_total", "direction", "d2d")},
    {"memsets", &CuptiStats::memsets, FieldUnit::kCount, "CUDA memset activities", {}},
    {"syncs", &CuptiStats::syncs, FieldUnit::kCount, "CUDA synchronizations seen by CUPTI",
     counter("recompdiag_syncs_total", "source", sections::kCupti)},
    {"kernel_ms", &CuptiStats::kernel_ms, FieldUnit::kMilliseconds, "Sum of kernel durations",
     counter("recompdiag_kernel_seconds_total")},
    {"dropped", &CuptiStats::dropped, FieldUnit::kCount, "Activity records CUPTI dropped or the probe could not store",
     counter("recompdiag_dropped_probe_records_total", "probe", sections::kCupti)},
};

inline constexpr Field<CommStats> kCommFields[] = {
    {"collectives", &CommStats::collectives, FieldUnit::kCount, "Collectives this rank completed (one coalesced all-reduce of the gradients per step)",
     counter("recompdiag_collectives_total")},
    {"bytes", &CommStats::bytes, FieldUnit::kBytes, "Bytes this rank contributed to its collectives",
     counter("recompdiag_collective_bytes_total")},
    {"wait_ms", &CommStats::wait_ms, FieldUnit::kMilliseconds, "Time from issuing a collective to its completion: waiting for the slowest rank, then the transfer",
     counter("recompdiag_collective_wait_seconds_total")},
};

inline constexpr Field<MemoryStats> kMemoryFields[] = {
    {"resident_bytes", &MemoryStats::resident_bytes, FieldUnit::kLevel, "Resident set size of the process at step end",
     gauge("recompdiag_process_resident_bytes")},
};

inline constexpr Field<CudaMemoryStats> kCudaMemoryFields[] = {
    {"allocated_bytes", &CudaMemoryStats::allocated_bytes, FieldUnit::kLevel, "Bytes in tensors of the CUDA caching allocator at step end",
     gauge("recompdiag_cuda_allocator_bytes", "kind", "allocated")},
    {"reserved_bytes", &CudaMemoryStats::reserved_bytes, FieldUnit::kLevel, "Bytes the CUDA caching allocator holds from the driver at step end",
     gauge("recompdiag_cuda_allocator_bytes", "kind", "reserved")},
};

inline constexpr Field<CompiledStats> kCompiledFields[] = {
    {"lookups", &CompiledStats::lookups, FieldUnit::kCount, "Calls of frames that have torch.compile code: dynamo cache lookups",
     counter("recompdiag_compiled_lookups_total")},
    {"region_runs", &CompiledStats::region_runs, FieldUnit::kCount, "Runs of torch.compile code (compiled regions)",
     counter("recompdiag_compiled_region_runs_total")},
    {"compiles", &CompiledStats::compiles, FieldUnit::kCount, "Compiled regions run for the first time: torch.compile compiles",
     counter("recompdiag_compile_events_total", "kind", "dynamo_compile")},
    {"recompiles", &CompiledStats::recompiles, FieldUnit::kCount, "Compiles of a frame that had compiled before: a guard failed (counted in compiles too)",
     {}},
    {"eager_fallbacks", &CompiledStats::eager_fallbacks, FieldUnit::kCount, "Calls of a compiled frame that ran no compiled code: eager (recompile limit, skipped frame)",
     counter("recompdiag_compiled_eager_fallbacks_total")},
    {"compile_ms", &CompiledStats::compile_ms, FieldUnit::kMilliseconds, "Time torch.compile spent compiling in the step",
     counter("recompdiag_compile_seconds_total", "compiler", "dynamo")},
    {"sampled", &CompiledStats::sampled, FieldUnit::kFlag, "False when sampling skipped the step: the counters are absent", {}},
    {"ledger", &CompiledStats::ledger, FieldUnit::kFlag, "True when torch's own compile counters were read: the fields after it are measured", {}},
    {"compile_ids", &CompiledStats::compile_ids, FieldUnit::kCount, "Dynamo compiles started, one per compile id F/C (TORCH_LOGS shows them as [F/C])",
     counter("recompdiag_dynamo_compile_ids_total")},
    {"backward_compiles", &CompiledStats::backward_compiles, FieldUnit::kCount, "AOTAutograd backward graphs compiled at their first backward",
     counter("recompdiag_dynamo_backward_compiles_total")},
    {"graphs", &CompiledStats::graphs, FieldUnit::kCount, "FX graphs dynamo captured",
     counter("recompdiag_dynamo_graphs_total")},
    {"graph_breaks", &CompiledStats::graph_breaks, FieldUnit::kCount, "Graph breaks: each splits a frame and compiles a resume function",
     counter("recompdiag_dynamo_graph_breaks_total")},
    {"fx_cache_hits", &CompiledStats::fx_cache_hits, FieldUnit::kCount, "Inductor FX-graph cache hits",
     counter("recompdiag_fx_graph_cache_total", "outcome", "hit")},
    {"fx_cache_misses", &CompiledStats::fx_cache_misses, FieldUnit::kCount, "Inductor FX-graph cache misses: the graph was compiled",
     counter("recompdiag_fx_graph_cache_total", "outcome", "miss")},
    {"fx_cache_bypasses", &CompiledStats::fx_cache_bypasses, FieldUnit::kCount, "Inductor FX-graph cache bypasses: the graph could not be cached",
     counter("recompdiag_fx_graph_cache_total", "outcome", "bypass")},
    {"aot_cache_hits", &CompiledStats::aot_cache_hits, FieldUnit::kCount, "AOTAutograd cache hits",
     counter("recompdiag_aot_autograd_cache_total", "outcome", "hit")},
    {"aot_cache_misses", &CompiledStats::aot_cache_misses, FieldUnit::kCount, "AOTAutograd cache misses",
     counter("recompdiag_aot_autograd_cache_total", "outcome", "miss")},
    {"aot_cache_bypasses", &CompiledStats::aot_cache_bypasses, FieldUnit::kCount, "AOTAutograd cache bypasses",
     counter("recompdiag_aot_autograd_cache_total", "outcome", "bypass")},
    {"kernels", &CompiledStats::kernels, FieldUnit::kCount, "Kernels Inductor generated",
     counter("recompdiag_inductor_kernels_total")},
    {"dynamo_ms", &CompiledStats::dynamo_ms, FieldUnit::kMilliseconds, "Compile time in dynamo: bytecode tracing and guards",
     counter("recompdiag_compile_stage_seconds_total", "stage", "dynamo")},
    {"aot_ms", &CompiledStats::aot_ms, FieldUnit::kMilliseconds, "Compile time in AOTAutograd: the joint graph and its partition",
     counter("recompdiag_compile_stage_seconds_total", "stage", "aot_autograd")},
    {"inductor_ms", &CompiledStats::inductor_ms, FieldUnit::kMilliseconds, "Compile time in Inductor: lowering and code generation",
     counter("recompdiag_compile_stage_seconds_total", "stage", "inductor")},
    {"kernel_compile_ms", &CompiledStats::kernel_compile_ms, FieldUnit::kMilliseconds, "Compile time of the generated C++ kernels (torch's compile_file timer)",
     counter("recompdiag_compile_stage_seconds_total", "stage", "kernel_compile")},
    {"cudagraph_recordings", &CompiledStats::cudagraph_recordings, FieldUnit::kCount, "CUDA graphs recorded by cudagraph trees: a re-recording is torch.compile's other recompile",
     counter("recompdiag_cudagraph_recordings_total")},
    {"cudagraph_skips", &CompiledStats::cudagraph_skips, FieldUnit::kCount, "Graphs cudagraph trees declined to record (they run without a CUDA graph)",
     counter("recompdiag_cudagraph_skips_total")},
    {"frame_compiles_max", &CompiledStats::frame_compiles_max, FieldUnit::kLevel, "Compiles of the frame that recompiled most at the latest step that compiled",
     gauge("recompdiag_dynamo_frame_compiles_max")},
    {"recompile_limit", &CompiledStats::recompile_limit, FieldUnit::kLevel, "Compiles of one frame after which dynamo runs it eagerly",
     gauge("recompdiag_dynamo_recompile_limit")},
};
// clang-format on

inline bool dispatch_counted(const DispatchStats& s) { return s.sampled; }
inline bool compiled_counted(const CompiledStats& s) { return s.sampled; }

inline constexpr Section<DispatchStats> kDispatchSection{
    sections::kDispatch, &StepRecord::dispatch, kDispatchFields, std::size(kDispatchFields),
    &dispatch_counted};
inline constexpr Section<JitStats> kJitSection{sections::kJit, &StepRecord::jit, kJitFields,
                                               std::size(kJitFields)};
inline constexpr Section<OptimizerStats> kOptimizerSection{
    sections::kOptimizer, &StepRecord::optimizer, kOptimizerFields, std::size(kOptimizerFields)};
inline constexpr Section<PlacementStats> kPlacementSection{
    sections::kPlacement, &StepRecord::placement, kPlacementFields, std::size(kPlacementFields)};
inline constexpr Section<CuptiStats> kCuptiSection{sections::kCupti, &StepRecord::cupti,
                                                   kCuptiFields, std::size(kCuptiFields)};
inline constexpr Section<CommStats> kCommSection{sections::kComm, &StepRecord::comm, kCommFields,
                                                 std::size(kCommFields)};
inline constexpr Section<MemoryStats> kMemorySection{sections::kMemory, &StepRecord::memory,
                                                     kMemoryFields, std::size(kMemoryFields)};
inline constexpr Section<CudaMemoryStats> kCudaMemorySection{
    sections::kCudaMemory, &StepRecord::cuda_memory, kCudaMemoryFields,
    std::size(kCudaMemoryFields)};
inline constexpr Section<CompiledStats> kCompiledSection{
    sections::kCompiled, &StepRecord::compiled, kCompiledFields, std::size(kCompiledFields),
    &compiled_counted};

/// A section as a type: `decltype(c)::value` is the `Section` constant, usable where a constant
/// expression is needed (code that unrolls a section's fields at compile time, as the exporter's
/// per-step path does).
template <const auto& kSection>
struct SectionConstant {
  static constexpr const auto& value = kSection;
};

/// Calls `f(SectionConstant<kSection>{})` for every probe section, in run-file order. `f` is a
/// generic callable. The one list of sections.
template <class F>
constexpr void for_each_section_constant(F&& f) {
  f(SectionConstant<kDispatchSection>{});
  f(SectionConstant<kJitSection>{});
  f(SectionConstant<kOptimizerSection>{});
  f(SectionConstant<kPlacementSection>{});
  f(SectionConstant<kCuptiSection>{});
  f(SectionConstant<kCommSection>{});
  f(SectionConstant<kMemorySection>{});
  f(SectionConstant<kCudaMemorySection>{});
  f(SectionConstant<kCompiledSection>{});
}

/// How many probe sections there are: the size of per-section arrays.
inline constexpr std::size_t kSectionCount = [] {
  std::size_t n = 0;
  for_each_section_constant([&](auto) { ++n; });
  return n;
}();

/// Calls `f(section)` for every probe section, in run-file order. `f` is a generic callable.
template <class F>
void for_each_section(F&& f) {
  for_each_section_constant([&](auto c) { f(decltype(c)::value); });
}

/// Fields of all sections together: the size of a flat per-field array.
inline std::size_t total_field_count() {
  std::size_t n = 0;
  for_each_section([&](const auto& section) { n += section.size; });
  return n;
}

/// Index of `member` in `section`'s table, at compile time (the size when absent), for probes
/// that keep one counter per field.
template <class S, class M>
constexpr std::size_t field_index(const Section<S>& section, M S::*member) {
  for (std::size_t i = 0; i < section.size; ++i) {
    const auto* p = std::get_if<M S::*>(&section.fields[i].member);
    if (p != nullptr && *p == member) return i;
  }
  return section.size;
}

/// Where the compiled section's ledger starts: its `ledger` flag, then torch's own counters read
/// by the Python package. The fields before it are the C++ probe's own (dynamo's scopes). Every
/// reader of the ledger (the probe's add_ledger, the HTML report's table) starts here.
inline constexpr std::size_t kCompiledLedgerFirst =
    field_index(kCompiledSection, &CompiledStats::ledger);
static_assert(kCompiledLedgerFirst < kCompiledSection.size, "the compiled section has a ledger");

}  // namespace recompdiag
