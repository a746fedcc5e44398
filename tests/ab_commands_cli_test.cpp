// `recompdiag ab --a-cmd ... --b-cmd ...` end to end: two invocations of the built-in trainer take
// turns epoch by epoch and get the A/B report; a side that exits early, is killed, or holds its
// turn channel without ever taking a turn cannot hang the other; bad input is one line and 2.

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "recompdiag/core/compare.h"
#include "test_util.h"

namespace {

using namespace recompdiag;
using Clock = std::chrono::steady_clock;

/// A small config: 5 epochs of 4 steps per run, a few seconds with LibTorch's start-up.
const std::string kSmall =
    "--epochs 3,2 --steps-per-epoch 4 --batch-size 8 --seq-len 6 --hidden 8 --threads 1";

/// `text` as one shell word.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The built-in trainer as a side's command.
std::string train_cmd(const std::string& flags) {
  return std::string(RECOMPDIAG_BIN) + " train " + kSmall + " " + flags + " --out {out}";
}

/// `recompdiag ab` with two commands into `out` and `extra` flags, as a shell command line.
std::string ab_line(const std::string& a_cmd, const std::string& b_cmd, const std::string& out,
                    const std::string& extra = "") {
  return std::string(RECOMPDIAG_BIN) + " ab --a-cmd " + quoted(a_cmd) + " --b-cmd " +
         quoted(b_cmd) + " --out-dir " + quoted(out) + " " + extra;
}

/// Runs a shell command line, stdin from /dev/null; collects stdout and stderr together.
test::CliOutcome run_shell(const std::string& line) {
  return test::run_shell(line + " </dev/null");
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// The lines of `output` that begin with `prefix`.
std::vector<std::string> lines_starting(const std::string& output, const std::string& prefix) {
  std::vector<std::string> found;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) found.push_back(line);
  }
  return found;
}

/// 'a' per progress line of a recompile run (side A), 'b' per line of a mutable run (side B), in
/// the order they were printed.
std::string epoch_order(const std::string& output) {
  std::string order;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("recompile: phase ", 0) == 0) order += 'a';
    if (line.rfind("mutable: phase ", 0) == 0) order += 'b';
  }
  return order;
}

/// Runs `ab` under `script` when there is one, so that the trains' progress lines are printed.
test::CliOutcome run_on_terminal(const std::string& ab, bool have_script) {
  return run_shell(have_script ? "/usr/bin/script -qec " + quoted(ab) + " /dev/null" : ab);
}

bool has_summary(const std::string& path) {
  return test::read_text(path).find("\"type\":\"summary\"") != std::string::npos;
}

}  // namespace

TEST_CASE("ab --a-cmd/--b-cmd: by default two trains take turns step by step on one CPU") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  const std::string cpus_a = dir.file("cpus-a.txt");
  const std::string cpus_b = dir.file("cpus-b.txt");
  std::string monitor;  // who takes the turns: the Monitor's begin_step, or the trainer itself
  SUBCASE("through the Monitor") {}
  SUBCASE("--no-monitor: through the trainer") { monitor = " --no-monitor"; }
  // Each command first notes the CPUs it may run on: what `ab` pinned it to.
  auto cmd = [&](const std::string& mode, const std::string& cpus) {
    return "grep Cpus_allowed_list /proc/self/status > " + cpus + "; " +
           train_cmd("--mode " + mode + monitor);
  };
  const test::CliOutcome o =
      run_shell(ab_line(cmd("recompile", cpus_a), cmd("mutable", cpus_b), out, "--quiet"));
  CAPTURE(o.output);
  REQUIRE((o.exit_code == 0 || o.exit_code == 1));  // a verdict, whichever the noise allows
  for (const char* side : {"/a.jsonl", "/b.jsonl"}) {
    CHECK(test::read_text(out + side).find("\"turn_every_steps\":1") != std::string::npos);
  }
  const nlohmann::json report = nlohmann::json::parse(test::read_text(out + "/report.json"));
  for (const auto& phase : report["phases"]) {
    CHECK(phase["test"]["unit"] == "step_pairs");
    CHECK(phase["test"]["step_pairs"].get<int64_t>() >= 3);
  }
  // One CPU, the same for both sides.
  const std::string a = test::read_text(cpus_a);
  CHECK(a == test::read_text(cpus_b));
  CHECK(a.find_first_of(",-") == std::string::npos);
}

