#pragma once
/// \file
/// Keras's ReduceLROnPlateau callback (mode "min"), without LibTorch: the seed's lr schedule, which
/// the LibTorch trainer and the Python package's seed step alike.

#include <optional>
#include <string>

namespace recompdiag {

/// Keras's ReduceLROnPlateau, with Keras's defaults (mode "min"). Plain data.
struct PlateauOptions {
  double factor = 0.1;
  int patience = 10;
  double min_delta = 1e-4;
  int cooldown = 0;
  double min_lr = 0.0;

  /// Throws InputError for a factor outside (0, 1), or a negative patience, cooldown, min_delta
  /// or min_lr. `prefix` names the fields as the caller's interface does: "--plateau-" gives
  /// "--plateau-min-lr" (a command line's flags), "" gives "min_lr" (Python's arguments).
  void validate(const std::string& prefix = "") const;
};

/// Watches a loss once per epoch and lowers the lr by `factor` after `patience` epochs without an
/// improvement of at least `min_delta`, then waits `cooldown` epochs; never below `min_lr`.
/// Follows keras.callbacks.ReduceLROnPlateau step for step. Not thread-safe.
class ReduceLrOnPlateau {
 public:
  /// Throws InputError for options that PlateauOptions::validate() refuses.
  explicit ReduceLrOnPlateau(PlateauOptions options) : options_(options) { options_.validate(); }

  /// Feeds one epoch's loss and the lr in effect; returns the new lr when it should change.
  std::optional<double> on_epoch_end(double loss, double current_lr);

  /// Forgets history, as a new `fit` call does with a new callback.
  void reset();

 private:
  PlateauOptions options_;
  std::optional<double> best_;
  int wait_ = 0;
  int cooldown_counter_ = 0;
};

}  // namespace recompdiag
