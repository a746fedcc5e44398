#include "recompdiag/core/synthetic_run.h"

#include <cmath>

#include "detail/random.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/version.h"

namespace recompdiag {

namespace {

std::vector<double> weights_for_phase(int phase, int heads) {
  // Phase 1 trains the first head; later phases share the weight across heads, which is the
  // change that forces the recompiling trainer to rebuild its step.
  std::vector<double> w(static_cast<size_t>(heads), 0.0);
  if (phase == 1) {
    w[0] = 1.0;
  } else {
    for (auto& v : w) v = 1.0 / heads;
  }
  return w;
}

}  // namespace

void SyntheticRunOptions::validate() const {
  if (phase_steps.empty()) throw InputError("SyntheticRunOptions::phase_steps must not be empty");
  for (const int64_t steps : phase_steps) {
    require_at_least("SyntheticRunOptions::phase_steps[i]", steps, 0);
  }
  for (const double scale : phase_scale) {
    require_in_range("SyntheticRunOptions::phase_scale[i]", scale, 0.0, HUGE_VAL, true, true);
  }
  require_in_range("SyntheticRunOptions::base_ms", base_ms, 0.0, HUGE_VAL, false, true);
  require_in_range("SyntheticRunOptions::noise", noise, 0.0, HUGE_VAL, false, true);
  require_at_least("SyntheticRunOptions::warmup_steps", warmup_steps, 0);
  require_in_range("SyntheticRunOptions::warmup_factor", warmup_factor, 0.0, HUGE_VAL, true, true);
  require_at_least("SyntheticRunOptions::switch_compiles", switch_compiles, 0);
  require_at_least("SyntheticRunOptions::heads", heads, 1);
  require_at_least("SyntheticRunOptions::steps_per_epoch", steps_per_epoch, 1);
}

namespace {

// The header of a synthetic run: what it claims to be, and that it is synthetic.
RunHeader synthetic_header(const SyntheticRunOptions& o) {
  RunHeader h;
  h.tool_version = kToolVersion;
  h.mode = o.mode;
  h.optimizer_handoff = o.mode == "mutable" ? "none" : "fresh";
  h.optimizer = "Adam";
  h.device_requested = "cpu";
  h.device_used = "cpu";
  h.torch_version = "synthetic";
  h.cupti = {false, "unavailable: synthetic run"};
  h.step_timing = "synthetic";
  h.config = {{"model", "synthetic"},
              {"optimizer", "adam"},
              {"heads", o.heads},
              {"phase_steps", o.phase_steps},
              {"steps_per_epoch", o.steps_per_epoch}};
  h.probes = {{sections::kDispatch, {{"available", o.probes}, {"reason", ""}}},
              {sections::kJit, {{"available", o.probes}, {"reason", ""}}},
              {sections::kOptimizer, {{"available", o.probes}, {"reason", ""}}}};
  h.seed = o.seed;
  h.start_time = "2026-01-01T00:00:00Z";
  h.host = "synthetic";
  return h;
}

// What the CPU probes would record at step `i` of `phase` (its first steps compile and
// build plans; the Adam state counts `adam_step`).
void add_probe_sections(const SyntheticRunOptions& o, int phase, int64_t i, int64_t phase_compiles,
                        int64_t adam_step, StepRecord& s) {
  DispatchStats d;
  d.ops = 180;
  d.ops_cpu = 180;
  d.syncs = 0;
  d.recorder_syncs = 1 + o.heads;
  d.new_signatures = i == 0 ? (phase == 1 ? 60 : 12) : 0;
  s.dispatch = d;
  JitStats j;
  j.compiles = i == 0 ? phase_compiles : 0;
  j.plan_builds = i < 2 && (phase == 1 || phase_compiles > 0) ? 1 : 0;
  j.profiling_runs = i < o.warmup_steps && phase_compiles > 0 ? 1 : 0;
  s.jit = j;
  OptimizerStats opt;
  opt.params = 8;
  opt.params_with_state = 8;
  opt.state_tensors = 16;
  opt.state_bytes = 16 * 4096;
  opt.step_min = adam_step;
  opt.step_max = adam_step;
  opt.state_reset = phase > 1 && i == 0 && o.optimizer_reset_at_switch;
  opt.lr_requested = s.lr;
  opt.lr_effective = s.lr;
  s.optimizer = opt;
  s.placement = PlacementStats{};
}

}  // namespace

void write_synthetic_run(const std::string& path, const SyntheticRunOptions& o) {
  o.validate();
  detail::Rng rng(o.seed);
  RunWriter writer(path);

  writer.write(synthetic_header(o));

  StepRecord s;
  s.head_losses.resize(static_cast<size_t>(o.heads));
  int64_t global = 0;
  int64_t adam_step = 0;
  double elapsed_ms = 0.0;
  int64_t compiles = 0;
  for (size_t p = 0; p < o.phase_steps.size(); ++p) {
    const int phase = static_cast<int>(p) + 1;
    const double scale = p < o.phase_scale.size() ? o.phase_scale[p] : 1.0;
    s.loss_weights = weights_for_phase(phase, o.heads);
    EventRecord start{EventKind::kPhaseStart, global, phase, "phase " + std::to_string(phase),
                      nlohmann::json::object()};
    writer.write(start);
    if (phase > 1) {
      writer.write(EventRecord{EventKind::kLossWeightsChange,
                               global,
                               phase,
                               "loss weights changed for phase " + std::to_string(phase),
                               {{"weights", s.loss_weights}}});
      if (o.optimizer_reset_at_switch) {
        writer.write(EventRecord{EventKind::kOptimizerRebuild, global, phase,
                                 "fresh optimizer for the recompiled step",
                                 nlohmann::json::object()});
        adam_step = 0;
      }
    }
    const int64_t phase_compiles = phase == 1 ? 1 : o.switch_compiles;
    for (int64_t c = 0; c < phase_compiles; ++c) {
      writer.write(
          EventRecord{EventKind::kCompile,
                      global,
                      phase,
                      "phase " + std::to_string(phase) + ": loss weights baked into the graph",
                      {{"unit", "train_step"}}});
    }
    compiles += phase_compiles;
    for (int64_t i = 0; i < o.phase_steps[p]; ++i, ++global) {
      s.step = global;
      s.phase = phase;
      s.step_in_phase = i;
      s.epoch = static_cast<int>(i / std::max<int64_t>(o.steps_per_epoch, 1));
      double ms = o.base_ms * scale * std::exp(o.noise * rng.normal());
      if (i < o.warmup_steps && (phase == 1 || o.warmup_at_switch))
        ms *= 1.0 + (o.warmup_factor - 1.0) / std::pow(2.0, static_cast<double>(i));
      s.wall_ms = ms;
      elapsed_ms += ms;
      double loss = 0.0;
      for (int hd = 0; hd < o.heads; ++hd) {
        const double t = static_cast<double>(global) / 200.0;
        const double v = (0.2 + 0.1 * hd) + (1.0 + 0.5 * hd) * std::exp(-t) + 0.01 * rng.normal();
        s.head_losses[static_cast<size_t>(hd)] = v;
        loss += v * s.loss_weights[static_cast<size_t>(hd)];
      }
      s.loss = loss;
      s.lr = 1e-3;
      ++adam_step;
      if (o.probes) {
        add_probe_sections(o, phase, i, phase_compiles, adam_step, s);
      }
      writer.write(s);
    }
  }
  if (o.finished) {
    RunSummary summary;
    summary.steps = global;
    summary.elapsed_s = elapsed_ms / 1000.0;
    summary.compiles = compiles;
    summary.final_loss = s.loss;
    summary.final_head_losses = s.head_losses;
    writer.write(summary);
  }
}

}  // namespace recompdiag
