#include "recompdiag/probes/optimizer_probe.h"

#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

#include "recompdiag/core/error.h"

namespace recompdiag::probes {
namespace {

// The optimizer's state map key of a parameter. LibTorch 1.x keys by the
// TensorImpl address printed as a string, 2.x by the address itself.
template <class Key>
Key state_key(const at::Tensor& param) {
  if constexpr (std::is_same_v<Key, std::string>) {
    // What c10::guts::to_string(TensorImpl*) printed in 1.x, without depending
    // on it.
    std::ostringstream key;
    key << static_cast<const void*>(param.unsafeGetTensorImpl());
    return key.str();
  } else {
    return static_cast<Key>(param.unsafeGetTensorImpl());
  }
}

struct StateView {
  const at::Tensor* tensors[4] = {nullptr, nullptr, nullptr, nullptr};
  bool has_step = false;
  int64_t step = 0;
};

// Known state types; an unknown one (LBFGS, user-defined) contributes presence
// only.
StateView view_of(torch::optim::OptimizerParamState& state) {
  StateView v;
  if (auto* s = dynamic_cast<torch::optim::AdamParamState*>(&state)) {
    v.tensors[0] = &s->exp_avg();
    v.tensors[1] = &s->exp_avg_sq();
    v.tensors[2] = &s->max_exp_avg_sq();
    v.has_step = true;
    v.step = static_cast<int64_t>(s->step());
  } else if (auto* s = dynamic_cast<torch::optim::AdamWParamState*>(&state)) {
    v.tensors[0] = &s->exp_avg();
    v.tensors[1] = &s->exp_avg_sq();
    v.tensors[2] = &s->max_exp_avg_sq();
    v.has_step = true;
    v.step = static_cast<int64_t>(s->step());
  } else if (auto* s = dynamic_cast<torch::optim::SGDParamState*>(&state)) {
    v.tensors[0] = &s->momentum_buffer();
  } else if (auto* s = dynamic_cast<torch::optim::AdagradParamState*>(&state)) {
    v.tensors[0] = &s->sum();
    v.has_step = true;
    v.step = static_cast<int64_t>(s->step());
  } else if (auto* s = dynamic_cast<torch::optim::RMSpropParamState*>(&state)) {
    v.tensors[0] = &s->square_avg();
    v.tensors[1] = &s->momentum_buffer();
    v.tensors[2] = &s->grad_avg();
    v.has_step = true;
    v.step = static_cast<int64_t>(s->step());
  }
  return v;
}

// The snapshot of a torch::optim optimizer: its groups' lrs and each parameter's known state.
OptimizerSnapshot snapshot_of(torch::optim::Optimizer& optimizer) {
  OptimizerSnapshot out;
  auto& state = optimizer.state();
  using Key = typename std::remove_reference_t<decltype(state)>::key_type;
  for (auto& group : optimizer.param_groups()) {
    out.group_lrs.push_back(group.options().get_lr());
    for (const at::Tensor& param : group.params()) {
      ParamStateSnapshot p;
      p.param = param;
      auto it = state.find(state_key<Key>(param));
      if (it != state.end() && it->second) {
        p.has_state = true;
        const StateView view = view_of(*it->second);
        if (view.has_step) p.step = view.step;
        for (const at::Tensor* t : view.tensors) {
          if (t != nullptr && t->defined()) p.state.push_back(*t);
        }
      }
      out.params.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace

void OptimizerStateProbe::set_optimizer(torch::optim::Optimizer* optimizer) {
  source_ = nullptr;
  if (optimizer != nullptr) source_ = [optimizer] { return snapshot_of(*optimizer); };
}

OptimizerStats OptimizerStateProbe::inspect() {
  if (source_) return inspect(source_());
  OptimizerStats out;
  out.lr_requested = requested_lr_;
  return out;
}

OptimizerStats OptimizerStateProbe::inspect(const OptimizerSnapshot& snapshot) {
  OptimizerStats out;
  out.lr_requested = requested_lr_;
  int64_t step_min = std::numeric_limits<int64_t>::max();
  int64_t step_max = 0;
  bool lr_mismatch = false;
  // Group 0's lr, unless a group differs from the request: then the first such group's.
  for (size_t g = 0; g < snapshot.group_lrs.size(); ++g) {
    const double lr = snapshot.group_lrs[g];
    if (g == 0) out.lr_effective = lr;
    if (requested_lr_ > 0.0 && lr != requested_lr_ && !lr_mismatch) {
      out.lr_effective = lr;
      lr_mismatch = true;
    }
  }
  int64_t with_grad_no_state = 0;
  for (const ParamStateSnapshot& p : snapshot.params) {
    ++out.params;
    if (!p.has_state) {
      if (p.param.defined() && p.param.grad().defined()) ++with_grad_no_state;
      continue;
    }
    ++out.params_with_state;
    if (p.step) {
      step_min = std::min(step_min, *p.step);
      step_max = std::max(step_max, *p.step);
    }
    for (const at::Tensor& t : p.state) {
      if (!t.defined()) continue;
      ++out.state_tensors;
      out.state_bytes += static_cast<int64_t>(t.numel() * t.element_size());
      if (!p.param.defined()) continue;
      if (t.device() != p.param.device()) ++out.state_off_device;
      if (t.scalar_type() != p.param.scalar_type()) ++out.state_dtype_mismatch;
    }
  }
  // Lazily created state (Adam's first step) is not "missing" before any state
  // exists; once some parameter has state, or state existed at the last
  // inspection, a gap is a finding.
  if (out.params_with_state > 0 || previous_with_state_ > 0) {
    out.state_missing = with_grad_no_state;
  }
  out.step_min = step_min == std::numeric_limits<int64_t>::max() ? 0 : step_min;
  out.step_max = step_max;
  out.state_reset = previous_step_max_ > 0 && step_max < previous_step_max_;
  previous_step_max_ = step_max;
  previous_with_state_ = out.params_with_state;
  return out;
}

}  // namespace recompdiag::probes
