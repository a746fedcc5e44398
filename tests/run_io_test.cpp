#include "recompdiag/core/run_io.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <type_traits>
#include <variant>

#include "recompdiag/core/error.h"
#include "recompdiag/core/record_fields.h"
#include "test_util.h"

using namespace recompdiag;

namespace {

StepRecord sample_step(int64_t i) {
  StepRecord s;
  s.step = i;
  s.phase = i < 3 ? 1 : 2;
  s.epoch = static_cast<int>(i / 2);
  s.step_in_phase = i % 3;
  s.wall_ms = 1.5 + static_cast<double>(i);
  s.loss = 0.25 * static_cast<double>(i + 1);
  s.head_losses = {0.1, 0.2};
  s.loss_weights = {0.7, 0.3};
  s.lr = 0.01;
  return s;
}

RunHeader sample_header() {
  RunHeader h;
  h.tool_version = "test";
  h.mode = "mutable";
  h.optimizer_handoff = "none";
  h.optimizer = "Adam";
  h.device_requested = "auto";
  h.device_used = "cpu";
  h.config = {{"epochs", {2, 1}}};
  h.seed = 7;
  return h;
}

}  // namespace

TEST_CASE("a step round-trips through its JSON line, probe sections included") {
  StepRecord s = sample_step(4);
  s.device_ms = 0.75;
  s.dispatch = DispatchStats{};
  s.dispatch->ops = 42;
  s.dispatch->bytes_h2d = int64_t{1} << 40;
  s.dispatch->sampled = false;
  s.jit = JitStats{2, 1, 1};
  s.optimizer = OptimizerStats{};
  s.optimizer->state_reset = true;
  s.optimizer->lr_effective = 0.001;
  s.cupti = CuptiStats{};
  s.cupti->kernel_ms = 0.125;
  s.alerts = {"compile_after_warmup", "odd \"name\""};

  std::string text = to_json_line(sample_header()) + "\n" + to_json_line(s) + "\n";
  RunFile f = parse_run_file(text, "mem");
  REQUIRE(f.steps.size() == 1);
  const StepRecord& r = f.steps[0];
  CHECK(r.step == 4);
  CHECK(r.phase == 2);
  CHECK(r.wall_ms == doctest::Approx(5.5));
  REQUIRE(r.device_ms);
  CHECK(*r.device_ms == 0.75);
  CHECK(r.head_losses == std::vector<double>{0.1, 0.2});
  REQUIRE(r.dispatch);
  CHECK(r.dispatch->ops == 42);
  CHECK(r.dispatch->bytes_h2d == (int64_t{1} << 40));
  CHECK_FALSE(r.dispatch->sampled);
  REQUIRE(r.jit);
  CHECK(r.jit->compiles == 2);
  CHECK(r.jit->plan_builds == 1);
  REQUIRE(r.optimizer);
  CHECK(r.optimizer->state_reset);
  CHECK(r.optimizer->lr_effective == 0.001);
  CHECK_FALSE(r.placement);
  REQUIRE(r.cupti);
  CHECK(r.cupti->kernel_ms == 0.125);
  CHECK(r.alerts == s.alerts);
  CHECK(f.header.seed == 7);
  CHECK(f.header.config["epochs"][0] == 2);
}

TEST_CASE("every field of every section table round-trips with its own value") {
  // Each field gets a distinct value through the tables, so a field the writer or the reader
  // skipped, or two fields sharing a name, would come back wrong.
  StepRecord s = sample_step(1);
  int64_t next = 1;
  for_each_section([&](const auto& section) {
    auto& present = s.*section.record;
    present.emplace();
    for (const auto& f : section) {
      std::visit(
          [&](auto member) {
            using T = std::decay_t<decltype((*present).*member)>;
            if constexpr (std::is_same_v<T, bool>) {
              (*present).*member = next % 2 == 1;
            } else {
              (*present).*member = static_cast<T>(next) + static_cast<T>(next % 2) / 4;
            }
          },
          f.member);
      ++next;
    }
  });
  s.dispatch->sampled = true;
  RunFile f = parse_run_file(to_json_line(sample_header()) + "\n" + to_json_line(s) + "\n", "m");
  REQUIRE(f.steps.size() == 1);
  int64_t fields = 0;
  for_each_section([&](const auto& section) {
    const auto& want = s.*section.record;
    const auto& got = f.steps[0].*section.record;
    REQUIRE(got.has_value());
    for (const auto& field : section) {
      CAPTURE(section.name);
      CAPTURE(field.name);
      CHECK(field_value(*got, field) == field_value(*want, field));
      ++fields;
    }
  });
  CHECK(fields == static_cast<int64_t>(total_field_count()));
}

