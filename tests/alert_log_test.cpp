// The Monitor's alert lines (probes/src/detail/alert_log.h): each rule and subject once, its
// repeats counted in one line at the end; and the subject a compile alert carries (core health.h).
#include "detail/alert_log.h"

#include <sstream>
#include <string>

#include "recompdiag/core/health.h"
#include "torch_doctest.h"

using namespace recompdiag;

namespace {

Alert alert(const std::string& rule, int64_t step, const std::string& subject) {
  return Alert{rule, step, 1, "evidence " + std::to_string(step), "advice", subject};
}

int lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("alert log: the first of each rule and subject whole, the repeats counted at the end") {
  std::ostringstream out;
  probes::detail::AlertLog log(out);
  log.write(alert("recompile_budget", 3, "forward (model.py:12): new_size"));
  log.write(alert("recompile_budget", 6, "forward (model.py:12): new_size"));
  log.write(alert("recompile_budget", 8, "forward (model.py:12): new_size"));
  log.write(alert("recompile_budget", 9, "step (train.py:40): python_number"));
  log.write(alert("host_syncs", 11, ""));
  log.write(alert("host_syncs", 75, ""));
  const std::string during = out.str();
  CHECK(lines(during) == 3);
  CHECK(during.find("recompdiag alert [recompile_budget] step 3: evidence 3. advice\n") == 0);
  CHECK(during.find("step 6") == std::string::npos);
  CHECK(during.find("recompdiag alert [recompile_budget] step 9:") != std::string::npos);
  log.finish();
  const std::string after = out.str().substr(during.size());
  CHECK(after ==
        "recompdiag alert [recompile_budget] repeated 2 more times (steps 6-8): forward "
        "(model.py:12): new_size; every alert is in the run file\n"
        "recompdiag alert [host_syncs] repeated 1 more time (step 75); every alert is in the run "
        "file\n");
  log.finish();  // once
  log.write(alert("host_syncs", 80, ""));
  CHECK(out.str().size() == during.size() + after.size());
}

TEST_CASE("a compile alert's subject: the frame and the cause of the compile noted last") {
  EventRecord e{EventKind::kCompile,
                5,
                1,
                "torch.compile recompiles forward",
                {{"compiler", "dynamo"},
                 {"function", "forward"},
                 {"file", "/venv/site-packages/pkg/model.py"},
                 {"line", 12},
                 {"guard_failures", {"0/1: L['w'] == 0.5"}}}};
  CHECK(compile_subject(e) == "forward (model.py:12): L['w']");
  e.detail["cause"] = "python_number";
  CHECK(compile_subject(e) == "forward (model.py:12): python_number");
  const EventRecord jit{EventKind::kCompile, 30, 2, "phase 2: loss weights", {}};
  CHECK(compile_subject(jit) == "phase 2: loss weights");
  CHECK(is_compile_rule("recompile_budget"));
  CHECK_FALSE(is_compile_rule("host_syncs"));

  HealthOptions o;
  o.warmup_steps = 0;
  HealthMonitor health(o);
  health.note_event(e);
  StepRecord s;
  s.step = 5;
  s.wall_ms = 10;
  s.jit = JitStats{};
  s.jit->compiles = 1;
  bool compile_alert = false;
  for (const Alert& a : health.evaluate(s)) {
    if (a.rule == "compile_after_warmup") {
      compile_alert = true;
      CHECK(a.subject == "forward (model.py:12): python_number");
    } else if (!is_compile_rule(a.rule)) {
      CHECK(a.subject.empty());
    }
  }
  CHECK(compile_alert);
}
