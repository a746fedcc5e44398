#pragma once
/// \file
/// The scenario's model, data and compiled step on LibTorch. Include only where LibTorch is
/// needed: this header pulls in <torch/torch.h>.

#include <torch/script.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "recompdiag/trainer/config.h"
#include "recompdiag/trainer/step_source.h"

namespace recompdiag::trainer {

/// Input projection, one GRU or LSTM layer, and two per-time-step heads (categorical with
/// `num_classes` logits, binary with one logit). Parameters are plain tensors so the compiled step
/// takes them as a list: see `step_parameters()`.
class SeqModelImpl : public torch::nn::Module {
 public:
  SeqModelImpl(int input_size, int hidden, int num_classes, const std::string& rnn);
  /// Parameters in the order the compiled step reads them.
  std::vector<torch::Tensor> step_parameters() const;

  /// On a CUDA device with cuDNN, puts the recurrent cell's four weights into one contiguous
  /// buffer, as cuDNN's fast path needs (torch.nn.RNNBase.flatten_parameters() does the same):
  /// the same parameter tensors, now views of it, so an optimizer's state keyed by them stays
  /// theirs. Without it cuDNN copies them at every step, and warns ("RNN module weights are not
  /// part of single contiguous chunk of memory"). Does nothing elsewhere. Call after moving the
  /// model to the device and after each recompile of the step.
  void flatten_rnn_weights();

 private:
  std::vector<torch::Tensor> ordered_;
  int64_t hidden_ = 0;
  bool lstm_ = false;
};
TORCH_MODULE(SeqModel);

/// One batch: inputs [B,T,F], class targets [B,T] (int64), binary targets [B,T] (float), temporal
/// sample weights [B,T] (0 on padding).
struct Batch {
  torch::Tensor x;
  torch::Tensor y_cat;
  torch::Tensor y_bin;
  torch::Tensor sample_weight;
};

/// A seeded synthetic sequence task: targets are a fixed function of the current and previous
/// inputs (so the loss can fall), valid lengths vary per sequence (padding weight 0), and valid
/// steps carry weights in [0.5, 1.5]. Uses LibTorch's global generator: seed it first.
std::vector<Batch> make_synthetic_batches(const TrainConfig& config, const torch::Device& device);

/// The three losses the compiled step returns.
struct StepLosses {
  torch::Tensor loss;
  torch::Tensor cat_loss;
  torch::Tensor bin_loss;
};

/// A training step compiled with torch::jit::compile: a fresh compilation unit, whose graph
/// executor profiles its first runs and then builds an optimized plan. Not thread-safe.
class CompiledStep {
 public:
  explicit CompiledStep(const StepSpec& spec);
  CompiledStep(const CompiledStep&) = delete;
  CompiledStep& operator=(const CompiledStep&) = delete;

  /// Runs forward and loss; `loss_weights` must be given exactly when the spec has no constants.
  StepLosses run(const Batch& batch, const std::vector<torch::Tensor>& params,
                 const torch::Tensor* loss_weights);

  const std::shared_ptr<torch::jit::CompilationUnit>& unit() const { return unit_; }
  const StepSpec& spec() const { return spec_; }

 private:
  StepSpec spec_;
  std::shared_ptr<torch::jit::CompilationUnit> unit_;
  torch::jit::Function* function_ = nullptr;
  std::vector<c10::IValue> stack_;  // reused across steps
};

/// Keras clipvalue: clamps every gradient element into [-clip, clip], in place.
void clip_gradients(const std::vector<torch::Tensor>& params, double clip);

/// A new Adam with Keras's betas and epsilon.
std::unique_ptr<torch::optim::Adam> make_adam(const std::vector<torch::Tensor>& params, double lr,
                                              double epsilon);

/// Copies `from`'s per-parameter state (step count, both moments) into `to`, each tensor moved
/// onto its parameter's device: the remedy for a rebuilt optimizer. Both must hold `params`.
void migrate_adam_state(const torch::optim::Adam& from, torch::optim::Adam& to,
                        const std::vector<torch::Tensor>& params);

/// The Adam step counter of `param`, or -1 when it has no state.
int64_t adam_step_of(const torch::optim::Adam& adam, const torch::Tensor& param);

/// Sets the lr of every param group in place (what a mutable lr is).
void set_lr(torch::optim::Optimizer& optimizer, double lr);
/// The lr of the first param group: the one in effect.
double current_lr(const torch::optim::Optimizer& optimizer);

}  // namespace recompdiag::trainer
