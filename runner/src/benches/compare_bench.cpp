// The compare benchmark: two synthetic runs read, compared and rendered, timed part by part.

#include "recompdiag/runner/compare_bench.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <optional>
#include <sstream>
#include <thread>

#include "recompdiag/core/column_cache.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/run_set.h"
#include "recompdiag/core/step_columns.h"
#include "recompdiag/core/synthetic_run.h"
#include "recompdiag/reports/renderer.h"
#include "recompdiag/reports/words.h"
#include "recompdiag/runner/bench_json.h"
#include "recompdiag/runner/process.h"

// std::optional as a JSON value or null (nlohmann 3.11 has no serializer of its own for it).
NLOHMANN_JSON_NAMESPACE_BEGIN
template <typename T>
struct adl_serializer<std::optional<T>> {
  template <typename BasicJsonType>
  static void to_json(BasicJsonType& j, const std::optional<T>& v) {
    if (v) {
      j = *v;
    } else {
      j = nullptr;
    }
  }
  template <typename BasicJsonType>
  static void from_json(const BasicJsonType& j, std::optional<T>& v) {
    if (j.is_null()) {
      v.reset();
    } else {
      v = j.template get<T>();
    }
  }
};
NLOHMANN_JSON_NAMESPACE_END

namespace recompdiag::runner {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double peak_rss_mib() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// User plus system CPU seconds of this process so far: unlike wall time, barely moved by other
// processes competing for the cores.
double cpu_seconds() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return sec(usage.ru_utime) + sec(usage.ru_stime);
}

void check_steps(int64_t steps, const char* flag) {
  if (steps < 4) {
    throw InputError(std::string(flag) + ": steps must be at least 4, got " +
                     std::to_string(steps));
  }
}

}  // namespace

void CompareBenchOptions::validate() const { check_steps(steps, "--steps"); }

// The result's fields, listed once for both directions.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CompareBenchResult, steps, dir, file_mb, generate_s, read_s,
                                   compare_s, render_s, render_bytes, total_s, cpu_s, cores,
                                   load_before, rss_before_mib, read_peak_mib, peak_mib,
                                   bytes_per_step, column_bytes_per_step, verdict, column_cache,
                                   cached_read_s, cached_total_s)

nlohmann::ordered_json CompareBenchResult::to_json() const {
  nlohmann::ordered_json j = bench_json_head("compare");
  j.update(nlohmann::ordered_json(nlohmann::json(*this)));  // the fields in name order
  j["targets"] = {{"seconds", kTargetSeconds},
                  {"seconds_met", time_target_met()},
                  {"bytes_per_step", kTargetBytesPerStep},
                  {"bytes_per_step_met", memory_target_met()}};
  return j;
}

CompareBenchResult CompareBenchResult::from_json(const nlohmann::json& j) {
  try {
    return j.get<CompareBenchResult>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("not a bench compare result: ") + e.what());
  }
}

