// Apache Otava's change points, computed by Otava itself in a Python interpreter.

#include "recompdiag/runner/otava.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "recompdiag/core/error.h"
#include "recompdiag/runner/process.h"

namespace recompdiag::runner {

namespace {

// Reads {"series": [[...], ...], "max_pvalue", "window_len", "min_magnitude"} from the file
// argv[1], writes {"otava": VERSION, "change_points": [[index, ...], ...]}; without Otava,
// {"error": ...} and exit 2.
constexpr const char* kScript = R"PY(
import json, sys
try:
    from importlib.metadata import version
    from otava.analysis import compute_change_points
except Exception as e:  # ImportError, or a broken install
    print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
    sys.exit(2)
job = json.load(open(sys.argv[1]))
out = []
for values in job["series"]:
    if len(values) < 3:
        out.append([])
        continue
    cps, _ = compute_change_points(values, window_len=job["window_len"],
                                   max_pvalue=job["max_pvalue"],
                                   min_magnitude=job["min_magnitude"])
    out.append(sorted(int(c.index) for c in cps))
print(json.dumps({"otava": version("apache-otava"), "change_points": out}))
)PY";

// `name` as a path: itself when it has a slash, else the executable of that name beside this
// one (pip installs recompdiag into the environment's bin/, beside its python3), else the first
// on PATH.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  try {
    const std::string beside =
        (std::filesystem::path(own_executable()).parent_path() / name).string();
    if (::access(beside.c_str(), X_OK) == 0) return beside;
  } catch (const IoError&) {
    // No /proc/self/exe: PATH alone.
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw InputError("cannot run " + name +
                   ": not found on PATH; give --python, an interpreter "
                   "with Apache Otava (pip install apache-otava)");
}

nlohmann::json run_otava(const nlohmann::json& job, const OtavaOptions& o) {
  const std::string python = find_program(o.python);
  TempDir dir("recompdiag-otava-");
  const std::string input = dir.path() + "/series.json";
  std::ofstream(input) << job.dump();
  Captured c;
  try {
    c = run_capturing({python, "-c", kScript, input});
  } catch (const IoError& e) {
    throw InputError("cannot run " + python + " for Apache Otava: " + e.what());
  }
  const nlohmann::json out = nlohmann::json::parse(c.out, nullptr, /*allow_exceptions=*/false);
  if (out.is_object() && out.contains("error")) {
    throw InputError(python + " has no Apache Otava (" + out["error"].get<std::string>() +
                     "): pip install apache-otava, or give --python an interpreter that has it");
  }
  if (!out.is_object()) {
    throw InputError(python + " printed no answer of Apache Otava's (exit status " +
                     std::to_string(c.status) +
                     "): give --python a Python interpreter with apache-otava");
  }
  if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) {
    throw IoError("Apache Otava failed in " + python + " (exit status " + std::to_string(c.status) +
                  "); its error is above");
  }
  return out;
}

}  // namespace

void OtavaOptions::validate() const {
  if (python.empty()) throw InputError("--python must name an interpreter");
  require_in_range("--max-pvalue", max_pvalue, 0.0, 1.0, true, true);
  if (window_len < 3) {
    throw InputError("--window must be at least 3 runs, got " + std::to_string(window_len));
  }
  require_in_range("OtavaOptions::min_magnitude", min_magnitude, 0.0, HUGE_VAL, false, true);
}

OtavaResult otava_change_points(const std::vector<std::vector<double>>& series,
                                const OtavaOptions& o) {
  o.validate();
  const nlohmann::json out = run_otava({{"series", series},
                                        {"max_pvalue", o.max_pvalue},
                                        {"window_len", o.window_len},
                                        {"min_magnitude", o.min_magnitude}},
                                       o);
  OtavaResult r;
  r.version = out.at("otava").get<std::string>();
  for (const auto& indexes : out.at("change_points")) {
    r.change_points.push_back(indexes.get<std::vector<size_t>>());
  }
  if (r.change_points.size() != series.size()) {
    throw IoError("Apache Otava answered for another number of series");
  }
  return r;
}

}  // namespace recompdiag::runner
