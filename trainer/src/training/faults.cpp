#include "recompdiag/trainer/faults.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ostream>
#include <sstream>

#include "recompdiag/core/error.h"

namespace recompdiag::trainer {

const std::vector<FaultInfo>& fault_catalogue() {
  static const std::vector<FaultInfo> catalogue = {
      {FaultKind::kRecompileStorm, "recompile-storm", false, false,
       "the lr (a value that changes every epoch) is treated as a compile-time constant of the "
       "step, so the step is compiled again before every epoch",
       "a compile_after_warmup alert every epoch, and a JIT compile named as the cause of each "
       "epoch's first slow steps"},
      {FaultKind::kFreshOptimizer, "fresh-optimizer", false, false,
       "recompile at the switch and rebuild Adam with empty state",
       "optimizer_state_reset at the switch; a training-quality regression, no time regression"},
      {FaultKind::kLrTrap, "lr-trap", false, false,
       "the new lr is written to a copy of the optimizer options: the old lr stays in effect",
       "lr_not_in_effect from the switch on; a training-quality regression, no time regression"},
      {FaultKind::kStateDtype, "state-dtype", true, false,
       "the migrated Adam moments land in float64: double-precision optimizer steps (CUDA only: "
       "on the CPU, LibTorch 1.13's Adam step aborts with an internal assert in addcdiv_ when the "
       "moments are float64 and the parameters float32)",
       "optimizer_state_off_device (dtype mismatch) from the switch on"},
      {FaultKind::kHostSync, "host-sync", false, false,
       "a host read of the loss inside every training step (loss.item() for logging), besides "
       "the recorder's marked read",
       "host_syncs: one extra sync per step, in steady state"},
      {FaultKind::kDeopt, "deopt", false, false,
       "the step is recompiled at the switch, and its graph executor's profiling never "
       "completes, so phase 2 runs the profiling plan instead of an optimized one",
       "jit_not_optimized: a profiling run at every step of phase 2, no optimized plan"},
      {FaultKind::kLeak, "leak", false, false,
       "the step is compiled again and Adam rebuilt (state migrated) before every epoch, and "
       "every recompile keeps the previous compiled unit and optimizer alive",
       "memory_growth: resident memory grows with each recompile"},
      {FaultKind::kStateOnHost, "state-on-host", true, false,
       "Adam state migrated to the CPU while the parameters stay on the GPU",
       "optimizer_state_off_device from the switch on"},
      {FaultKind::kOpsOnHost, "ops-on-host", true, false,
       "the loss is computed from host copies, with copies both ways every step",
       "host_ops and cross_device_copies every step"},
      {FaultKind::kExtraWork, "extra-work", false, true,
       "extra-work=P: real extra computation costing about P percent of a step (for power "
       "measurements)",
       "a steady-state regression of about P percent with no probe signal"},
      {FaultKind::kRecompileOneRank, "recompile-one-rank", false, true,
       "recompile-one-rank[=K] (data-parallel runs): rank K (default 1) alone compiles its step "
       "again at the phase switch (in mutable mode nothing else recompiles there) and, with "
       "recompile-storm, alone recompiles every epoch, as a rank-dependent shape does; every "
       "other rank waits for it in the next all-reduces",
       "rank K's compile named as the cause of every rank's slow steps; the other ranks' "
       "all-reduce wait at those steps"},
  };
  return catalogue;
}

const FaultInfo& fault_info(FaultKind kind) {
  for (const FaultInfo& f : fault_catalogue()) {
    if (f.kind == kind) return f;
  }
  throw std::logic_error("fault kind missing from the catalogue");
}

bool FaultSet::has(FaultKind kind) const {
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

bool FaultSet::needs_cuda() const {
  return std::any_of(kinds.begin(), kinds.end(),
                     [](FaultKind k) { return fault_info(k).needs_cuda; });
}

std::string FaultSet::to_string() const {
  std::string out;
  for (const std::string& name : to_json().get<std::vector<std::string>>()) {
    out += (out.empty() ? "" : ",") + name;
  }
  return out;
}

nlohmann::json FaultSet::to_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (FaultKind k : kinds) {
    std::string name = fault_info(k).name;
    if (k == FaultKind::kExtraWork) {
      // Shortest text that reads back to the same double: the header and to_string() must
      // round-trip through parse_faults() (the flags fuzzer found 6-digit output did not).
      char buf[32];
      const auto end = std::to_chars(buf, buf + sizeof buf, extra_work_pct).ptr;
      name += "=" + std::string(buf, end);
    }
    if (k == FaultKind::kRecompileOneRank) name += "=" + std::to_string(one_rank);
    out.push_back(name);
  }
  return out;
}

namespace {

/// How a fault's value is written after its name: "=P", "[=K]" or nothing.
const char* value_syntax(const FaultInfo& f) {
  if (f.kind == FaultKind::kRecompileOneRank) return "[=K]";
  return f.takes_value ? "=P" : "";
}

std::string accepted_names() {
  std::string out;
  for (const FaultInfo& f : fault_catalogue()) {
    out += (out.empty() ? "" : ", ") + std::string(f.name) + value_syntax(f);
  }
  return out;
}

}  // namespace

FaultSet parse_faults(const std::string& text, const std::string& flag) {
  FaultSet out;
  if (text.empty()) return out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const FaultInfo* info = nullptr;
    for (const FaultInfo& f : fault_catalogue()) {
      if (name == f.name) info = &f;
    }
    if (!info) {
      throw InputError(flag + ": unknown fault '" + name + "' (expected one of " +
                       accepted_names() + "; '--fault list' describes them)");
    }
    if (out.has(info->kind)) throw InputError(flag + ": fault '" + name + "' is given twice");
    if (!info->takes_value && eq != std::string::npos) {
      throw InputError(flag + ": fault '" + name + "' takes no value");
    }
    if (info->kind == FaultKind::kExtraWork) {
      const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
      size_t used = 0;
      double pct = 0.0;
      try {
        pct = std::stod(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != value.size() || !(pct > 0.0 && pct <= 1000.0)) {
        throw InputError(flag + ": extra-work takes a percent of the step in (0, 1000], as " +
                         "extra-work=10; got '" + item + "'");
      }
      out.extra_work_pct = pct;
    }
    if (info->kind == FaultKind::kRecompileOneRank && eq != std::string::npos) {
      const std::string value = item.substr(eq + 1);
      int rank = -1;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), rank);
      if (value.empty() || ec != std::errc() || ptr != value.data() + value.size() || rank < 0 ||
          rank > 1023) {
        throw InputError(flag + ": recompile-one-rank takes a rank in [0, 1023], as " +
                         "recompile-one-rank=1; got '" + item + "'");
      }
      out.one_rank = rank;
    }
    out.kinds.push_back(info->kind);
  }
  if (text.back() == ',') throw InputError(flag + ": expected a comma-separated list of faults");
  return out;
}

void print_fault_catalogue(std::ostream& out) {
  for (const FaultInfo& f : fault_catalogue()) {
    out << f.name << value_syntax(f) << (f.needs_cuda ? "  (needs CUDA)" : "")
        << "\n    does:      " << f.does << "\n    diagnosis: " << f.diagnosis << "\n";
  }
}

}  // namespace recompdiag::trainer