TEST_CASE(
    "ab --a-cmd/--b-cmd: with --turn-every 0 two trains take turns epoch by epoch, then the paired "
    "report") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  // Progress lines are printed on a terminal only: under `script` both trains print theirs to
  // one terminal, each flushed before the turn passes, so their order is the order of the epochs.
  const bool have_script = ::access("/usr/bin/script", X_OK) == 0;
  std::string monitor;  // the train flag that decides who takes the turns
  SUBCASE("through the Monitor") {}
  SUBCASE("--no-monitor: through the trainer") { monitor = " --no-monitor"; }
  const std::string ab =
      ab_line(train_cmd("--mode recompile" + monitor), train_cmd("--mode mutable" + monitor), out,
              "--a-name base --b-name new --quiet --turn-every 0 --first-turn a");
  const test::CliOutcome o = run_on_terminal(ab, have_script);
  CAPTURE(o.output);
  REQUIRE((o.exit_code == 0 || o.exit_code == 1));  // a verdict, whichever the noise allows
  CHECK(test::count_step_lines(out + "/base.jsonl") == 20);
  CHECK(test::count_step_lines(out + "/new.jsonl") == 20);
  CHECK(has_summary(out + "/base.jsonl"));
  CHECK(has_summary(out + "/new.jsonl"));
  for (const char* report : {"/report.md", "/report.html", "/report.json"}) {
    CHECK(std::filesystem::exists(out + report));
  }
  if (!have_script) {
    MESSAGE("no /usr/bin/script: the order of the epochs is not checked");
    return;
  }
  CHECK(epoch_order(o.output) == "ababababab");  // --first-turn a
}

TEST_CASE("ab --a-cmd/--b-cmd: a data-parallel side takes its turns through rank 0") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  const bool have_script = ::access("/usr/bin/script", X_OK) == 0;
  const test::CliOutcome o = run_on_terminal(
      ab_line(train_cmd("--mode recompile --world-size 2"), train_cmd("--mode mutable"), out,
              "--quiet --turn-timeout 60 --turn-every 0 --first-turn a"),
      have_script);
  CAPTURE(o.output);
  REQUIRE((o.exit_code == 0 || o.exit_code == 1));  // a verdict, whichever the noise allows
  CHECK(lines_starting(o.output, "recompdiag: warning").empty());  // no turn timed out
  CHECK(test::count_step_lines(out + "/a.rank0.jsonl") == 20);
  CHECK(test::count_step_lines(out + "/a.rank1.jsonl") == 20);
  CHECK(test::count_step_lines(out + "/b.jsonl") == 20);
  CHECK(std::filesystem::exists(out + "/report.json"));
  if (have_script) CHECK(epoch_order(o.output) == "ababababab");  // --first-turn a; rank 0 prints
}

TEST_CASE("ab --a-cmd/--b-cmd: a data-parallel side with turns step by step is warned about") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  // The job's rank 0 takes its turns at epoch boundaries, the single run step by step.
  const test::CliOutcome o =
      run_shell(ab_line(train_cmd("--mode recompile --world-size 2"), train_cmd("--mode mutable"),
                        out, "--quiet --turn-timeout 60"));
  CAPTURE(o.output);
  REQUIRE((o.exit_code == 0 || o.exit_code == 1));  // a verdict, whichever the noise allows
  CHECK(o.output.find("took their turns at different grains (A at epoch boundaries, B at every "
                      "1 step)") != std::string::npos);
}

