// What happens between steps: compiles, the optimizer's handoff at a phase switch, lr changes and
// the faults that act there (faults.h). The operations of TwoPhaseTrainer::Impl declared in
// detail/trainer_impl.h under "phase_switch.cpp".

#include <chrono>
#include <cstdio>

#include "training/trainer_impl.h"

namespace recompdiag::trainer {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

std::string format_lr(double lr) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", lr);
  return buf;
}

void TwoPhaseTrainer::Impl::emit(const EventRecord& e) {
  if (monitor) {
    monitor->note_event(e.kind, e.reason, e.detail);
  } else {
    sinks.on_event(e);
  }
}

void TwoPhaseTrainer::Impl::use_optimizer(std::unique_ptr<torch::optim::Adam> rebuilt,
                                          double requested_lr) {
  if (has(FaultKind::kLeak) && adam) leaked_optimizers.push_back(std::move(adam));
  adam = std::move(rebuilt);
  lr_requested = requested_lr;
  if (monitor) {
    monitor->set_optimizer(*adam);
    monitor->set_requested_lr(requested_lr);
  }
}

void TwoPhaseTrainer::Impl::compile(const std::vector<double>& weights, int64_t at_step, int phase,
                                    const std::string& reason) {
  StepSpec spec;
  spec.rnn = config.rnn;
  spec.hidden = config.hidden;
  if (config.mode == TrainMode::kRecompile) spec.constant_loss_weights = weights;
  auto t0 = Clock::now();
  if (has(FaultKind::kLeak) && step) leaked_steps.push_back(std::move(step));
  step = std::make_unique<CompiledStep>(spec);
  model->flatten_rnn_weights();  // cuDNN's one buffer, kept across the recompile
  ++compiles;
  if (monitor) monitor->watch(step->unit());
  emit({EventKind::kCompile,
        at_step,
        phase,
        reason,
        {{"loss_weights_baked", config.mode == TrainMode::kRecompile},
         {"loss_weights", weights},
         {"compile_ms", ms_between(t0, Clock::now())},
         {"compiles", compiles}}});
}

void TwoPhaseTrainer::Impl::change_lr(double lr) {
  if (has(FaultKind::kLrTrap)) {
    detail::set_lr_on_copy(*adam, lr);
  } else {
    set_lr(*adam, lr);
  }
  lr_requested = lr;
  if (monitor) monitor->set_requested_lr(lr);
}

void TwoPhaseTrainer::Impl::rebuild_optimizer(double lr, OptimizerHandoff handoff, int64_t at_step,
                                              int phase) {
  auto rebuilt =
      make_adam(params, has(FaultKind::kLrTrap) ? current_lr(*adam) : lr, config.adam_epsilon);
  if (has(FaultKind::kLrTrap)) detail::set_lr_on_copy(*rebuilt, lr);
  if (handoff == OptimizerHandoff::kMigrate) migrate_adam_state(*adam, *rebuilt, params);
  use_optimizer(std::move(rebuilt), lr);
  emit({EventKind::kOptimizerRebuild,
        at_step,
        phase,
        handoff == OptimizerHandoff::kMigrate
            ? "Adam rebuilt for lr " + format_lr(lr) + "; state migrated onto " + device.str()
            : "Adam rebuilt for lr " + format_lr(lr) + " with empty state (fresh)",
        {{"handoff", to_string(handoff)}, {"lr", lr}}});
}

void TwoPhaseTrainer::Impl::switch_phase(size_t index, int64_t at_step) {
  const PhaseConfig& from = config.phases[index - 1];
  const PhaseConfig& to = config.phases[index];
  const int phase = static_cast<int>(index + 1);
  const std::string what = "phase " + std::to_string(phase) + ": loss weights " +
                           format_weights(from.loss_weights) + " -> " +
                           format_weights(to.loss_weights) + ", lr " + format_lr(from.lr) + " -> " +
                           format_lr(to.lr);
  const bool recompile_mode = config.mode == TrainMode::kRecompile;
  // fresh-optimizer and deopt recompile at the switch in either mode; fresh-optimizer also
  // rebuilds Adam, with empty state.
  const bool fresh = has(FaultKind::kFreshOptimizer);
  const bool recompile = recompile_mode || fresh || has(FaultKind::kDeopt);
  if (!recompile_mode) {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < to.loss_weights.size(); ++i) {
      loss_weights[static_cast<int64_t>(i)].fill_(to.loss_weights[i]);
    }
    emit({EventKind::kLossWeightsChange,
          at_step,
          phase,
          what,
          {{"from", from.loss_weights}, {"to", to.loss_weights}}});
  }
  if (recompile) {
    // deopt: the new step's executor starts profiling while this is held, and never finishes.
    if (has(FaultKind::kDeopt)) deopt = std::make_unique<detail::ProfilingNeverCompletes>();
    // Keras bakes loss weights into the compiled function: changing them means compiling again,
    // with an optimizer built for the new lr.
    compile(to.loss_weights, at_step, phase,
            recompile_mode ? what : what + " (fault: " + config.faults.to_string() + ")");
  }
  if (recompile_mode || fresh) {
    OptimizerHandoff handoff = config.handoff;
    if (has(FaultKind::kStateDtype)) handoff = OptimizerHandoff::kMigrate;
    if (fresh) handoff = OptimizerHandoff::kFresh;
    rebuild_optimizer(to.lr, handoff, at_step, phase);
  } else {
    const double old_lr = current_lr(*adam);
    change_lr(to.lr);
    emit({EventKind::kLrChange,
          at_step,
          phase,
          "phase " + std::to_string(phase) + ": lr " + format_lr(old_lr) + " -> " +
              format_lr(to.lr) + " set in place",
          {{"from", old_lr}, {"to", to.lr}, {"cause", "phase"}}});
  }
  // state-dtype: the carried-over moments land in float64.
  if (has(FaultKind::kStateDtype)) detail::cast_adam_state(*adam, torch::kDouble);
  // recompile-one-rank: this rank alone compiles (again), as a rank-dependent shape makes it.
  if (recompiles_alone()) {
    compile(to.loss_weights, at_step, phase,
            what + " (fault: recompile-one-rank=" + std::to_string(config.faults.one_rank) +
                ": this rank alone)");
  }
}

void TwoPhaseTrainer::Impl::start_epoch(const PhaseConfig& phase_config, int64_t at_step, int phase,
                                        int epoch) {
  // With recompile-one-rank, the storm rages on that rank only.
  const bool storm =
      has(FaultKind::kRecompileStorm) && (!has(FaultKind::kRecompileOneRank) || recompiles_alone());
  if (!storm && !has(FaultKind::kLeak)) return;
  const double lr = current_lr(*adam);
  compile(phase_config.loss_weights, at_step, phase,
          "epoch " + std::to_string(epoch) + " of phase " + std::to_string(phase) +
              ": recompiled because the lr (" + format_lr(lr) +
              ") is a compile-time constant of the step (fault: " + config.faults.to_string() +
              ")");
  if (has(FaultKind::kLeak)) {
    rebuild_optimizer(lr_requested, OptimizerHandoff::kMigrate, at_step, phase);
  }
}

}  // namespace recompdiag::trainer
