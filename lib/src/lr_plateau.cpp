#include "recompdiag/core/lr_plateau.h"

#include <algorithm>
#include <cmath>

#include "recompdiag/core/error.h"

namespace recompdiag {

void PlateauOptions::validate(const std::string& prefix) const {
  // A command line's flags are kebab-case, Python's arguments snake_case.
  const bool flags = prefix.rfind("--", 0) == 0;
  const auto name = [&](const char* field) {
    std::string n = prefix + field;
    if (flags) std::replace(n.begin(), n.end(), '_', '-');
    return n;
  };
  if (!(factor > 0 && factor < 1)) throw InputError(name("factor") + " must be in (0, 1)");
  if (patience < 0 || cooldown < 0) {
    throw InputError(name("patience") + " and " + name("cooldown") + " must be >= 0");
  }
  if (!(min_lr >= 0) || !(min_delta >= 0)) {
    throw InputError(name("min_lr") + " and " + name("min_delta") + " must be >= 0");
  }
}

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