TEST_CASE("ab --a-cmd/--b-cmd: a side that ends early lets the other finish; one line each") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  SUBCASE("exits 0 without a run file: bad input") {
    const Clock::time_point start = Clock::now();
    const test::CliOutcome o = run_shell(ab_line(train_cmd("--quiet"), "true {out}", out));
    CAPTURE(o.output);
    CHECK(seconds_since(start) < 60.0);
    CHECK(o.exit_code == 2);
    const std::vector<std::string> lines = lines_starting(o.output, "recompdiag: ");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("recompdiag: error: b run exited 0 but wrote no run file") == 0);
  }
  SUBCASE("killed: the run failed, no verdict") {
    const test::CliOutcome o =
        run_shell(ab_line(train_cmd("--quiet"), "kill -KILL $$ # {out}", out));
    CAPTURE(o.output);
    CHECK(o.exit_code == 4);
    const std::vector<std::string> lines = lines_starting(o.output, "recompdiag: ");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0] == "recompdiag: error: b run was killed by signal 9 (Killed)");
  }
  CHECK(has_summary(out + "/a.jsonl"));  // side A trained to its end
  CHECK(test::count_step_lines(out + "/a.jsonl") == 20);
  CHECK_FALSE(std::filesystem::exists(out + "/report.md"));
}

TEST_CASE("ab --a-cmd/--b-cmd: a side that never yields is waited for once, then stopped") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  const Clock::time_point start = Clock::now();
  // `sleep` holds its turn channel and never reads or writes it.
  const test::CliOutcome o =
      run_shell(ab_line(train_cmd("--quiet"), "sleep 30 # {out}", out, "--turn-timeout 1.5"));
  CAPTURE(o.output);
  CHECK(seconds_since(start) < 25.0);  // not the 30 s of sleep
  CHECK(o.exit_code == 4);
  const std::string a = test::read_text(out + "/a.jsonl");
  CHECK(has_summary(out + "/a.jsonl"));
  CHECK(test::count_step_lines(out + "/a.jsonl") == 20);
  CHECK(a.find("\"turns\":\"timed_out\"") != std::string::npos);  // the run file says so
  const std::vector<std::string> warnings = lines_starting(o.output, "recompdiag: warning: ");
  REQUIRE(warnings.size() == 1);  // side A gave up once
  CHECK(warnings[0].find("no turn from the other run within 1.5 s") != std::string::npos);
  const std::vector<std::string> errors = lines_starting(o.output, "recompdiag: error: ");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("b run left its turn unread for 1.5 s after the other run ended") !=
        std::string::npos);
}

TEST_CASE("ab --a-cmd/--b-cmd: SIGINT reaches both commands; each run ends interrupted") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  // Long enough (minutes) that the signal decides when the runs end.
  const std::string a_long = std::string(RECOMPDIAG_BIN) +
                             " train --epochs 200,100 --steps-per-epoch 10 --batch-size 4 "
                             "--seq-len 6 --hidden 8 --threads 1 --quiet --out {out}";
  const pid_t ab =
      test::start_cli({"ab", "--a-cmd", a_long, "--b-cmd", a_long, "--out-dir", out, "--quiet"},
                      dir.file("stderr.txt"));
  // Both have trained an epoch: B's first turn came after A's first epoch.
  REQUIRE(test::wait_for_step_lines(out + "/b.jsonl", 10) >= 10);
  ::kill(ab, SIGINT);
  int status = 0;
  REQUIRE(::waitpid(ab, &status, 0) == ab);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  for (const char* run : {"/a.jsonl", "/b.jsonl"}) {
    CAPTURE(run);
    CHECK(test::read_text(out + run).find("\"status\":\"interrupted\"") != std::string::npos);
  }
  CHECK(lines_starting(test::read_text(dir.file("stderr.txt")), "recompdiag: error").empty());
}

TEST_CASE("ab --a-cmd/--b-cmd: repeats and a command that cannot start") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  const std::string fixtures = RECOMPDIAG_FIXTURES_DIR;
  const std::string copy_base = "cp " + fixtures + "/compare_baseline.jsonl {out}";
  const std::string copy_slower = "cp " + fixtures + "/compare_slower.jsonl {out}";
  SUBCASE("repeats: NAME-i files and one report; the slower side fails the gate") {
    const test::CliOutcome o = run_shell(ab_line(copy_base, copy_slower, out, "--repeats 2"));
    CAPTURE(o.output);
    CHECK(o.exit_code == 1);  // phase 2 of the slower fixture: 31% slower
    for (const char* f : {"/a-1.jsonl", "/a-2.jsonl", "/b-1.jsonl", "/b-2.jsonl", "/report.json"}) {
      CHECK(std::filesystem::exists(out + f));
    }
    // The runs of a pair took turns: compared as pairs.
    CHECK(test::read_text(out + "/report.json").find("\"paired\": true") != std::string::npos);
  }
  SUBCASE("not found: bad input") {
    const test::CliOutcome o = run_shell(ab_line("no-such-trainer-xyz {out}", copy_base, out));
    CAPTURE(o.output);
    CHECK(o.exit_code == 2);
    const std::vector<std::string> lines = lines_starting(o.output, "recompdiag: ");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("recompdiag: error: a run: the command cannot be started (not found)") ==
          0);
  }
}

