#pragma once
/// \file
/// Faults the built-in trainer can inject: real recompilation mistakes that users make, each with
/// what it does and what a correct diagnosis names. Torch-free: parsed and validated before
/// LibTorch is touched.
///
///     FaultSet faults = parse_faults("recompile-storm,extra-work=10");
///     if (faults.has(FaultKind::kRecompileStorm)) { ... }

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace recompdiag::trainer {

/// One injectable fault.
enum class FaultKind {
  kRecompileStorm,  ///< A value that changes every epoch is baked in: recompile every epoch.
  kFreshOptimizer,  ///< Recompile at the switch and rebuild Adam with empty state.
  kLrTrap,          ///< The new lr is written to a copy of the options: the old lr stays.
  kStateDtype,      ///< Migrated Adam moments land in float64.
  kHostSync,        ///< A per-step host read inside the training step.
  kDeopt,           ///< The recompiled step runs without the graph executor's optimized plan.
  kLeak,            ///< Every recompile keeps the previous unit and optimizer alive.
  kStateOnHost,     ///< Adam state migrated to the CPU while parameters stay on the GPU.
  kOpsOnHost,       ///< The loss computed from host copies, copies both ways every step.
  kExtraWork,       ///< Real extra computation costing about `extra_work_pct` of a step.
  kRecompileOneRank,  ///< Data-parallel: only rank `one_rank` recompiles; the others wait for it.
};

/// What the catalogue says of one fault.
struct FaultInfo {
  FaultKind kind;
  const char* name;       ///< The `--fault` name: "recompile-storm".
  bool needs_cuda;        ///< Only meaningful with the model on a GPU.
  bool takes_value;       ///< Written NAME=VALUE (extra-work=10; recompile-one-rank[=K]).
  const char* does;       ///< One line: what the fault does to the run.
  const char* diagnosis;  ///< One line: what a correct diagnosis names.
};

/// Every fault, in the order `--fault list` prints them. Static storage; thread-safe.
const std::vector<FaultInfo>& fault_catalogue();

/// The catalogue entry of `kind`.
const FaultInfo& fault_info(FaultKind kind);

/// The faults a run injects. Empty: a healthy run.
struct FaultSet {
  std::vector<FaultKind> kinds;  ///< Each at most once, in the order given.
  double extra_work_pct = 0.0;   ///< Percent of a step that kExtraWork adds (> 0 when present).
  int one_rank = 1;              ///< The rank kRecompileOneRank recompiles on (default 1).

  bool empty() const { return kinds.empty(); }
  bool has(FaultKind kind) const;
  /// True when any fault needs CUDA.
  bool needs_cuda() const;
  /// "recompile-storm,extra-work=10": parse_faults() reads it back.
  std::string to_string() const;
  /// For the run header: an array of names ("extra-work=10" with its value).
  nlohmann::json to_json() const;
};

/// Parses a comma-separated list of fault names ("NAME" or "NAME=VALUE"); "" gives an empty set.
/// Throws InputError naming the flag and the accepted names for an unknown name, a repeated one,
/// a value where none is taken, or a missing or out-of-range value (extra-work takes a percent in
/// (0, 1000]; recompile-one-rank an optional rank in [0, 1023], default 1). Whether that rank
/// exists is checked against the world size by the trainer's config.
FaultSet parse_faults(const std::string& text, const std::string& flag = "--fault");

/// Writes the catalogue as a table: name, what it does, what the diagnosis should say.
void print_fault_catalogue(std::ostream& out);

}  // namespace recompdiag::trainer
