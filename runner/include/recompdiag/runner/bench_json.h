#pragma once
/// \file
/// The one JSON shape of every bench's result (`recompdiag bench <name> --json FILE`): an object
/// whose first keys say which bench and which build wrote it, then the bench's own figures.
///
///     {"bench": "compare", "tool_version": "0.4.0", ...figures}

#include <nlohmann/json.hpp>
#include <string>

#include "recompdiag/core/version.h"

namespace recompdiag::runner {

/// {"bench": name, "tool_version": kToolVersion}: the head every bench's to_json() starts from.
inline nlohmann::ordered_json bench_json_head(const std::string& name) {
  return {{"bench", name}, {"tool_version", kToolVersion}};
}

}  // namespace recompdiag::runner