CompareBenchResult run_compare_bench(const CompareBenchOptions& o) {
  o.validate();
  CompareBenchResult r;
  r.steps = o.steps;
  r.dir = o.dir.empty() ? make_temp_dir("recompdiag_bench_") : o.dir;
  if (!o.dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(r.dir, ec);
    if (ec) throw IoError("cannot create --dir " + r.dir + ": " + ec.message());
  }
  const std::string path_a = r.dir + "/bench_a.jsonl";
  const std::string path_b = r.dir + "/bench_b.jsonl";

  // Two realistic runs: every step carries the dispatch, jit, optimizer and placement sections,
  // with the recompile tax at the switch; B's phase 2 is 3% slower.
  SyntheticRunOptions oa;
  oa.phase_steps = {o.steps / 2, o.steps - o.steps / 2};
  oa.seed = 1;
  SyntheticRunOptions ob = oa;
  ob.seed = 2;
  ob.phase_scale = {1.0, 1.03};
  auto t0 = std::chrono::steady_clock::now();
  auto gen_b = std::async(std::launch::async, [&] { write_synthetic_run(path_b, ob); });
  write_synthetic_run(path_a, oa);
  gen_b.get();
  r.generate_s = seconds_since(t0);
  r.file_mb =
      static_cast<double>(std::filesystem::file_size(path_a) + std::filesystem::file_size(path_b)) /
      1e6;
  r.rss_before_mib = peak_rss_mib();

  // What `recompdiag compare` does, through the reader it uses (core/run_set.h): read both
  // sides at once, compare, render.
  double load[1] = {0.0};
  if (::getloadavg(load, 1) == 1) r.load_before = load[0];
  const double cpu0 = cpu_seconds();
  t0 = std::chrono::steady_clock::now();
  const auto [runs_a, runs_b] = read_columnar_sides({path_a}, {path_b});
  const ColumnarRun& a = runs_a[0];
  const ColumnarRun& b = runs_b[0];
  r.read_s = seconds_since(t0);
  r.read_peak_mib = peak_rss_mib();
  const double column_bytes = static_cast<double>(a.steps.memory_bytes() + b.steps.memory_bytes());

  t0 = std::chrono::steady_clock::now();
  const Comparison c = compare_runs(a, b);
  r.compare_s = seconds_since(t0);

  const reports::ReportFormat formats[] = {
      reports::ReportFormat::kMarkdown, reports::ReportFormat::kHtml, reports::ReportFormat::kJson};
  for (int i = 0; i < 3; ++i) {
    t0 = std::chrono::steady_clock::now();
    std::ostringstream out;
    reports::make_renderer(formats[i])->render(c, out);
    r.render_s[i] = seconds_since(t0);
    r.render_bytes[i] = static_cast<int64_t>(out.str().size());
  }
  r.total_s = r.read_s + r.compare_s + r.render_s[0] + r.render_s[1] + r.render_s[2];
  r.cpu_s = cpu_seconds() - cpu0;
  r.cores = static_cast<int>(std::thread::hardware_concurrency());
  r.peak_mib = peak_rss_mib();
  const auto total_steps = static_cast<double>(a.steps.size() + b.steps.size());
  r.bytes_per_step = (r.peak_mib - r.rss_before_mib) * 1024.0 * 1024.0 / total_steps;
  r.column_bytes_per_step = column_bytes / total_steps;
  r.verdict = reports::summary(c);
  // The second read, after the memory figures: it holds another copy of both runs meanwhile.
  r.column_cache = !column_cache_dir().empty();
  t0 = std::chrono::steady_clock::now();
  {
    const auto again = read_columnar_sides({path_a}, {path_b});
    r.cached_read_s = seconds_since(t0);
  }
  r.cached_total_s = r.cached_read_s + r.total_s - r.read_s;
  if (!o.keep) {
    std::error_code ec;
    std::filesystem::remove_all(r.dir, ec);
  }
  return r;
}

std::vector<CompareBenchResult> run_compare_bench_sweep(
    const std::vector<int64_t>& steps, const std::vector<std::string>& self_command) {
  for (int64_t n : steps) check_steps(n, "--sweep");
  std::vector<CompareBenchResult> rounds;
  for (int64_t n : steps) {
    std::vector<std::string> argv = self_command;
    argv.insert(argv.end(), {"--steps", std::to_string(n), "--json", "-"});
    const Captured child = run_capturing(argv);
    if (!WIFEXITED(child.status) || WEXITSTATUS(child.status) != 0) {
      throw InputError("the round of " + std::to_string(n) + " steps failed");
    }
    const nlohmann::json j = nlohmann::json::parse(child.out, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      throw InputError("the round of " + std::to_string(n) + " steps printed no result");
    }
    rounds.push_back(CompareBenchResult::from_json(j));
  }
  return rounds;
}

}  // namespace recompdiag::runner
