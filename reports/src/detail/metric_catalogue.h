#pragma once
// The exporter's metric catalogue: every family it serves, with its type and HELP sentence, as one
// table. The families fed by probe-section fields are named in record_fields.h; the catalogue
// registers them all once, so HELP and TYPE are served from the first scrape, and the compiler
// checks that every family a field names is here with the field's type.

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>
#include <string_view>
#include <unordered_map>

#include "recompdiag/core/record_fields.h"

namespace recompdiag::reports::detail {

enum class FamilyType { kCounter, kGauge, kHistogram };

struct FamilySpec {
  const char* name;
  FamilyType type;
  const char* help;
};

// clang-format off
inline constexpr FamilySpec kMetricCatalogue[] = {
    // The run and its steps.
    {"recompdiag_run_info", FamilyType::kGauge, "Constant 1 per run; labels describe the run"},
    {"recompdiag_step_duration_seconds", FamilyType::kHistogram, "Wall time of a training step, device work included on CUDA"},
    {"recompdiag_step_device_seconds_total", FamilyType::kCounter, "Device time of training steps (CUDA events), when measured"},
    {"recompdiag_steps_total", FamilyType::kCounter, "Training steps completed"},
    {"recompdiag_phase", FamilyType::kGauge, "Training phase of the latest step (from 1); a change is a phase switch"},
    {"recompdiag_last_step", FamilyType::kGauge, "Global index of the latest step (from 0)"},
    {"recompdiag_loss", FamilyType::kGauge, "Total weighted loss of the latest step"},
    {"recompdiag_head_loss", FamilyType::kGauge, "Unweighted loss of the latest step, by head index"},
    {"recompdiag_loss_weight", FamilyType::kGauge, "Loss weight in effect, by head index"},
    {"recompdiag_learning_rate", FamilyType::kGauge, "Learning rate in effect in the optimizer at the latest step"},
    {"recompdiag_alerts_total", FamilyType::kCounter, "Health alerts raised, by rule"},
    {"recompdiag_events_total", FamilyType::kCounter, "Run events (phase_start, compile, lr_change, ...), by kind"},
    {"recompdiag_probe_available", FamilyType::kGauge, "1 when a probe runs, 0 when it is unavailable (reason in the run file header)"},
    {"recompdiag_run_finished", FamilyType::kGauge, "1 once the run has ended, else 0"},
    {"recompdiag_run_elapsed_seconds", FamilyType::kGauge, "Wall time of the whole run, set at run end"},
    // Fed by the probe sections' fields (record_fields.h).
    {"recompdiag_compile_events_total", FamilyType::kCounter, "Compilations seen by the probes, by kind (TorchScript compile, executor plan build, profiling run, CUDA graph instantiation, torch.compile compile)"},
    {"recompdiag_cache_misses_total", FamilyType::kCounter, "Cache misses by kind (first-seen dispatcher signature, GPU module load, first-seen kernel)"},
    {"recompdiag_dispatched_ops_total", FamilyType::kCounter, "Top-level ATen ops dispatched, by the device type of their tensors"},
    {"recompdiag_host_ops_total", FamilyType::kCounter, "Ops run on the host while the expected device is CUDA"},
    {"recompdiag_cross_device_copies_total", FamilyType::kCounter, "Cross-device tensor copies seen by the dispatcher, by direction"},
    {"recompdiag_cross_device_copy_bytes_total", FamilyType::kCounter, "Bytes of cross-device tensor copies, by direction"},
    {"recompdiag_cuda_memcpy_total", FamilyType::kCounter, "CUDA memcpy activities seen by CUPTI, by direction"},
    {"recompdiag_cuda_memcpy_bytes_total", FamilyType::kCounter, "Bytes of CUDA memcpy activities, by direction"},
    {"recompdiag_syncs_total", FamilyType::kCounter, "Host-device synchronizations, by who saw them (dispatch: the model's; recorder: recompdiag's own loss reads; cupti: CUDA API)"},
    {"recompdiag_kernels_total", FamilyType::kCounter, "GPU kernels launched (CUPTI)"},
    {"recompdiag_kernel_seconds_total", FamilyType::kCounter, "Sum of GPU kernel durations (CUPTI)"},
    {"recompdiag_collectives_total", FamilyType::kCounter, "Collectives a data-parallel rank completed (comm section)"},
    {"recompdiag_collective_bytes_total", FamilyType::kCounter, "Bytes a data-parallel rank contributed to its collectives"},
    {"recompdiag_collective_wait_seconds_total", FamilyType::kCounter, "Time a data-parallel rank spent in its collectives: waiting for the slowest rank, then the transfer"},
    {"recompdiag_dropped_probe_records_total", FamilyType::kCounter, "Probe records lost because a buffer was full, by probe"},
    {"recompdiag_optimizer_state_resets_total", FamilyType::kCounter, "Steps where an optimizer step counter fell (state rebuilt)"},
    {"recompdiag_optimizer_state_tensors", FamilyType::kGauge, "Optimizer state tensors, by location relative to their parameter (same_device or off_device)"},
    {"recompdiag_optimizer_state_bytes", FamilyType::kGauge, "Bytes of optimizer state"},
    {"recompdiag_optimizer_state_missing_params", FamilyType::kGauge, "Parameters with a gradient but no optimizer state"},
    {"recompdiag_optimizer_state_dtype_mismatch_tensors", FamilyType::kGauge, "Optimizer state tensors whose dtype differs from their parameter's"},
    {"recompdiag_tensors_off_device", FamilyType::kGauge, "Model tensors not on the expected device, by kind"},
    {"recompdiag_learning_rate_requested", FamilyType::kGauge, "Learning rate the trainer asked for at the latest step"},
    {"recompdiag_process_resident_bytes", FamilyType::kGauge, "Resident set size of the training process at the latest step"},
    {"recompdiag_compiled_lookups_total", FamilyType::kCounter, "Calls of frames that have torch.compile code (dynamo cache lookups)"},
    {"recompdiag_compiled_region_runs_total", FamilyType::kCounter, "Runs of torch.compile code (compiled regions)"},
    {"recompdiag_compiled_eager_fallbacks_total", FamilyType::kCounter, "Calls of a compiled frame that ran eagerly: recompile limit reached or frame skipped"},
    {"recompdiag_compile_seconds_total", FamilyType::kCounter, "Time spent compiling, by compiler (dynamo: torch.compile)"},
    // torch.compile's ledger: torch's own counters, read by the Python package.
    {"recompdiag_dynamo_compile_ids_total", FamilyType::kCounter, "Dynamo compiles started, one per compile id F/C"},
    {"recompdiag_dynamo_backward_compiles_total", FamilyType::kCounter, "AOTAutograd backward graphs compiled at their first backward"},
    {"recompdiag_dynamo_graphs_total", FamilyType::kCounter, "FX graphs dynamo captured"},
    {"recompdiag_dynamo_graph_breaks_total", FamilyType::kCounter, "Graph breaks dynamo made: each splits a frame and compiles a resume function"},
    {"recompdiag_fx_graph_cache_total", FamilyType::kCounter, "Inductor FX-graph cache lookups, by outcome (hit, miss, bypass)"},
    {"recompdiag_aot_autograd_cache_total", FamilyType::kCounter, "AOTAutograd cache lookups, by outcome (hit, miss, bypass)"},
    {"recompdiag_inductor_kernels_total", FamilyType::kCounter, "Kernels Inductor generated"},
    {"recompdiag_compile_stage_seconds_total", FamilyType::kCounter, "torch.compile time by stage (dynamo, aot_autograd, inductor, kernel_compile), as torch's own timers measured"},
    {"recompdiag_cudagraph_recordings_total", FamilyType::kCounter, "CUDA graphs recorded by torch.compile's cudagraph trees"},
    {"recompdiag_cudagraph_skips_total", FamilyType::kCounter, "Graphs torch.compile's cudagraph trees declined to record"},
    {"recompdiag_dynamo_frame_compiles_max", FamilyType::kGauge, "Compiles of the frame that recompiled most at the latest step that compiled"},
    {"recompdiag_dynamo_recompile_limit", FamilyType::kGauge, "Compiles of one frame after which dynamo runs it eagerly (recompile_limit)"},
    {"recompdiag_cuda_allocator_bytes", FamilyType::kGauge, "CUDA caching allocator bytes at the latest step, by kind (allocated, reserved)"},
};
// clang-format on

// Whether the family a field feeds is in the catalogue with the field's type (a field that feeds
// none is).
constexpr bool in_catalogue(const MetricTarget& target) {
  if (target.kind == MetricKind::kNone) return true;
  const FamilyType type =
      target.kind == MetricKind::kCounter ? FamilyType::kCounter : FamilyType::kGauge;
  for (const FamilySpec& spec : kMetricCatalogue) {
    if (std::string_view(spec.name) == target.family) return spec.type == type;
  }
  return false;
}

// Whether every family the probe sections' fields feed is in the catalogue.
constexpr bool catalogue_covers_fields() {
  bool covered = true;
  for_each_section_constant([&](auto c) {
    const auto& section = decltype(c)::value;
    for (std::size_t i = 0; i < section.size; ++i) covered = covered && in_catalogue(section.fields[i].metric);
  });
  return covered;
}
static_assert(catalogue_covers_fields(),
              "a probe-section field feeds a metric family that kMetricCatalogue lacks, or has with "
              "another type");

// Every family of the catalogue, registered in one registry and found by name. Lookups happen when
// a run or a phase starts, never per step.
class MetricFamilies {
 public:
  explicit MetricFamilies(prometheus::Registry& registry) {
    for (const FamilySpec& spec : kMetricCatalogue) {
      switch (spec.type) {
        case FamilyType::kCounter:
          counters_.emplace(
              spec.name,
              &prometheus::BuildCounter().Name(spec.name).Help(spec.help).Register(registry));
          break;
        case FamilyType::kGauge:
          gauges_.emplace(
              spec.name,
              &prometheus::BuildGauge().Name(spec.name).Help(spec.help).Register(registry));
          break;
        case FamilyType::kHistogram:
          histograms_.emplace(
              spec.name,
              &prometheus::BuildHistogram().Name(spec.name).Help(spec.help).Register(registry));
          break;
      }
    }
  }

  // The family `name` of that type; throws std::logic_error when the catalogue lacks it (a field
  // table naming a family that is not here is a programming error the tests catch).
  prometheus::Family<prometheus::Counter>& counter(const std::string& name) const {
    return *find(counters_, name);
  }
  prometheus::Family<prometheus::Gauge>& gauge(const std::string& name) const {
    return *find(gauges_, name);
  }
  prometheus::Family<prometheus::Histogram>& histogram(const std::string& name) const {
    return *find(histograms_, name);
  }

 private:
  template <class T>
  static T* find(const std::unordered_map<std::string, T*>& map, const std::string& name) {
    const auto it = map.find(name);
    if (it == map.end()) throw std::logic_error("metric family not in the catalogue: " + name);
    return it->second;
  }

  std::unordered_map<std::string, prometheus::Family<prometheus::Counter>*> counters_;
  std::unordered_map<std::string, prometheus::Family<prometheus::Gauge>*> gauges_;
  std::unordered_map<std::string, prometheus::Family<prometheus::Histogram>*> histograms_;
};

}  // namespace recompdiag::reports::detail
