// Noise profiles: the run-to-run spread of steady medians, measured from healthy runs, written
// and read as JSON, and handed to compare.
#include "recompdiag/core/noise_profile.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "detail/compare_parts.h"
#include "detail/json_integer.h"
#include "recompdiag/core/analysis.h"
#include "recompdiag/core/error.h"

namespace recompdiag {

namespace {

constexpr int kMinRuns = 3;

}  // namespace

nlohmann::json NoiseProfile::to_json() const {
  nlohmann::json phases_json = nlohmann::json::array();
  for (const PhaseNoise& p : phases) {
    phases_json.push_back({{"phase", p.phase}, {"spread", p.spread}, {"medians_ms", p.medians_ms}});
  }
  return {{"type", "noise_profile"},
          {"schema", kSchema},
          {"run_noise", run_noise},
          {"degrees_of_freedom", degrees_of_freedom},
          {"runs", runs},
          {"phases", phases_json},
          {"host", host},
          {"tool_version", tool_version},
          {"config", config},
          {"paths", paths}};
}

NoiseProfile measure_noise_profile(const std::vector<ColumnarRun>& runs,
                                   const AnalysisOptions& analysis) {
  if (runs.size() < static_cast<size_t>(kMinRuns)) {
    throw InputError("a noise profile needs at least " + std::to_string(kMinRuns) +
                     " healthy runs of one config, got " + std::to_string(runs.size()));
  }
  for (size_t i = 1; i < runs.size(); ++i) {
    if (const auto d = detail::config_difference_beyond_seed(runs[0].header, runs[i].header)) {
      throw InputError(runs[i].path + ": its configuration differs from " + runs[0].path + " in " +
                       d->key + " (" + d->b + " here, " + d->a +
                       " there); a noise profile measures runs of one config");
    }
  }
  NoiseProfile p;
  p.runs = static_cast<int64_t>(runs.size());
  p.degrees_of_freedom = p.runs - 1;
  p.host = runs[0].header.host;
  p.tool_version = runs[0].header.tool_version;
  p.config = runs[0].header.config;
  std::vector<RunAnalysis> analyses;
  for (const ColumnarRun& r : runs) {
    analyses.push_back(analyze_run(r, analysis));
    p.paths.push_back(r.path);
  }
  for (const PhaseAnalysis& first : analyses[0].phases) {
    PhaseNoise noise;
    noise.phase = first.phase;
    std::vector<double> logs;
    for (const RunAnalysis& a : analyses) {
      const auto i = find_phase(a, first.phase);
      if (!i || !(a.phases[*i].steady.median_ms > 0.0)) {
        throw InputError(a.path + ": no steady steps in phase " + std::to_string(first.phase) +
                         "; every run of a noise profile needs the phases of the first");
      }
      noise.medians_ms.push_back(a.phases[*i].steady.median_ms);
      logs.push_back(std::log(a.phases[*i].steady.median_ms));
    }
    noise.spread = std::sqrt(stats::mean_variance(logs).variance);
    p.run_noise = std::max(p.run_noise, noise.spread);
    p.phases.push_back(std::move(noise));
  }
  return p;
}

void write_noise_profile(const NoiseProfile& profile, const std::string& path) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << profile.to_json().dump(2) << "\n";
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw IoError(path + ": cannot write the noise profile");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw IoError(path + ": cannot write the noise profile");
  }
}

NoiseProfile read_noise_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the noise profile");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    throw InputError(path + ": not JSON; a noise profile is what `recompdiag bench noise` writes");
  }
  if (j.value("type", std::string()) != "noise_profile") {
    throw InputError(path + ": not a noise profile (no \"type\": \"noise_profile\")");
  }
  if (!j.contains("schema") || !j["schema"].is_number_integer() ||
      j["schema"].get<int>() != NoiseProfile::kSchema) {
    throw InputError(path + ": noise profile schema " +
                     (j.contains("schema") ? j["schema"].dump() : std::string("(absent)")) +
                     " is not " + std::to_string(NoiseProfile::kSchema));
  }
  NoiseProfile p;
  auto integer = [&](const nlohmann::json& v, const char* key, auto* out) {
    if (const char* why = detail::json_integer(v, out))
      throw InputError(path + ": noise profile's '" + key + "' " + why);
  };
  try {
    p.run_noise = j.at("run_noise").get<double>();
    integer(j.at("degrees_of_freedom"), "degrees_of_freedom", &p.degrees_of_freedom);
    integer(j.at("runs"), "runs", &p.runs);
    p.host = j.value("host", std::string());
    p.tool_version = j.value("tool_version", std::string());
    p.config = j.value("config", nlohmann::json::object());
    p.paths = j.value("paths", std::vector<std::string>());
    for (const auto& ph : j.value("phases", nlohmann::json::array())) {
      PhaseNoise n;
      integer(ph.at("phase"), "phase", &n.phase);
      n.spread = ph.at("spread").get<double>();
      n.medians_ms = ph.value("medians_ms", std::vector<double>());
      p.phases.push_back(std::move(n));
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": malformed noise profile: " + e.what());
  }
  if (!(p.run_noise >= 0.0 && p.run_noise < 1.0)) {
    throw InputError(path + ": run_noise must be in [0, 1), got " + std::to_string(p.run_noise));
  }
  if (p.degrees_of_freedom < 1) {
    throw InputError(path + ": degrees_of_freedom must be >= 1, got " +
                     std::to_string(p.degrees_of_freedom));
  }
  return p;
}

void apply_noise_profile(const NoiseProfile& profile, const std::string& path,
                         CompareOptions& options) {
  options.run_noise = profile.run_noise;
  options.run_noise_df = static_cast<double>(profile.degrees_of_freedom);
  options.run_noise_source = "noise profile " + path + ": " + std::to_string(profile.runs) +
                             " runs" + (profile.host.empty() ? "" : " on " + profile.host);
}

}  // namespace recompdiag
