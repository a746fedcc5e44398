#include "recompdiag/core/lr_plateau.h"

#include <algorithm>
#include <cmath>

namespace recompdiag {

std::optional<double> ReduceLrOnPlateau::on_epoch_end(double loss, double current_lr) {
  // Keras: in_cooldown is checked first and decrements; improvement resets wait; otherwise, when
  // not in cooldown, wait grows and at `patience` the lr drops (if above min_lr).
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    wait_ = 0;
  }
  if (!best_ || loss < *best_ - options_.min_delta) {
    best_ = loss;
    wait_ = 0;
    return std::nullopt;
  }
  if (cooldown_counter_ > 0) return std::nullopt;
  ++wait_;
  if (wait_ < options_.patience) return std::nullopt;
  if (current_lr <= options_.min_lr) return std::nullopt;
  wait_ = 0;
  cooldown_counter_ = options_.cooldown;
  return std::max(current_lr * options_.factor, options_.min_lr);
}

void ReduceLrOnPlateau::reset() {
  best_.reset();
  wait_ = 0;
  cooldown_counter_ = 0;
}

}  // namespace recompdiag
