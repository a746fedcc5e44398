#include "recompdiag/core/health.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "recompdiag/core/compile_findings.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/probe_counts.h"

namespace recompdiag {
namespace {

// Advice strings: one sentence or two each, shown after the evidence in alerts and reports.
constexpr char kAdviceCompile[] =
    "Keep one compiled train step for the whole run: pass lr and loss weights as tensors or "
    "through the optimizer's param groups instead of recompiling (mode 'mutable'). If the "
    "recompile is intended, expect slower steps until the new plan is warm.";
constexpr char kAdviceCacheMiss[] =
    "New op signatures or GPU kernels in steady state mean changing shapes, dtypes or devices, or "
    "a recompiled graph: keep batch shapes and dtypes fixed, and check the compile alerts.";
constexpr char kAdviceHostOps[] =
    "Ops run on the host although the model trains on CUDA: create tensors with the model's "
    "device (torch::TensorOptions().device(...)) and move the model, the batch and any constants "
    "to the GPU once, outside the step.";
constexpr char kAdviceCopies[] =
    "Tensors cross between host and device inside the step: move data once per batch with "
    "non_blocking copies from pinned memory, and keep constants and optimizer state on the GPU.";
constexpr char kAdviceSyncs[] =
    "Host syncs (item(), nonzero, equal, ...) stall the GPU queue every step: read values every N "
    "steps, or keep them as tensors until logging.";
constexpr char kAdviceStateOffDevice[] =
    "Optimizer state is not where its parameter is: build the optimizer after model.to(device), "
    "or move its state tensors with the parameters when handing it over.";
constexpr char kAdviceStateMissing[] =
    "Parameters with gradients have no optimizer state: the optimizer holds other tensors than the "
    "model's parameters (rebuild it with model.parameters() after moving the model).";
constexpr char kAdviceStateReset[] =
    "The optimizer's step counters fell: a fresh optimizer replaced the old one and Adam's "
    "moments restart from zero. Migrate the state (copy state() per parameter) when rebuilding.";
constexpr char kAdviceLr[] =
    "The lr set is not in the optimizer: assigning to a copy of the options does nothing. Set it "
    "on every param group: for (auto& g : opt.param_groups()) g.options().set_lr(lr);";
constexpr char kAdvicePlacement[] =
    "Some parameters, gradients or buffers are not on the expected device: call "
    "model->to(device) before building the optimizer and compiling the step.";
constexpr char kAdviceSlow[] =
    "This step took much longer than recent steps: see the other alerts of this step (compiles, "
    "cache misses, syncs) and the device timeline (NVTX ranges) for the cause.";
constexpr char kAdviceNotOptimized[] =
    "The graph executor is still profiling the step long after its compile, so it runs without "
    "its optimized plan: check the profiling settings (torch::jit::getNumProfiledRuns, "
    "getProfilingMode, setGraphExecutorOptimize) and inputs whose shapes or dtypes change every "
    "step, which send the executor back to profiling.";
constexpr char kAdviceDrops[] =
    "A probe ran out of room and dropped events, so its counters undercount: raise its buffer "
    "sizes or sample the dispatcher probe every N steps.";

constexpr char kAdviceCompiledFallback[] =
    "torch.compile gave up on this frame after recompiling it (torch._dynamo.config."
    "recompile_limit, 8 by default) and it now runs eagerly, without an error: remove what "
    "recompiles it (hold lr and loss weights in tensors, torch.tensor(0.01), and assign them in "
    "place; mark changing shapes dynamic) rather than raising the limit.";
constexpr char kAdviceRecompileBudget[] =
    "This frame keeps recompiling and will run eagerly, silently, once it reaches its limit: fix "
    "the cause the compile reason names (a Python number that changes, a new size, a rebuilt "
    "object) now; raising torch._dynamo.config.recompile_limit only postpones the cliff.";
constexpr char kAdviceMemoryGrowth[] =
    "Memory grows step after step: something is kept alive that should be freed. Look for old "
    "compiled functions, optimizers or tensors held in a list (losses kept with their graph: "
    "store loss.item() or loss.detach()), and caches keyed by a value that changes every step.";

bool names_cuda(const std::string& device) { return device.rfind("cuda", 0) == 0; }

// What a rule sees of a step: the step, the monitor's settings and what it remembers.
struct RuleInput {
  const StepRecord& step;
  bool steady;  // past warm-up
  const HealthOptions& options;
  bool expect_cuda;
  const std::string& compile_reason;  // of the last compile event noted, or empty
  int64_t compile_step;               // its step
  bool new_compile;                   // no compile alert has named that compile yet
  int64_t profiling_streak;           // steps in a row with profiling runs, this one included
  const MemoryTrend& memory;          // resident memory up to this step
};

// A rule's finding on a step: the alert to raise, unless the rule fired recently.
struct Finding {
  const char* rule;
  std::string evidence;
  const char* advice;
  bool repeat_ok = false;  // raise it even if the rule fired within repeat_after_steps
};

using Rule = std::optional<Finding> (*)(const RuleInput&);

// Whether torch.compile compiled at the step.
bool dynamo_compiled(const StepRecord& step) {
  return step.compiled && step.compiled->compiles > 0;
}

std::optional<Finding> compile_after_warmup(const RuleInput& in) {
  const StepRecord& step = in.step;
  const bool jit_compiled = step.jit && (step.jit->compiles > 0 || step.jit->plan_builds > 0);
  if (!in.steady || (!jit_compiled && !dynamo_compiled(step))) return std::nullopt;
  std::ostringstream ev;
  if (jit_compiled) {
    ev << step.jit->compiles << " compile(s), " << step.jit->plan_builds
       << " optimized-plan build(s), " << step.jit->profiling_runs << " profiling run(s)";
  }
  if (dynamo_compiled(step)) {
    if (jit_compiled) ev << ", ";
    ev << step.compiled->compiles << " torch.compile compile(s) (" << step.compiled->recompiles
       << " recompile(s), " << step.compiled->compile_ms << " ms compiling)";
  }
  ev << " at step " << step.step << " (after warm-up of " << in.options.warmup_steps << " steps)";
  if (!in.compile_reason.empty()) {
    ev << "; reason: " << in.compile_reason << " (noted at step " << in.compile_step << ")";
  }
  // Every new compile is its own finding (a compile per epoch is the storm to see).
  return Finding{rules::kCompileAfterWarmup, ev.str(), kAdviceCompile, in.new_compile};
}

// Before the eager cliff: a frame that has spent half its recompile limit, at a step that
// compiled (at warm-up too: a storm can spend the budget in the first steps).
std::optional<Finding> recompile_budget(const RuleInput& in) {
  const std::optional<CompiledStats>& c = in.step.compiled;
  if (!c || !c->ledger || c->recompile_limit <= 0 || c->compile_ids <= 0 ||
      2 * c->frame_compiles_max < c->recompile_limit) {
    return std::nullopt;
  }
  std::ostringstream ev;
  ev << "a frame has made " << c->frame_compiles_max << " of the " << c->recompile_limit
     << " compiles its recompile limit allows, at step " << in.step.step;
  if (!in.compile_reason.empty()) {
    ev << "; last recompile: " << in.compile_reason << " (noted at step " << in.compile_step
       << ")";
  }
  // Every further recompile of the frame brings the cliff closer: each one is its own finding.
  return Finding{rules::kRecompileBudget, ev.str(), kAdviceRecompileBudget, true};
}

std::optional<Finding> jit_not_optimized(const RuleInput& in) {
  if (!in.steady || in.options.max_profiling_steps <= 0 ||
      in.profiling_streak < in.options.max_profiling_steps) {
    return std::nullopt;
  }
  std::ostringstream ev;
  ev << in.profiling_streak << " steps in a row up to step " << in.step.step
     << " ran the graph executor's profiling plan: no optimized plan was built";
  if (!in.compile_reason.empty()) {
    ev << " after the compile at step " << in.compile_step << " (" << in.compile_reason << ")";
  }
  return Finding{rules::kJitNotOptimized, ev.str(), kAdviceNotOptimized};
}

std::optional<Finding> cache_miss_after_warmup(const RuleInput& in) {
  if (!in.steady) return std::nullopt;
  const StepRecord& step = in.step;
  const int64_t sigs = step.dispatch ? step.dispatch->new_signatures : 0;
  const int64_t kernels = step.cupti ? step.cupti->new_kernels : 0;
  const int64_t loads = step.cupti ? step.cupti->module_loads : 0;
  if (sigs <= in.options.max_new_signatures && kernels <= 0 && loads <= 0) return std::nullopt;
  std::ostringstream ev;
  ev << sigs << " new op signature(s)";
  if (step.cupti) ev << ", " << kernels << " new kernel(s), " << loads << " module load(s)";
  ev << " at step " << step.step;
  if (!in.compile_reason.empty()) ev << "; last compile reason: " << in.compile_reason;
  return Finding{rules::kCacheMissAfterWarmup, ev.str(), kAdviceCacheMiss};
}

// The dispatcher's counts of a steady, sampled step, or null.
const DispatchStats* steady_dispatch(const RuleInput& in) {
  const auto& d = in.step.dispatch;
  return in.steady && d && d->sampled ? &*d : nullptr;
}

std::optional<Finding> host_syncs(const RuleInput& in) {
  const DispatchStats* d = steady_dispatch(in);
  // The host reads of a torch.compile compile (tracing, guards) are the compile's, reported by the
  // compile alert: not the step's steady syncs.
  if (!d || d->syncs <= in.options.max_syncs || dynamo_compiled(in.step)) return std::nullopt;
  std::ostringstream ev;
  ev << d->syncs << " host sync(s) at step " << in.step.step << " (plus " << d->recorder_syncs
     << " by the recorder, not counted)";
  return Finding{rules::kHostSyncs, ev.str(), kAdviceSyncs};
}

std::optional<Finding> host_ops(const RuleInput& in) {
  const DispatchStats* d = steady_dispatch(in);
  if (!in.expect_cuda || !d || d->host_ops <= in.options.max_host_ops) return std::nullopt;
  std::ostringstream ev;
  ev << d->host_ops << " of " << d->ops << " ops ran on the host at step " << in.step.step;
  return Finding{rules::kHostOps, ev.str(), kAdviceHostOps};
}

std::optional<Finding> cross_device_copies(const RuleInput& in) {
  const DispatchStats* d = steady_dispatch(in);
  const HealthOptions& o = in.options;
  if (!in.expect_cuda || !d ||
      (d->copies_h2d <= o.max_copies_h2d && d->copies_d2h <= o.max_copies_d2h)) {
    return std::nullopt;
  }
  std::ostringstream ev;
  ev << d->copies_h2d << " host->device copies (" << d->bytes_h2d << " B), " << d->copies_d2h
     << " device->host copies (" << d->bytes_d2h << " B) at step " << in.step.step << " (allowed "
     << o.max_copies_h2d << " / " << o.max_copies_d2h << ")";
  return Finding{rules::kCrossDeviceCopies, ev.str(), kAdviceCopies};
}

std::optional<Finding> optimizer_state_off_device(const RuleInput& in) {
  const auto& o = in.step.optimizer;
  if (!o || (o->state_off_device <= 0 && o->state_dtype_mismatch <= 0)) return std::nullopt;
  std::ostringstream ev;
  ev << o->state_off_device << " state tensor(s) off their parameter's device, "
     << o->state_dtype_mismatch << " with another dtype (of " << o->state_tensors << ")";
  return Finding{rules::kOptimizerStateOffDevice, ev.str(), kAdviceStateOffDevice};
}

std::optional<Finding> optimizer_state_missing(const RuleInput& in) {
  const auto& o = in.step.optimizer;
  if (!o || o->state_missing <= 0) return std::nullopt;
  std::ostringstream ev;
  ev << o->state_missing << " of " << o->params
     << " parameter(s) have a gradient but no optimizer state";
  return Finding{rules::kOptimizerStateMissing, ev.str(), kAdviceStateMissing};
}

std::optional<Finding> optimizer_state_reset(const RuleInput& in) {
  const auto& o = in.step.optimizer;
  if (!o || !o->state_reset) return std::nullopt;
  std::ostringstream ev;
  ev << "optimizer step counters fell (now " << o->step_min << ".." << o->step_max << ") at step "
     << in.step.step;
  return Finding{rules::kOptimizerStateReset, ev.str(), kAdviceStateReset};
}

std::optional<Finding> lr_not_in_effect(const RuleInput& in) {
  const auto& o = in.step.optimizer;
  if (!o || lr_in_effect(*o, in.options.lr_rel_tolerance)) return std::nullopt;
  std::ostringstream ev;
  ev << "lr requested " << o->lr_requested << " but the optimizer uses " << o->lr_effective;
  return Finding{rules::kLrNotInEffect, ev.str(), kAdviceLr};
}

std::optional<Finding> placement(const RuleInput& in) {
  const auto& p = in.step.placement;
  if (!p || p->params_off_device + p->grads_off_device + p->buffers_off_device <= 0) {
    return std::nullopt;
  }
  std::ostringstream ev;
  ev << p->params_off_device << " parameter(s), " << p->grads_off_device << " gradient(s), "
     << p->buffers_off_device << " buffer(s) not on the expected device";
  return Finding{rules::kPlacement, ev.str(), kAdvicePlacement};
}

std::optional<Finding> probe_drops(const RuleInput& in) {
  const StepRecord& step = in.step;
  const int64_t dispatch = step.dispatch ? step.dispatch->dropped : 0;
  const int64_t cupti = step.cupti ? step.cupti->dropped : 0;
  if (dispatch + cupti <= 0) return std::nullopt;
  std::ostringstream ev;
  ev << dispatch << " dispatcher event(s) and " << cupti << " CUPTI record(s) dropped at step "
     << step.step;
  return Finding{rules::kProbeDrops, ev.str(), kAdviceDrops};
}

std::optional<Finding> memory_growth(const RuleInput& in) {
  if (!in.step.memory) return std::nullopt;
  constexpr double kMiB = 1024.0 * 1024.0;
  if (const std::optional<RecompileGrowth> g = in.memory.recompile_growth()) {
    std::ostringstream ev;
    ev << "resident memory rose at each of the last " << g->recompiles << " recompiles (steps "
       << g->first_step << "-" << g->last_step << ") and stayed: " << g->from_bytes / kMiB
       << " MiB before the first, " << g->to_bytes / kMiB << " MiB before the latest, "
       << g->bytes_per_recompile / kMiB << " MiB per recompile";
    return Finding{rules::kMemoryGrowth, ev.str(), kAdviceMemoryGrowth};
  }
  if (!in.steady) return std::nullopt;
  const std::optional<MemoryGrowth> growth = in.memory.steady_growth();
  if (!growth) return std::nullopt;
  std::ostringstream ev;
  ev << "resident memory grew from " << growth->from_bytes / kMiB << " MiB to "
     << growth->to_bytes / kMiB << " MiB over steps " << growth->first_step << "-"
     << growth->last_step << " (" << growth->bytes_per_step / 1024.0
     << " KiB per step), higher in each of " << in.memory.options().blocks
     << " consecutive blocks of steps";
  return Finding{rules::kMemoryGrowth, ev.str(), kAdviceMemoryGrowth};
}

// The rules of one step, in the order their alerts are listed. The slow-step rule runs after
// them: a slow step with another finding is that finding's.
constexpr Rule kRules[] = {
    compile_after_warmup,
    recompile_budget,
    jit_not_optimized,
    cache_miss_after_warmup,
    host_syncs,
    host_ops,
    cross_device_copies,
    optimizer_state_off_device,
    optimizer_state_missing,
    optimizer_state_reset,
    lr_not_in_effect,
    placement,
    probe_drops,
    memory_growth,
};

// Whether the step carries a probe signal of its own: a slow step with one is not reported as
// merely slow.
bool has_probe_signal(const StepRecord& step, const std::vector<Alert>& alerts) {
  // Any compile or cache miss (the umbrellas' parts, as kProbeCounts lists them), a profiling
  // run after a compile, or a compiled frame that ran eagerly.
  return !alerts.empty() || umbrella_total(step, kCompilesUmbrella) > 0 ||
         umbrella_total(step, kCacheMissesUmbrella) > 0 ||
         (step.jit && step.jit->profiling_runs > 0) ||
         (step.compiled && step.compiled->eager_fallbacks > 0);
}

}  // namespace

EventRecord to_event(const Alert& alert) {
  EventRecord event;
  event.kind = EventKind::kAlert;
  event.step = alert.step;
  event.phase = alert.phase;
  event.reason = alert.rule + ": " + alert.evidence;
  event.detail = {{"rule", alert.rule}, {"evidence", alert.evidence}, {"advice", alert.advice}};
  return event;
}

void HealthOptions::validate() const {
  require_at_least("warmup_steps", warmup_steps, 0);
  require_at_least("max_host_ops", max_host_ops, 0);
  require_at_least("max_copies_h2d", max_copies_h2d, 0);
  require_at_least("max_copies_d2h", max_copies_d2h, 0);
  require_at_least("max_syncs", max_syncs, 0);
  require_at_least("max_new_signatures", max_new_signatures, 0);
  require_at_least("slow_step_streak", slow_step_streak, 1);
  require_at_least("max_profiling_steps", max_profiling_steps, 0);
  require_at_least("rolling_window", rolling_window, 1);
  require_at_least("min_window", min_window, 1);
  require_at_least("repeat_after_steps", repeat_after_steps, 0);
  if (min_window > rolling_window) {
    throw InputError("min_window must be <= rolling_window (" + std::to_string(rolling_window) +
                     "), got " + std::to_string(min_window));
  }
  auto finite_at_least = [](const char* name, double value, double low) {
    if (!std::isfinite(value) || value < low) {
      std::ostringstream s;
      s << name << " must be a finite number >= " << low << ", got " << value;
      throw InputError(s.str());
    }
  };
  finite_at_least("slow_step_factor", slow_step_factor, 1.0);
  finite_at_least("slow_step_spread", slow_step_spread, 0.0);
  finite_at_least("lr_rel_tolerance", lr_rel_tolerance, 0.0);
  memory_growth.validate();
}

HealthMonitor::HealthMonitor(HealthOptions options, std::string expected_device)
    : options_(options),
      expect_cuda_(names_cuda(expected_device)),
      memory_trend_(options.memory_growth) {
  options_.rolling_window = std::max<int64_t>(1, options_.rolling_window);
  window_.assign(static_cast<size_t>(options_.rolling_window), 0.0);
  scratch_.reserve(window_.size());
  last_fired_.reserve(16);
}

bool is_compile_rule(const std::string& rule) {
  return rule == rules::kCompileAfterWarmup || rule == rules::kRecompileBudget ||
         rule == rules::kCompiledFallback || rule == rules::kCacheMissAfterWarmup;
}

std::string compile_subject(const EventRecord& e) {
  const nlohmann::json& d = e.detail;
  const auto text = [&](const char* key) {
    const auto it = d.is_object() ? d.find(key) : d.end();
    return d.is_object() && it != d.end() && it->is_string() ? it->get<std::string>()
                                                             : std::string();
  };
  if (text("compiler") != "dynamo") return e.reason;
  std::string file = text("file");
  file = file.substr(file.find_last_of('/') + 1);
  const auto line = d.find("line");
  std::string subject =
      text("function") + " (" + file +
      (line != d.end() && line->is_number_integer() ? ":" + std::to_string(line->get<int64_t>())
                                                    : std::string()) +
      ")";
  std::string cause = text("cause");
  if (cause.empty()) {
    const auto failures = d.find("guard_failures");
    if (failures != d.end() && failures->is_array() && !failures->empty() &&
        failures->front().is_string()) {
      cause = guard_subject(failures->front().get<std::string>());
    }
  }
  return cause.empty() ? subject : subject + ": " + cause;
}

void HealthMonitor::note_event(const EventRecord& event) {
  if (event.kind == EventKind::kCompile) {
    last_compile_reason_ = event.reason;
    last_compile_step_ = event.step;
    last_compile_subject_ = compile_subject(event);
  }
}

double HealthMonitor::rolling_median() const {
  if (window_count_ == 0) return 0.0;
  scratch_.assign(window_.begin(), window_.begin() + window_count_);
  const size_t mid = scratch_.size() / 2;
  std::nth_element(scratch_.begin(), scratch_.begin() + mid, scratch_.end());
  double upper = scratch_[mid];
  if (scratch_.size() % 2 == 1) return upper;
  double lower = *std::max_element(scratch_.begin(), scratch_.begin() + mid);
  return 0.5 * (lower + upper);
}

void HealthMonitor::raise(std::vector<Alert>& out, const char* rule, const StepRecord& step,
                          std::string evidence, const char* advice, bool repeat_ok) {
  auto it = std::find_if(last_fired_.begin(), last_fired_.end(),
                         [&](const auto& entry) { return entry.first == rule; });
  if (!repeat_ok && it != last_fired_.end() && options_.repeat_after_steps > 0 &&
      step.step - it->second < options_.repeat_after_steps && step.step >= it->second) {
    ++suppressed_;
    return;
  }
  if (it == last_fired_.end()) {
    last_fired_.emplace_back(rule, step.step);
  } else {
    it->second = step.step;
  }
  out.push_back(Alert{rule, step.step, step.phase, std::move(evidence), advice,
                      is_compile_rule(rule) ? last_compile_subject_ : std::string()});
}

void HealthMonitor::check_slow_step(std::vector<Alert>& out, const StepRecord& step, bool steady,
                                    bool has_signal) {
  if (!steady || window_count_ < options_.min_window || step.wall_ms <= 0.0) return;
  const double median = rolling_median();
  if (median <= 0.0) return;
  // Robust spread of the window: 1.4826 x the median absolute deviation.
  scratch_.assign(window_.begin(), window_.begin() + window_count_);
  for (double& v : scratch_) v = std::fabs(v - median);
  const size_t mid = scratch_.size() / 2;
  std::nth_element(scratch_.begin(), scratch_.begin() + mid, scratch_.end());
  const double sigma = 1.4826 * scratch_[mid];
  const double threshold =
      std::max(options_.slow_step_factor * median, median + options_.slow_step_spread * sigma);
  if (step.wall_ms <= threshold || has_signal) {
    slow_streak_ = 0;
    return;
  }
  if (slow_streak_ == 0) slow_streak_first_ = step.step;
  ++slow_streak_;
  if (slow_streak_ < std::max<int64_t>(options_.slow_step_streak, 1)) return;
  std::ostringstream ev;
  ev << "steps " << slow_streak_first_ << "-" << step.step << " each took more than " << threshold
     << " ms (step " << step.step << ": " << step.wall_ms << " ms, " << step.wall_ms / median
     << "x the rolling median " << median << " ms of the last " << window_count_
     << " steps; threshold " << options_.slow_step_factor << "x and " << options_.slow_step_spread
     << " robust sigmas), with no probe signal";
  raise(out, rules::kSlowStep, step, ev.str(), kAdviceSlow);
}

void HealthMonitor::check_compiled_fallback(std::vector<Alert>& out, const StepRecord& step) {
  if (!step.compiled || !step.compiled->sampled) return;  // unobserved steps say nothing
  const CompiledStats& c = *step.compiled;
  // A rise in eager calls of compiled frames, once compiled code has run: at warm-up too, since
  // the limit can be reached within the first steps.
  if (compiled_regions_seen_ > 0 && c.eager_fallbacks > eager_fallbacks_before_) {
    std::ostringstream ev;
    ev << c.eager_fallbacks << " call(s) of compiled frames ran eagerly at step " << step.step
       << " (" << eager_fallbacks_before_ << " at the step before), after "
       << compiled_regions_seen_ << " runs of compiled code";
    if (!last_compile_reason_.empty()) {
      ev << "; last compile reason: " << last_compile_reason_ << " (noted at step "
         << last_compile_step_ << ")";
    }
    raise(out, rules::kCompiledFallback, step, ev.str(), kAdviceCompiledFallback);
  }
  compiled_regions_seen_ += c.region_runs;
  eager_fallbacks_before_ = c.eager_fallbacks;
}

std::vector<Alert> HealthMonitor::evaluate(const StepRecord& step) {
  profiling_streak_ = step.jit && step.jit->profiling_runs > 0 ? profiling_streak_ + 1 : 0;
  if (step.memory) {
    const bool compiles =
        (step.jit && step.jit->compiles > 0) || (last_compile_step_ == step.step && step.step > 0);
    if (compiles) memory_trend_.note_compile(step.step);
    memory_trend_.add(step.step, step.memory->resident_bytes);
  }
  const RuleInput in{step,
                     step.step >= options_.warmup_steps,
                     options_,
                     expect_cuda_,
                     last_compile_reason_,
                     last_compile_step_,
                     last_compile_step_ != compile_alerted_for_,
                     profiling_streak_,
                     memory_trend_};
  std::vector<Alert> out;
  for (const Rule rule : kRules) {
    std::optional<Finding> f = rule(in);
    if (!f) continue;
    const size_t before = out.size();
    raise(out, f->rule, step, std::move(f->evidence), f->advice, f->repeat_ok);
    if (f->rule == rules::kCompileAfterWarmup && out.size() > before) {
      compile_alerted_for_ = last_compile_step_;
    }
  }
  check_compiled_fallback(out, step);
  check_slow_step(out, step, in.steady, has_probe_signal(step, out));
  if (step.wall_ms > 0.0) {
    window_[static_cast<size_t>(window_next_)] = step.wall_ms;
    window_next_ = (window_next_ + 1) % static_cast<int64_t>(window_.size());
    window_count_ = std::min<int64_t>(window_count_ + 1, static_cast<int64_t>(window_.size()));
  }
  return out;
}

}  // namespace recompdiag
