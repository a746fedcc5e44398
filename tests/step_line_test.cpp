// The reader's fast path for step lines against its simdjson path: every line reads the same way
// through both, and what the fast path does not know still reads (or fails) as before.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "recompdiag/core/record_fields.h"
#include "recompdiag/core/run_io.h"

using namespace recompdiag;

namespace {

std::string header_line() {
  RunHeader h;
  h.tool_version = "test";
  h.mode = "mutable";
  return to_json_line(h);
}

// The steps of a file holding `lines` after a header.
std::vector<StepRecord> read_steps(const std::vector<std::string>& lines) {
  std::string text = header_line() + "\n";
  for (const std::string& l : lines) text += l + "\n";
  return parse_run_file(text, "t.jsonl").steps;
}

// The same line with a space after its opening brace: valid JSON the fast path does not take.
std::string slow_variant(const std::string& line) { return "{ " + line.substr(1); }

StepRecord full_step() {
  StepRecord s;
  s.step = 123456789012;
  s.phase = 2;
  s.epoch = 7;
  s.step_in_phase = 99;
  s.wall_ms = 12.345678901234567;
  s.device_ms = 0.1;
  s.loss = 0.5;
  s.head_losses = {std::nan(""), 1e-300, 3.0};
  s.loss_weights = {0.99, 0.01};
  s.lr = 1e-3;
  for_each_section([&](const auto& section) {
    auto& target = s.*section.record;
    target.emplace();
    double v = 1.0;
    for (const auto& f : section) {
      std::visit(
          [&](auto member) {
            using T = std::decay_t<decltype((*target).*member)>;
            if constexpr (std::is_same_v<T, bool>) {
              (*target).*member = static_cast<int64_t>(v) % 2 == 0;
            } else if constexpr (std::is_same_v<T, double>) {
              (*target).*member = v * 0.3;
            } else {
              (*target).*member = static_cast<int64_t>(v) * 1000003;
            }
          },
          f.member);
      v += 1.0;
    }
  });
  s.alerts = {"slow_step", "host_sync"};
  return s;
}

}  // namespace

TEST_CASE("a step line reads the same through the fast path and simdjson's") {
  std::vector<StepRecord> cases = {full_step(), StepRecord{}};
  cases[1].wall_ms = 0.0;
  StepRecord sparse = full_step();
  sparse.device_ms.reset();
  sparse.cupti.reset();
  sparse.head_losses.clear();
  sparse.alerts.clear();
  cases.push_back(sparse);
  for (const StepRecord& s : cases) {
    const std::string line = to_json_line(s);
    REQUIRE(line.rfind("{\"type\":\"step\"", 0) == 0);
    const auto fast = read_steps({line});
    const auto slow = read_steps({slow_variant(line)});
    REQUIRE(fast.size() == 1);
    REQUIRE(slow.size() == 1);
    CHECK(to_json_line(fast[0]) == line);
    CHECK(to_json_line(slow[0]) == line);
    CHECK(fast[0].device_ms.has_value() == s.device_ms.has_value());
  }
  // simdjson reads the integer -0 as 0; so does the fast path. A float -0.0 keeps its sign.
  const auto zeros = read_steps({R"({"type":"step","wall_ms":1,"loss":-0,"lr":-0.0})",
                                 R"({ "type":"step","wall_ms":1,"loss":-0,"lr":-0.0})"});
  REQUIRE(zeros.size() == 2);
  for (const StepRecord& z : zeros) {
    CHECK(!std::signbit(z.loss));
    CHECK(std::signbit(z.lr));
  }
}

TEST_CASE("lines outside the fast path's shape still read as JSON says") {
  const auto steps = read_steps({
      // An integer written as a float, an unknown nested key, whitespace, an escaped alert.
      R"({"type":"step","step":3.0,"phase":2,"wall_ms":1,"extra":{"a":[1,2]},"alerts":["a\"b"]})",
      R"({"type":"step" , "step" : 4 , "wall_ms" : 2.5e0 , "dispatch" : { "ops" : 7 } })",
      // A 19-digit integer, a key with an escape, an unknown string field.
      R"({"type":"step","step":1234567890123456789,"wall\u005fms":3,"note":"x"})",
      // Duplicate keys: the last value wins, alerts accumulate.
      R"({"type":"step","step":6,"wall_ms":1,"wall_ms":4,"alerts":["a"],"alerts":["b"]})",
  });
  REQUIRE(steps.size() == 4);
  CHECK(steps[0].step == 3);
  CHECK(steps[0].phase == 2);
  CHECK(steps[0].alerts == std::vector<std::string>{"a\"b"});
  CHECK(steps[1].step == 4);
  CHECK(steps[1].wall_ms == 2.5);
  REQUIRE(steps[1].dispatch.has_value());
  CHECK(steps[1].dispatch->ops == 7);
  CHECK(steps[1].dispatch->sampled);  // absent fields keep their defaults
  CHECK(steps[2].step == 1234567890123456789);
  CHECK(steps[2].wall_ms == 3.0);
  CHECK(steps[3].wall_ms == 4.0);
  CHECK(steps[3].alerts == std::vector<std::string>{"a", "b"});
}

TEST_CASE("a step line that is not JSON fails on both paths with the same kind") {
  const std::vector<std::string> bad = {
      R"({"type":"step","step":01,"wall_ms":1})",     // a leading zero
      R"({"type":"step","step":1,"wall_ms":1e400})",  // out of range
      R"({"type":"step","step":1,"wall_ms":1}x)",     // trailing text
      R"({"type":"step","step":1,"wall_ms":+1})",     // a plus sign
      R"({"type":"step","step":1,"wall_ms":1.})",     // no digit after the point
      R"({"type":"step","step":1,"wall_ms":nul})",    // a broken literal
  };
  const std::string ok = R"({"type":"step","step":2,"wall_ms":1})";
  for (const std::string& line : bad) {
    CAPTURE(line);
    for (const std::string& variant : {line, slow_variant(line)}) {
      try {
        read_steps({variant, ok});
        FAIL("accepted a line that is not JSON");
      } catch (const RunFileError& e) {
        CHECK(e.kind() == RunFileError::Kind::kNotJson);
        CHECK(e.line() == 2);
      }
    }
  }
}

TEST_CASE("a step whose values have the wrong type is an invalid record on the fast path too") {
  const std::vector<std::string> bad = {
      R"({"type":"step","step":"1","wall_ms":1})",
      R"({"type":"step","step":1,"wall_ms":true})",
      R"({"type":"step","step":1,"wall_ms":1,"dispatch":{"sampled":1}})",
      R"({"type":"step","step":1,"wall_ms":1,"jit":null})",
      R"({"type":"step","step":1,"wall_ms":null})",
      R"({"type":"step","step":1,"wall_ms":-2})",
      R"({"type":"step","step":1})",
  };
  for (const std::string& line : bad) {
    CAPTURE(line);
    try {
      read_steps({line});
      FAIL("accepted an invalid step");
    } catch (const RunFileError& e) {
      CHECK(e.kind() == RunFileError::Kind::kInvalidRecord);
    }
  }
}
