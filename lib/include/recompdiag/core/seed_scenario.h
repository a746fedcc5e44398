#pragma once
/// \file
/// The seed's scenario as data, without LibTorch: the Keras user's two-head sequence job that
/// recompdiag reproduces (a GRU with a categorical and a binary head per time step, Adam with
/// Keras's epsilon and clipvalue, loss weights [0.7, 0.3] then [0.99, 0.01] with lr 0.01 then
/// 0.001), scaled down so that a run takes well under a minute on 2 CPU cores. One list of its
/// defaults: the LibTorch trainer's TrainConfig and the Python package's seed
/// (`recompdiag._core.seed_scenario()`) both read it. `--epochs 375,125` gives the original.

#include <array>

namespace recompdiag::seed_scenario {

/// One phase of the job: how long, with which loss weights (one per head) and lr.
struct Phase {
  int epochs;
  std::array<double, 2> loss_weights;
  double lr;
};

inline constexpr std::array<Phase, 2> kPhases = {
    {{30, {0.7, 0.3}, 0.01}, {10, {0.99, 0.01}, 0.001}}};
inline constexpr int kStepsPerEpoch = 10;
inline constexpr int kBatchSize = 32;
inline constexpr int kSeqLen = 24;
inline constexpr int kInputSize = 8;
inline constexpr int kHidden = 32;
inline constexpr int kNumClasses = 5;
inline constexpr double kClipValue = 0.1;     ///< Keras clipvalue: element-wise gradient clipping.
inline constexpr double kAdamEpsilon = 1e-7;  ///< Keras's Adam epsilon (LibTorch's is 1e-8).
inline constexpr unsigned kSeed = 42;

}  // namespace recompdiag::seed_scenario