TEST_CASE("the writer produces a file the reader loads whole") {
  test::TempDir dir;
  std::string path = dir.file("writer.jsonl");
  {
    RunWriter w(path);
    w.write(sample_header());
    w.write(EventRecord{EventKind::kCompile, 0, 1, "initial", {{"loss_weights", {0.7, 0.3}}}});
    for (int i = 0; i < 5; ++i) w.write(sample_step(i));
    RunSummary sum;
    sum.steps = 5;
    sum.final_head_losses = {0.1, NAN};
    w.write(sum);
    CHECK(w.lines() == 8);
  }
  RunFile f = read_run_file(path);
  CHECK(f.header.mode == "mutable");
  CHECK(f.header.optimizer == "Adam");
  CHECK(f.steps.size() == 5);
  REQUIRE(f.events.size() == 1);
  CHECK(f.events[0].kind == EventKind::kCompile);
  CHECK(f.events[0].reason == "initial");
  REQUIRE(f.summary);
  CHECK(f.summary->steps == 5);
  CHECK(std::isnan(f.summary->final_head_losses[1]));
  CHECK(f.skipped.empty());
}

TEST_CASE("blank lines, unknown fields and a truncated last line are tolerated and reported") {
  std::string text = to_json_line(sample_header()) + "\n\n" +
                     R"({"type":"step","step":0,"wall_ms":1,"future_field":{"x":[1,2]},"loss":0.5})"
                     "\n" +
                     to_json_line(sample_step(1)) + "\n" + R"({"type":"step","step":2,"wa)";
  RunFile f = parse_run_file(text, "mem.jsonl");
  CHECK(f.steps.size() == 2);
  CHECK(f.steps[0].loss == 0.5);
  REQUIRE(f.skipped.size() == 2);
  CHECK(f.skipped[0].line == 2);
  CHECK(f.skipped[0].why == "blank line");
  CHECK(f.skipped[1].line == 5);
  CHECK(f.skipped[1].why.find("truncated last line") == 0);
  CHECK_FALSE(f.summary);
}

TEST_CASE("bad files are rejected with the file, the line and the kind of fault") {
  // The error a parse throws, as the fields a caller tests; `thrown` is false when the text parses.
  struct Fault {
    bool thrown = false;
    RunFileError::Kind kind = RunFileError::Kind::kCannotRead;
    std::string path;
    int64_t line = -1;
    std::string what;
  };
  auto fault_of = [](const std::string& text) {
    Fault f;
    try {
      parse_run_file(text, "bad.jsonl");
    } catch (const RunFileError& e) {
      f = {true, e.kind(), e.path(), e.line(), e.what()};
    }
    return f;
  };
  using Kind = RunFileError::Kind;
  Fault f = fault_of("");
  CHECK(f.thrown);
  CHECK(f.kind == Kind::kEmpty);
  CHECK(f.path == "bad.jsonl");
  CHECK(f.line == 0);
  CHECK(f.what == "bad.jsonl: empty file, not a recompdiag run file");
  CHECK(fault_of("\n\n").kind == Kind::kEmpty);

  f = fault_of("{\"a\":1}\n");
  CHECK(f.kind == Kind::kNotARunFile);
  CHECK(f.line == 1);
  CHECK(f.what.find("bad.jsonl:1: ") == 0);
  f = fault_of("hello world\n");
  CHECK(f.kind == Kind::kNotARunFile);
  CHECK(f.line == 1);
  CHECK(fault_of(R"({"type":"step","step":0,"wall_ms":1})").kind == Kind::kNotARunFile);
  f = fault_of(R"({"type":"run","schema":99})");
  CHECK(f.kind == Kind::kUnknownSchema);
  CHECK(f.line == 1);
  CHECK(f.what.find("unknown schema version 99") != std::string::npos);

  std::string header = to_json_line(sample_header()) + "\n";
  std::string broken_middle = header + "{\"type\":\"st\n" + to_json_line(sample_step(1)) + "\n";
  f = fault_of(broken_middle);
  CHECK(f.kind == Kind::kNotJson);
  CHECK(f.line == 2);
  CHECK(f.what.find("bad.jsonl:2: not valid JSON") == 0);
  // The same broken line as the last one is a killed run's: tolerated, not thrown.
  CHECK_FALSE(fault_of(header + "{\"type\":\"st").thrown);

  f = fault_of(header + R"({"type":"step","step":3,"wall_ms":-1})");
  CHECK(f.kind == Kind::kInvalidRecord);
  CHECK(f.line == 2);
  CHECK(f.what == "bad.jsonl:2: step 3 has a negative wall time");
  f = fault_of(header + R"({"type":"step","step":3,"wall_ms":null})");
  CHECK(f.kind == Kind::kInvalidRecord);
  CHECK(f.what.find("NaN") != std::string::npos);
  f = fault_of(header + "\n" + to_json_line(sample_header()));
  CHECK(f.kind == Kind::kInvalidRecord);
  CHECK(f.line == 3);  // blank lines count
  CHECK(f.what.find("a second run header") != std::string::npos);
  f = fault_of(header + R"({"no_type":1})" + "\n" + to_json_line(sample_step(1)));
  CHECK(f.kind == Kind::kInvalidRecord);
  CHECK(f.line == 2);
}

