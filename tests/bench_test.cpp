// The benches as library code (recompdiag/trainer/*_bench.h): options that check themselves, a
// result with every arm and interval, and the one JSON shape. Shape and consistency only: no
// timing is judged.

#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include "recompdiag/core/error.h"
#include "recompdiag/core/version.h"
#include "recompdiag/runner/compare_bench.h"
#include "recompdiag/trainer/overhead_bench.h"

using namespace recompdiag;
using namespace recompdiag::trainer;

namespace {

OverheadBenchOptions small_overhead() {
  OverheadBenchOptions o;
  o.config.batch_size = 4;
  o.config.seq_len = 6;
  o.config.hidden = 8;
  o.config.threads = 1;
  o.config.log_alerts = false;
  o.rounds = 3;
  o.sample_every = 10;  // a short block: 2 dropped steps and one sampling period
  o.block_steps = 12;
  o.warmup_steps = 2;
  o.exporter = false;  // no port to bind in a unit test
  return o;
}

}  // namespace

TEST_CASE("bench compare: every part timed, the runs removed unless kept, JSON round trip") {
  runner::CompareBenchOptions o;
  o.steps = 2000;
  const runner::CompareBenchResult r = runner::run_compare_bench(o);
  CHECK(r.steps == 2000);
  CHECK(r.file_mb > 0.0);
  CHECK(r.read_s > 0.0);
  CHECK(r.compare_s > 0.0);
  for (int i = 0; i < 3; ++i) CHECK(r.render_bytes[i] > 0);
  CHECK(r.total_s ==
        doctest::Approx(r.read_s + r.compare_s + r.render_s[0] + r.render_s[1] + r.render_s[2]));
  CHECK(r.peak_mib >= r.read_peak_mib);
  CHECK(r.read_peak_mib >= r.rss_before_mib);
  CHECK_FALSE(r.verdict.empty());
  CHECK_FALSE(std::filesystem::exists(r.dir));  // not kept

  const nlohmann::ordered_json j = r.to_json();
  CHECK(j.begin().key() == "bench");
  CHECK(j["bench"] == "compare");
  CHECK(j["tool_version"] == kToolVersion);
  CHECK(j["targets"]["seconds_met"] == r.time_target_met());
  const runner::CompareBenchResult back =
      runner::CompareBenchResult::from_json(nlohmann::json::parse(j.dump()));
  CHECK(back.to_json() == j);
  CHECK_THROWS_AS(runner::CompareBenchResult::from_json(nlohmann::json::object()), InputError);

  o.steps = 3;
  CHECK_THROWS_AS(o.validate(), InputError);
  CHECK_THROWS_AS(runner::run_compare_bench(o), InputError);
  CHECK_THROWS_AS(runner::run_compare_bench_sweep({2000, 3}, {"/bin/false"}), InputError);
}

TEST_CASE("bench overhead: every arm, a paired interval for each against monitor off") {
  const OverheadBenchOptions o = small_overhead();
  const OverheadBenchResult r = run_overhead_bench(o);
  REQUIRE(r.arms.size() >= 5);
  CHECK(r.arms[0].name == "monitor off");
  CHECK(r.arms[3].name == "probes, inputs 1/10, counted, RecordFunction");
  CHECK(r.arms[4].name == "probes, dispatcher 1/10 (default)");
  std::set<std::string> names;
  for (const OverheadArm& arm : r.arms) {
    CAPTURE(arm.name);
    names.insert(arm.name);
    CHECK(arm.round_means.size() == static_cast<size_t>(o.rounds));
    CHECK(arm.median_ms > 0.0);
    CHECK(arm.ratio.has_value() == (&arm != &r.baseline()));
    if (arm.ratio) {
      CHECK(arm.ratio->test.low <= arm.ratio->test.ratio);
      CHECK(arm.ratio->test.ratio <= arm.ratio->test.high);
      CHECK(arm.ratio->includes_one == (arm.ratio->test.low <= 1.0 && arm.ratio->test.high >= 1.0));
    }
  }
  CHECK(names.size() == r.arms.size());
  CHECK_FALSE(r.exporter_vs_probes.has_value());  // not asked for
  CHECK(r.default_vs_profiler.has_value() == r.profiler_unavailable.empty());
  CHECK(r.memory_read_ns > 0.0);

  const nlohmann::ordered_json j = r.to_json();
  CHECK(j.begin().key() == "bench");
  CHECK(j["bench"] == "overhead");
  CHECK(j["options"]["rounds"] == o.rounds);
  REQUIRE(j["arms"].size() == r.arms.size());
  CHECK(j["arms"][0]["vs_off"].is_null());
  CHECK(j["arms"][1]["vs_off"]["ratio"].get<double>() == r.arms[1].ratio->test.ratio);
  CHECK(j["arms"][1]["round_means_ms"].size() == static_cast<size_t>(o.rounds));
}

TEST_CASE("bench overhead: options and instruction arms check themselves") {
  OverheadBenchOptions o = small_overhead();
  CHECK_NOTHROW(o.validate());
  o.rounds = 1;
  CHECK_THROWS_AS(o.validate(), InputError);
  o = small_overhead();
  o.block_steps = 7;  // 5 kept steps: not a multiple of sample_every 10
  CHECK_THROWS_AS(o.validate(), InputError);
  o = small_overhead();
  o.config.batch_size = 0;
  CHECK_THROWS_AS(o.validate(), InputError);

  InstructionBenchOptions i;
  i.sample_every = 10;
  i.short_steps = 3;
  i.counted_steps = 11;
  CHECK(i.short_block() == 10);
  CHECK(i.counted_block() == 20);
  i.counted_steps = 0;
  CHECK_THROWS_AS(i.validate(), InputError);

  for (const std::string& arm : instruction_arms()) CHECK_NOTHROW(check_instruction_arm(arm));
  CHECK(instruction_arms().front() == "off");
  CHECK_THROWS_WITH_AS(check_instruction_arm("nosuch"),
                       doctest::Contains("--callgrind-arm must be one of off, full"), InputError);

  const OverheadMonitorSetups setups(5);
  CHECK(setups.full.dispatcher_sample_every == 1);
  CHECK(setups.counted.dispatcher_sample_every == 5);
  CHECK(setups.counted.dispatcher_count_unsampled);
  CHECK(setups.counted.dispatcher_hook == probes::kDefaultDispatchHook);
  CHECK(setups.counted_record_function.dispatcher_hook == probes::DispatchHook::kRecordFunction);
  CHECK(setups.counted_record_function.dispatcher_count_unsampled);
  CHECK_FALSE(setups.sampled.dispatcher_count_unsampled);
}