TEST_CASE("ab --a-cmd/--b-cmd: each pair's first turn is drawn or asked, and recorded") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  const std::string fixtures = RECOMPDIAG_FIXTURES_DIR;
  const std::string copy = "cp " + fixtures + "/compare_baseline.jsonl {out}";
  const auto firsts = [&](const std::string& flags) {
    const test::CliOutcome o = run_shell(ab_line(copy, copy, out, "--repeats 4 " + flags));
    CAPTURE(o.output);
    CHECK(o.exit_code == 0);
    const nlohmann::json pairs = nlohmann::json::parse(test::read_text(out + "/pairs.json"));
    std::string first;
    for (const auto& p : pairs["pairs"]) {
      first += p["first"].get<std::string>();
      CHECK(p["started_together"] == true);  // both ended at once: nothing to wait for
    }
    return first;
  };
  CHECK(firsts("--first-turn a") == "aaaa");
  CHECK(firsts("--first-turn b") == "bbbb");
  CHECK(firsts("--first-turn alternate") == "abab");
  const std::string drawn = firsts("");
  CHECK(drawn.size() == 4);
  CHECK(drawn.find_first_not_of("ab") == std::string::npos);
}

TEST_CASE("ab --until-decided: pairs until a verdict, each look at its spent level") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  const std::string fixtures = RECOMPDIAG_FIXTURES_DIR;
  const auto copy = [&](const char* name) { return "cp " + fixtures + "/" + name + " {out}"; };
  // The slower fixture: one pair (a first look at its tiny level) does not settle it, the second
  // does; nothing after it runs.
  const test::CliOutcome o =
      run_shell(ab_line(copy("compare_baseline.jsonl"), copy("compare_slower.jsonl"), out,
                        "--until-decided --max-pairs 4"));
  CAPTURE(o.output);
  CHECK(o.exit_code == 1);
  CHECK(o.output.find("until decided: settled after 2 of at most 4 pairs; this look's level "
                      "0.00549 of alpha 0.05") != std::string::npos);
  CHECK(std::filesystem::exists(out + "/b-2.jsonl"));
  CHECK_FALSE(std::filesystem::exists(out + "/b-3.jsonl"));
  const nlohmann::json report = nlohmann::json::parse(test::read_text(out + "/report.json"));
  CHECK(report["options"]["alpha"].get<double>() == doctest::Approx(0.00549).epsilon(0.01));
}