TEST_CASE("an integer field takes an integral number that fits, and refuses one that does not") {
  const std::string header = to_json_line(sample_header()) + "\n";
  const std::string step = to_json_line(sample_step(1)) + "\n";
  auto refusal = [](const std::string& text) {
    try {
      parse_run_file(text, "ints.jsonl");
    } catch (const RunFileError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // 1e3 is an integer written as a float; 1e19 is past int64, and casting it is undefined.
  const RunFile run = parse_run_file(header + R"({"type":"step","step":1e3,"wall_ms":1})", "x");
  CHECK(run.steps.at(0).step == 1000);
  CHECK(refusal(header + R"({"type":"step","step":1e19,"wall_ms":1})" + "\n" + step) ==
        "ints.jsonl:2: 'step' is out of range");
  const std::string event = R"({"type":"event","event":"compile","step":)";
  CHECK(parse_run_file(header + event + "4.0}\n" + step, "x").events.at(0).step == 4);
  CHECK(refusal(header + event + "1e19}\n" + step) ==
        "ints.jsonl:2: 'step' is out of range");
  CHECK(refusal(header + R"({"type":"event","event":"compile","phase":4294967297})" + "\n" +
                step) == "ints.jsonl:2: 'phase' is out of range");
  CHECK(refusal(header + R"({"type":"summary","steps":-1e300})" + "\n") ==
        "ints.jsonl:2: 'steps' is out of range");
  nlohmann::json negative_seed = nlohmann::json::parse(to_json_line(sample_header()));
  negative_seed["seed"] = -1;
  CHECK(refusal(negative_seed.dump() + "\n" + step) ==
        "ints.jsonl:1: 'seed' is out of range");
  CHECK(refusal(header + R"({"type":"step","step":2.5,"wall_ms":1})" + "\n" + step) ==
        "ints.jsonl:2: 'step' is not an integer");
  // A step's phase and epoch are ints: the fast path hands 2^32 + 1 to the slow one, which says so.
  CHECK(refusal(header + R"({"type":"step","step":1,"phase":4294967297,"wall_ms":1})" + "\n" +
                step) == "ints.jsonl:2: 'phase' is out of range");
  CHECK(refusal(header + R"({"type":"step","step":1,"epoch":-2147483649,"wall_ms":1})" + "\n" +
                step) == "ints.jsonl:2: 'epoch' is out of range");
  CHECK(refusal(header + R"({"type":"summary","alerts":"3"})" + "\n") ==
        "ints.jsonl:2: 'alerts' is not an integer");
}

TEST_CASE("a run-file error is an InputError, so every command exits 2 on it") {
  CHECK_THROWS_AS(parse_run_file("", "x.jsonl"), InputError);
  CHECK_THROWS_AS(read_run_file("/nonexistent/dir/run.jsonl"), RunFileError);
  try {
    read_run_file("/nonexistent/dir/run.jsonl");
  } catch (const RunFileError& e) {
    CHECK(e.kind() == RunFileError::Kind::kCannotRead);
    CHECK(e.path() == "/nonexistent/dir/run.jsonl");
    CHECK(e.line() == 0);
    CHECK(e.reason().find("cannot open run file: ") == 0);
  }
}

TEST_CASE("a missing file and an unwritable path are input errors") {
  CHECK_THROWS_AS(read_run_file("/nonexistent/dir/run.jsonl"), InputError);
  CHECK_THROWS_AS(RunWriter("/nonexistent/dir/run.jsonl"), InputError);
}

TEST_CASE("the streaming reader handles lines across its chunk boundary") {
  test::TempDir dir;
  std::string path = dir.file("big.jsonl");
  const int n = 60000;  // ~12 MB: crosses the reader's 8 MiB chunk
  {
    RunWriter w(path);
    w.write(sample_header());
    for (int i = 0; i < n; ++i) {
      StepRecord s = sample_step(i);
      s.dispatch = DispatchStats{};
      s.dispatch->ops = i;
      w.write(s);
    }
  }
  RunFile f = read_run_file(path);
  REQUIRE(f.steps.size() == static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (f.steps[i].step != i || f.steps[i].dispatch->ops != i) {
      FAIL("step " << i << " read back wrong");
    }
  }
}
