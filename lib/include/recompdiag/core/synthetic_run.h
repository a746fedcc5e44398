#pragma once
/// \file
/// Deterministic synthetic run files: what a two-phase training run writes, without training.
///
/// Used by `recompdiag bench compare` (million-step runs) and to generate the checked-in test
/// fixtures (tests/fixtures/compare_*.jsonl). The same options give the same bytes on every
/// platform (own generator, shortest round-trip number formatting).

#include <cstdint>
#include <string>
#include <vector>

namespace recompdiag {

/// Shape of a synthetic run.
struct SyntheticRunOptions {
  std::string mode = "recompile";                 ///< Header mode ("recompile", "mutable", ...).
  std::vector<int64_t> phase_steps = {100, 100};  ///< Steps in each phase (phases from 1).
  std::vector<double> phase_scale = {1.0, 1.0};   ///< Step-time multiplier of each phase (1: none).
  double base_ms = 5.0;                           ///< Steady step time before scaling.
  double noise = 0.04;                            ///< Log-normal sigma of the step-time noise.
  int64_t warmup_steps = 3;                       ///< Slow steps at the start of each phase.
  double warmup_factor = 20.0;   ///< Slowdown of a phase's first step; halves each step after.
  bool warmup_at_switch = true;  ///< Phases after the first start slow too (recompiled step).
  int64_t switch_compiles = 2;   ///< JIT compiles at the first step of each phase after the first.
  bool optimizer_reset_at_switch = true;  ///< The optimizer state is rebuilt at each switch.
  int heads = 2;                          ///< Loss heads.
  int64_t steps_per_epoch = 50;
  bool probes = true;    ///< Write dispatch, jit, optimizer and placement sections.
  bool finished = true;  ///< Write the summary line.
  uint64_t seed = 1;

  /// Throws InputError naming the field for the first value out of range: no phases, a negative
  /// step count or step time, a scale or warm-up factor of 0 or less, a negative noise, warm-up or
  /// compile count, fewer than one head or step per epoch. A phase of no steps and steps of 0 ms
  /// are allowed: the bad runs the tests feed `compare`. write_synthetic_run() calls it.
  void validate() const;
};

/// Writes a synthetic run to `path` (truncating it) through RunWriter. Throws InputError when
/// `options.validate()` does or the file cannot be written.
void write_synthetic_run(const std::string& path, const SyntheticRunOptions& options);

}  // namespace recompdiag
