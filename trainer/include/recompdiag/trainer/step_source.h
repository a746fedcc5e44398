#pragma once
/// \file
/// The TorchScript source of the training step (forward pass plus weighted loss), generated per
/// mode: with the loss weights as literals (what Keras bakes in at compile time) or read from a
/// tensor argument. Torch-free, so the text can be inspected and tested on its own.

#include <optional>
#include <string>
#include <vector>

namespace recompdiag::trainer {

/// What the generated step looks like.
struct StepSpec {
  std::string rnn = "gru";  ///< "gru" or "lstm".
  int hidden = 32;
  /// Baked-in loss weights; nullopt reads them from the `loss_weights` tensor argument.
  std::optional<std::vector<double>> constant_loss_weights;
};

/// Name of the compiled function in the compilation unit.
inline constexpr const char* kStepFunctionName = "train_step";

/// TorchScript source defining `train_step(x, y_cat, y_bin, sample_weight, params[,
/// loss_weights]) -> (loss, cat_loss, bin_loss)`. `params` is the model's parameter list in
/// SeqModel order. Per-time-step losses are multiplied by the temporal sample weights and averaged
/// over all (sequence, time step) cells, as Keras's sample_weight_mode="temporal" does with its
/// default SUM_OVER_BATCH_SIZE reduction.
std::string step_source(const StepSpec& spec);

/// Formats loss weights as the run file and events show them: "[0.7,0.3]".
std::string format_weights(const std::vector<double>& weights);

}  // namespace recompdiag::trainer
