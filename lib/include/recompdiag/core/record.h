#pragma once
/// \file
/// The run-file record model: what one training run writes, one JSON object per line.
///
/// A run file is JSON Lines. Line 1 is the `RunHeader` ("type":"run"), then one `StepRecord` per
/// training step ("type":"step"), `EventRecord`s where something happened ("type":"event"), and a
/// `RunSummary` at the end ("type":"summary"). The structs here are plain data: no LibTorch, no
/// I/O. Probe sections of a step are optional; an absent section means the probe was off or
/// unavailable, never "zero".

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace recompdiag {

/// Version of the run-file format. Readers reject files with any other value.
inline constexpr int kRunSchemaVersion = 1;

/// Names of the probe sections of a step: the keys of a step line, of `RunHeader::probes` and of
/// the exporter's `probe` label. One name per probe, in real and synthetic runs alike.
namespace sections {
inline constexpr char kDispatch[] = "dispatch";    ///< The dispatcher probe (DispatchStats).
inline constexpr char kJit[] = "jit";              ///< The JIT probe (JitStats).
inline constexpr char kOptimizer[] = "optimizer";  ///< The optimizer-state probe.
inline constexpr char kPlacement[] = "placement";  ///< The placement probe.
inline constexpr char kCupti[] = "cupti";          ///< The CUPTI probe (CuptiStats).
inline constexpr char kComm[] = "comm";            ///< The collectives of a rank (CommStats).
inline constexpr char kMemory[] = "memory";        ///< The process-memory probe (MemoryStats).
/// The CUDA caching allocator's probe (CudaMemoryStats).
inline constexpr char kCudaMemory[] = "cuda_memory";
/// The torch.compile probe (CompiledStats): what TorchDynamo ran in the step.
inline constexpr char kCompiled[] = "compiled";
}  // namespace sections

/// Availability of one probe or SDK: `available` or the reason it is not.
struct Availability {
  bool available = false;
  std::string reason;  ///< Empty when available; else "unavailable: <why>" material.
};

/// Dispatcher-probe counters for one step (LibTorch RecordFunction observer).
struct DispatchStats {
  int64_t ops = 0;         ///< Top-level ATen ops seen in the step.
  int64_t ops_cpu = 0;     ///< Ops whose tensors were on the host.
  int64_t ops_cuda = 0;    ///< Ops whose tensors were on a CUDA device.
  int64_t host_ops = 0;    ///< Ops on the host while the expected device is CUDA.
  int64_t copies_h2d = 0;  ///< Cross-device copies host -> device.
  int64_t copies_d2h = 0;  ///< Cross-device copies device -> host.
  int64_t copies_d2d = 0;  ///< Copies between two devices.
  int64_t bytes_h2d = 0;
  int64_t bytes_d2h = 0;
  int64_t bytes_d2d = 0;
  int64_t syncs = 0;  ///< Host syncs (item, _local_scalar_dense, nonzero, ...), ours excluded.
  int64_t recorder_syncs = 0;  ///< Host reads made by the recorder itself (the loss values).
  /// First-seen (op, dtypes, shapes, device) signatures: dispatcher cache misses.
  int64_t new_signatures = 0;
  int64_t dropped = 0;  ///< Events the probe could not store (buffer full).
  bool sampled = true;  ///< False when sampling skipped this step: counters are absent.
  /// On an unsampled step: true when ops, syncs and recorder_syncs were still counted (by name,
  /// without reading op inputs); the other counters are absent either way. True on sampled steps.
  bool counted = true;
};

/// TorchScript JIT counters for one step.
struct JitStats {
  int64_t compiles = 0;        ///< Compilation units created (torch::jit::compile).
  int64_t plan_builds = 0;     ///< Graph-executor optimized plans built (new specializations).
  int64_t profiling_runs = 0;  ///< Runs the profiling executor spent collecting shapes.
};

/// Where the optimizer state lives, checked against each parameter.
struct OptimizerStats {
  int64_t params = 0;             ///< Parameters the optimizer holds.
  int64_t params_with_state = 0;  ///< Parameters that have state.
  int64_t state_tensors = 0;      ///< Defined state tensors (moments).
  int64_t state_bytes = 0;
  int64_t state_off_device = 0;  ///< State tensors on another device than their parameter.
  int64_t state_dtype_mismatch = 0;
  int64_t state_missing = 0;  ///< Parameters with a gradient but no state after a step.
  int64_t step_min = 0;       ///< Smallest Adam step counter across parameters.
  int64_t step_max = 0;
  bool state_reset = false;   ///< A step counter fell since the previous step.
  double lr_requested = 0.0;  ///< The lr the trainer asked for.
  double lr_effective = 0.0;  ///< The lr in the optimizer's param group.
};

/// Relative tolerance within which an effective lr equals the requested one: the default of
/// `HealthOptions::lr_rel_tolerance` and what the analysis counts as `lr_not_in_effect`.
inline constexpr double kLrRelTolerance = 1e-6;

/// Whether the lr the trainer asked for is the one in the optimizer's param groups, within
/// `rel_tolerance` of the requested lr. True when no lr was requested (`lr_requested` <= 0). The
/// one test of the health rule `lr_not_in_effect` and of the analysis's count of the same name.
inline bool lr_in_effect(const OptimizerStats& o, double rel_tolerance = kLrRelTolerance) {
  if (!(o.lr_requested > 0.0)) return true;
  // A NaN effective lr compares as in effect, as the health rule always had it.
  const double tolerance = rel_tolerance * std::max(o.lr_requested, 1e-300);
  return !(std::abs(o.lr_effective - o.lr_requested) > tolerance);
}

/// Tensors not on the expected device.
struct PlacementStats {
  int64_t params_off_device = 0;
  int64_t grads_off_device = 0;
  int64_t buffers_off_device = 0;
};

/// CUPTI activity and callback counters for one step.
struct CuptiStats {
  int64_t kernels = 0;
  int64_t new_kernels = 0;           ///< Kernel names first seen in this step.
  int64_t module_loads = 0;          ///< New GPU code loaded: kernel-cache misses.
  int64_t graph_instantiations = 0;  ///< CUDA graphs instantiated.
  int64_t memcpy_h2d = 0;
  int64_t memcpy_d2h = 0;
  int64_t memcpy_d2d = 0;
  int64_t bytes_h2d = 0;
  int64_t bytes_d2h = 0;
  int64_t bytes_d2d = 0;
  int64_t memsets = 0;
  int64_t syncs = 0;
  double kernel_ms = 0.0;  ///< Sum of kernel durations.
  int64_t dropped = 0;     ///< Activity records CUPTI dropped.
};

/// The collectives one rank of a data-parallel job ran in one step: how many, how many bytes they
/// carried, and how long the rank waited in them (for the slowest rank to arrive, then the
/// transfer itself). A rank that waits long while others do not is waiting for a straggler.
struct CommStats {
  int64_t collectives = 0;  ///< Collectives completed (a coalesced all-reduce is one).
  int64_t bytes = 0;        ///< Bytes this rank contributed to them.
  double wait_ms = 0.0;     ///< Host time from issuing each collective to its completion.
};

/// The process's memory at step end, read from the kernel (/proc/self/statm).
struct MemoryStats {
  int64_t resident_bytes = 0;  ///< Resident set size: pages of the process in RAM, in bytes.
};

/// The CUDA caching allocator of the expected device at step end (LibTorch's own accounting).
struct CudaMemoryStats {
  int64_t allocated_bytes = 0;  ///< Bytes in tensors the allocator has handed out.
  int64_t reserved_bytes = 0;   ///< Bytes the allocator holds from the driver, cached or in use.
};

/// What torch.compile (TorchDynamo) ran in one step, from the RecordFunction scopes dynamo opens:
/// "TorchDynamo Cache Lookup" on each call of a frame that has compiled code, and
/// "Torch-Compiled Region: F/C" around each run of compiled code (F: frame, C: its compile).
struct CompiledStats {
  int64_t lookups = 0;      ///< Calls of frames with compiled code (cache lookups).
  int64_t region_runs = 0;  ///< Runs of compiled code.
  /// Compiled regions run for the first time: a compile happened (a frame's first or a later).
  int64_t compiles = 0;
  int64_t recompiles = 0;  ///< Of which a frame's second or later compile (C > 0).
  /// Lookups that ran no compiled code: the frame ran eagerly (recompile limit reached, skipped).
  int64_t eager_fallbacks = 0;
  double compile_ms = 0.0;  ///< Time dynamo spent compiling in the step (its compile callbacks).
  /// False when sampling skipped the step: the counters are absent. A step that compiles is
  /// always observed (the compile callback turns the probe on).
  bool sampled = true;

  // The compile ledger: torch's own counters, read by the Python package after a step that
  // compiled (docs/python.md, "What the counts count"). Absent (all zero, `ledger` false) where
  // only the C++ scopes were seen.
  bool ledger = false;       ///< The fields below were read from torch's counters.
  int64_t compile_ids = 0;   ///< Dynamo compiles started: one per compile id "F/C".
  int64_t backward_compiles = 0;  ///< AOTAutograd's backward graphs, compiled at their first use.
  int64_t graphs = 0;        ///< FX graphs dynamo captured.
  int64_t graph_breaks = 0;  ///< Graph breaks: each splits a frame and adds a resume function.
  int64_t fx_cache_hits = 0;  ///< Inductor's FX-graph cache.
  int64_t fx_cache_misses = 0;
  int64_t fx_cache_bypasses = 0;
  int64_t aot_cache_hits = 0;  ///< AOTAutograd's cache.
  int64_t aot_cache_misses = 0;
  int64_t aot_cache_bypasses = 0;
  int64_t kernels = 0;            ///< Kernels Inductor generated.
  double dynamo_ms = 0.0;         ///< Compile time in dynamo: tracing the bytecode, guards.
  double aot_ms = 0.0;            ///< In AOTAutograd: the joint graph and its partition.
  double inductor_ms = 0.0;       ///< In Inductor: lowering and code generation.
  double kernel_compile_ms = 0.0; ///< Compiling its generated C++ (torch's compile_file).
  int64_t cudagraph_recordings = 0;  ///< CUDA graphs recorded by cudagraph trees (a GPU only).
  int64_t cudagraph_skips = 0;       ///< Graphs cudagraph trees declined to record.
  /// Levels: the compiles (cache entries) of the frame that recompiled most at the latest step
  /// that compiled (0 when that step compiled no frame again), and the limit at which dynamo
  /// stops compiling a frame and runs it eagerly (torch._dynamo.config.recompile_limit).
  int64_t frame_compiles_max = 0;
  int64_t recompile_limit = 0;
};

/// One training step.
struct StepRecord {
  int64_t step = 0;                  ///< Global step, from 0.
  int phase = 1;                     ///< Training phase, from 1.
  int epoch = 0;                     ///< Epoch within the phase, from 0.
  int64_t step_in_phase = 0;         ///< Step within the phase, from 0.
  double wall_ms = 0.0;              ///< Wall time of the step, device work included on CUDA.
  std::optional<double> device_ms;   ///< Device time (CUDA events), when measured.
  double loss = 0.0;                 ///< Total weighted loss.
  std::vector<double> head_losses;   ///< Unweighted loss per head.
  std::vector<double> loss_weights;  ///< Loss weights in effect.
  double lr = 0.0;                   ///< lr in effect in the optimizer.
  std::optional<DispatchStats> dispatch;
  std::optional<JitStats> jit;
  std::optional<OptimizerStats> optimizer;
  std::optional<PlacementStats> placement;
  std::optional<CuptiStats> cupti;
  std::optional<CommStats> comm;  ///< Present in the steps of a data-parallel rank.
  std::optional<MemoryStats> memory;
  std::optional<CudaMemoryStats> cuda_memory;
  std::optional<CompiledStats> compiled;  ///< Present when the torch.compile probe ran.
  std::vector<std::string> alerts;  ///< Rule names of alerts raised at this step.
};

/// Kinds of event; the string form is what the run file holds.
enum class EventKind {
  kPhaseStart,
  kCompile,
  kLrChange,
  kLossWeightsChange,
  kOptimizerRebuild,
  kAlert,
  kNote,
  /// A torch.compile graph break, with dynamo's reason (the Python package's compile ledger).
  kGraphBreak,
};

/// Every event kind, in run-file order: what parsing and the exporter's per-kind counters iterate.
inline constexpr EventKind kEventKinds[] = {
    EventKind::kPhaseStart,        EventKind::kCompile, EventKind::kLrChange,
    EventKind::kLossWeightsChange, EventKind::kOptimizerRebuild, EventKind::kAlert,
    EventKind::kNote,              EventKind::kGraphBreak};

/// Name of an event kind in the run file ("phase_start", "compile", ...).
const char* to_string(EventKind kind);
/// Parses an event kind; nullopt when unknown.
std::optional<EventKind> parse_event_kind(const std::string& name);

/// Something that happened at a step: a phase start, a compile with its reason, an alert...
struct EventRecord {
  EventKind kind = EventKind::kNote;
  int64_t step = 0;  ///< Global step the event precedes or belongs to.
  int phase = 1;
  std::string reason;                                ///< Human-readable reason or message.
  nlohmann::json detail = nlohmann::json::object();  ///< Kind-specific fields.
};

/// First line of a run file.
struct RunHeader {
  int schema = kRunSchemaVersion;
  std::string tool_version;
  std::string mode;               ///< "recompile" or "mutable" (or a user's own label).
  std::string optimizer_handoff;  ///< "fresh", "migrate", or "none" for mutable.
  /// The optimizer's name for reports ("Adam"); empty when the writer did not say.
  std::string optimizer;
  std::string device_requested;
  std::string device_used;
  std::string torch_version;
  bool cuda_available = false;
  Availability cupti;
  std::string step_timing;  ///< How wall_ms is taken, e.g. "host clock, sync at step end".
  nlohmann::json config = nlohmann::json::object();  ///< Full configuration.
  nlohmann::json probes = nlohmann::json::object();  ///< Probe name -> {available, reason}.
  uint64_t seed = 0;
  std::string start_time;  ///< ISO 8601 UTC.
  std::string host;
  /// This file's rank in a data-parallel job, from 0; 0 for a single-process run.
  int rank = 0;
  /// Ranks in the job; 1 for a single-process run.
  int world_size = 1;
  /// Shared by the rank files of one job (rank 0 draws it and hands it out at rendezvous); empty
  /// for a single-process run.
  std::string job_id;
  /// Steps per turn when this run took turns step by step with another run on the same machine
  /// (`recompdiag ab`: its step k ran next to the other run's step k, turn by turn); 0 when it
  /// took turns at epoch boundaries or none. Written only when set.
  int64_t turn_every_steps = 0;
  /// The slowdown planted in this run's steps, percent of its median step
  /// (RECOMPDIAG_PLANT_SLOWDOWN: `recompdiag calibrate`'s slowed side); 0 for none. Written only
  /// when set: such a run's step times are not the job's own.
  double planted_slowdown_pct = 0.0;
};

/// Last line of a run file that finished.
struct RunSummary {
  int64_t steps = 0;
  double elapsed_s = 0.0;
  int64_t compiles = 0;
  int64_t alerts = 0;
  double final_loss = 0.0;
  std::vector<double> final_head_losses;
  /// "completed", "interrupted" (a stop signal) or "failed" (a data-parallel peer died or a
  /// collective timed out).
  std::string status = "completed";
  /// A digest (FNV-1a, 16 hex digits) of the final parameters' bytes: equal on every rank of a
  /// data-parallel job whose ranks stayed in step. Empty when the writer did not compute one.
  std::string parameters_digest;

  /// Whether the run ended in failure: its steps are not a finished run's.
  bool failed() const { return status == "failed"; }
};

}  // namespace recompdiag
