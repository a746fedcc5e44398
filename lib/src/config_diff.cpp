// Configuration differences between runs: the run header's facts flattened to dotted keys.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "detail/compare_parts.h"
#include "recompdiag/core/compare.h"

namespace recompdiag {
namespace {

void flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(it.value(), prefix + "." + it.key(), out);
    return;
  }
  out[prefix] = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::map<std::string, std::string> header_facts(const RunHeader& h) {
  std::map<std::string, std::string> out;
  flatten(h.config, "config", out);
  // Header facts the config already holds are listed once, under config.
  auto add = [&](const std::string& key, const std::string& value) {
    if (!out.count("config." + key)) out[key] = value;
  };
  add("mode", h.mode);
  add("optimizer_handoff", h.optimizer_handoff);
  add("device_used", h.device_used);
  add("torch_version", h.torch_version);
  add("seed", std::to_string(h.seed));
  add("step_timing", h.step_timing);
  return out;
}

std::vector<ConfigDifference> diff_facts(const std::map<std::string, std::string>& fa,
                                         const std::map<std::string, std::string>& fb) {
  std::set<std::string> keys;
  for (const auto& [k, v] : fa) keys.insert(k);
  for (const auto& [k, v] : fb) keys.insert(k);
  std::vector<ConfigDifference> out;
  for (const auto& k : keys) {
    auto ia = fa.find(k);
    auto ib = fb.find(k);
    std::string va = ia == fa.end() ? "(absent)" : ia->second;
    std::string vb = ib == fb.end() ? "(absent)" : ib->second;
    if (va != vb) out.push_back({k, va, vb});
  }
  return out;
}

}  // namespace

std::vector<ConfigDifference> diff_json(const nlohmann::json& a, const nlohmann::json& b,
                                        const std::string& prefix) {
  std::map<std::string, std::string> fa, fb;
  flatten(a, prefix, fa);
  flatten(b, prefix, fb);
  return diff_facts(fa, fb);
}

namespace detail {

std::vector<ConfigDifference> diff_headers(const RunHeader& a, const RunHeader& b) {
  return diff_facts(header_facts(a), header_facts(b));
}

std::optional<ConfigDifference> config_difference_beyond_seed(const RunHeader& a,
                                                              const RunHeader& b) {
  for (ConfigDifference& d : diff_headers(a, b)) {
    if (d.key != "seed" && d.key != "config.seed") return std::move(d);
  }
  return std::nullopt;
}

}  // namespace detail

}  // namespace recompdiag