TEST_CASE("ab --a-cmd/--b-cmd: bad input is one line and exit 2, before anything runs") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  struct Case {
    std::string args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"--a-cmd 'true' --b-cmd 'true {out}'", "the a side's command lacks {out}"},
      {"--a-cmd 'true {out}'", "needs both --a-cmd and --b-cmd"},
      {"--a-cmd 'true {out}' --b-cmd 'true {out}' --epochs 3,2",
       "--epochs is not a flag of ab with two commands (a built-in run's flag configures"},
      {"--a-cmd 'true {out}' --b-cmd 'true {out}' --a-name x --b-name x", "both named 'x'"},
      {"--a-cmd 'true {out}' --b-cmd 'true {out}' --turn-timeout 0", "--turn-timeout must be > 0"},
      {"--a-name x", "--a-name applies to --a-cmd/--b-cmd runs"},
      {"--a-cmd 'true {out}' --b-cmd 'true {out}' --first-turn c",
       "--first-turn must be random, a, b or alternate, got 'c'"},
      {"--a-cmd 'true {out}' --b-cmd 'true {out}' --start-wait -1", "--start-wait must be >= 0 s"},
      {"--a-cmd 'true {out}' --b-cmd 'true {out}' --until-decided --repeats 2",
       "give --repeats or --until-decided, not both"},
      {"--a-cmd 'true {out}' --b-cmd 'true {out}' --max-pairs 3",
       "--max-pairs applies to --until-decided"},
      {"--a-cmd 'true {out}' --b-cmd 'true {out}' --until-decided --max-pairs 1",
       "--max-pairs must be in [2, 100], got 1"},
      {"--until-decided", "--until-decided applies to --a-cmd/--b-cmd runs"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const test::CliOutcome o = test::run_cli("ab " + c.args + " --out-dir " + quoted(out));
    CAPTURE(o.output);
    CHECK(o.exit_code == 2);
    const std::vector<std::string> lines = lines_starting(o.output, "recompdiag: error: ");
    CHECK(lines.size() == 1);
    CHECK(o.output.find(c.says) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("ab --a-cmd/--b-cmd: no descriptors left for the turns is one line and exit 4") {
  test::TempDir dir;
  // Three standard streams and eight pipe ends do not fit in eight descriptors. The braces let the
  // shell redirect the streams before the limit.
  const test::CliOutcome o =
      run_shell("{ ulimit -n 8; " + ab_line("true {out}", "true {out}", dir.file("ab")) + "; }");
  CAPTURE(o.output);
  CHECK(o.exit_code == 4);
  const std::vector<std::string> lines = lines_starting(o.output, "recompdiag: ");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "recompdiag: error: cannot create a pipe for the turns: Too many open files");
}

TEST_CASE("ab is the gate: a --fail-on count that grew exits 1, one that did not exits 0") {
  test::TempDir dir;
  // B recompiles its step at the phase switch; A keeps it (mutable): one more JIT compile in B.
  const std::string keeps = train_cmd("--quiet --mode mutable");
  const std::string recompiles = train_cmd("--quiet --mode recompile");
  SUBCASE("grew: exit 1, and the report says which count failed the gate") {
    const test::CliOutcome o =
        run_shell(ab_line(keeps, recompiles, dir.file("grew"), "--quiet --fail-on compiles"));
    CAPTURE(o.output);
    CHECK(o.exit_code == 1);
    const nlohmann::json report =
        nlohmann::json::parse(test::read_text(dir.file("grew") + "/report.json"));
    CHECK(report["verdict"] == "regression");
    bool failed = false;
    for (const auto& change : report["count_changes"]) {
      if (change["fails"] == true) {
        failed = true;
        CHECK(change["count"] == "jit_compiles");  // the part that grew, listed
        CHECK(change["failed_by"] == "compiles");  // the name the gate was given
      }
    }
    CHECK(failed);
  }
  SUBCASE("the same command on both sides: nothing grew, no regression beyond 99%: exit 0") {
    const test::CliOutcome o = run_shell(
        ab_line(keeps, keeps, dir.file("same"), "--quiet --fail-on compiles --threshold 99"));
    CAPTURE(o.output);
    CHECK(o.exit_code == 0);
    CHECK(std::filesystem::exists(dir.file("same") + "/report.json"));
  }
  SUBCASE("an unknown count: one line, exit 2, before anything runs") {
    const test::CliOutcome o =
        run_shell(ab_line(keeps, recompiles, dir.file("bad"), "--fail-on compiles,sinks"));
    CAPTURE(o.output);
    CHECK(o.exit_code == 2);
    const std::vector<std::string> lines = lines_starting(o.output, "recompdiag: ");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("--fail-on: unknown count 'sinks'") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("bad")));
  }
}

TEST_CASE("every gate count is listed in the --help of compare and ab, with its line") {
  for (const char* command : {"compare", "ab"}) {
    CAPTURE(command);
    const test::CliOutcome o = test::run_cli(std::string(command) + " --help");
    REQUIRE(o.exit_code == 0);
    for (const recompdiag::GateCount& count : recompdiag::gate_counts()) {
      CAPTURE(count.name);
      CHECK(o.output.find(count.name + ": " + count.help) != std::string::npos);
    }
  }
}
