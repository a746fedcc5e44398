// The `recompdiag` executable as a user runs it: exit codes, messages, files left behind.

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "cli_util.h"
#include "recompdiag/core/compare.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/reports/words.h"
#include "test_util.h"

using namespace recompdiag;

namespace {

using Outcome = test::CliOutcome;
using test::run_cli;

const char* kSmall =
    " --epochs 2,1 --steps-per-epoch 3 --batch-size 4 --seq-len 6 --hidden 8 --quiet";

}  // namespace

TEST_CASE("train writes a complete run file and exits 0") {
  test::TempDir dir;
  Outcome o =
      run_cli(std::string("train --mode mutable") + kSmall + " --out " + dir.file("m.jsonl"));
  CHECK(o.exit_code == 0);
  RunFile f = read_run_file(dir.file("m.jsonl"));
  CHECK(f.steps.size() == 9);
  CHECK(f.header.mode == "mutable");
  CHECK(f.summary.has_value());
}

TEST_CASE("bad input: exit 2, one clear error line, no file left behind") {
  test::TempDir dir;
  const std::string out = dir.file("bad.jsonl");
  struct Case {
    std::string args;
    std::string message;
  };
  const Case cases[] = {
      {"--mode sometimes", "unknown mode 'sometimes' (expected recompile or mutable)"},
      {"--epochs 0,5", "--epochs: phase 1 has 0 epochs"},
      {"--epochs -3,5", "--epochs: phase 1 has -3 epochs"},
      {"--steps-per-epoch 0", "--steps-per-epoch must be positive, got 0"},
      {"--batch-size -1", "--batch-size must be positive, got -1"},
      {"--hidden 0", "--hidden must be positive, got 0"},
      {"--seq-len 0", "--seq-len must be positive, got 0"},
      {"--lr 0.01,0", "--lr: phase 2 lr must be > 0, got 0"},
      {"--lr -1,0.001", "--lr: phase 1 lr must be > 0, got -1"},
      {"--loss-weights 0.7,0.2,0.1:0.99,0.01", "phase 1 has 3 loss weights; the model has 2 heads"},
      {"--loss-weights 0.7,0.3", "--loss-weights gives 1 phase(s) but --epochs gives 2"},
      {"--optimizer-handoff copy", "unknown optimizer handoff 'copy'"},
      {"--device cuda", "--device cuda: CUDA is not available"},
      {"--device tpu", "--device: unknown device 'tpu'"},
      {"--device cuda:x", "--device: unknown device 'cuda:x'"},
      {"--device cuda:99999999999999", "--device: unknown device"},
      {"--seed -1", "--seed"},
      {"--seq-len 100000000", "this config needs ~"},
      {"--batch-size 200000 --seq-len 2000", "this config needs ~"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    Outcome o = run_cli("train " + c.args + " --quiet --out " + out);
    CHECK(o.exit_code == 2);
    CHECK(o.output.find("recompdiag: error: ") == 0);
    CHECK(o.output.find(c.message) != std::string::npos);
    CHECK(std::count(o.output.begin(), o.output.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(out));
  }
  Outcome o = run_cli(std::string("train") + kSmall + " --out " + dir.file("no/such/dir/x.jsonl"));
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("cannot write run file") != std::string::npos);
  o = run_cli("train --batch-size many --quiet");
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("recompdiag: error: ") == 0);
}

TEST_CASE("a run killed with SIGKILL mid-phase keeps every completed step") {
  test::TempDir dir;
  const std::string out = dir.file("killed.jsonl");
  const pid_t pid = test::start_cli({"train", "--epochs", "200,100", "--steps-per-epoch", "10",
                                     "--batch-size", "4", "--seq-len", "6", "--hidden", "8",
                                     "--quiet", "--threads", "1", "--out", out});
  // Wait until some steps are on disk, then kill without warning.
  int64_t seen = 0;
  for (int i = 0; i < 600 && seen < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::string text = test::read_text(out);
    seen = std::count(text.begin(), text.end(), '\n');
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  const int64_t step_lines = test::count_step_lines(out);
  RunFile f = read_run_file(out);
  CHECK(step_lines >= 30);
  CHECK(f.steps.size() == static_cast<size_t>(step_lines));
  CHECK_FALSE(f.summary.has_value());
  for (size_t i = 0; i < f.steps.size(); ++i) CHECK(f.steps[i].step == static_cast<int64_t>(i));
}

namespace {

// Starts `recompdiag ARGS... --out/--out-dir PATH` in a child, waits until `file` holds at least
// `steps` step lines, sends `sig`, and returns the exit status.
int signal_after_steps(std::vector<std::string> args, const std::string& file, int64_t steps,
                       int sig) {
  const pid_t pid = test::start_cli(std::move(args));
  test::wait_for_step_lines(file, steps);
  ::kill(pid, sig);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// The file reads, ends with a summary marked interrupted, and holds every step it counts.
void check_interrupted_file(const std::string& path, int64_t at_least) {
  CAPTURE(path);
  RunFile f = read_run_file(path);
  REQUIRE(f.summary.has_value());
  CHECK(f.summary->status == "interrupted");
  CHECK(static_cast<int64_t>(f.steps.size()) >= at_least);
  CHECK(f.summary->steps == static_cast<int64_t>(f.steps.size()));
  CHECK(f.skipped.empty());  // nothing truncated: the last step was completed and flushed
  for (size_t i = 0; i < f.steps.size(); ++i) CHECK(f.steps[i].step == static_cast<int64_t>(i));
}

const std::vector<std::string> kLongSmall = {
    "--epochs",  "200,100", "--steps-per-epoch", "10", "--batch-size", "4",
    "--seq-len", "6",       "--hidden",          "8",  "--quiet",      "--threads",
    "1"};

}  // namespace

TEST_CASE("SIGTERM and SIGINT stop train after its step, with a summary marked interrupted") {
  test::TempDir dir;
  for (int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    const std::string out = dir.file("stopped" + std::to_string(sig) + ".jsonl");
    std::vector<std::string> args{"train"};
    args.insert(args.end(), kLongSmall.begin(), kLongSmall.end());
    args.insert(args.end(), {"--out", out});
    const int status = signal_after_steps(args, out, 30, sig);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + sig);
    check_interrupted_file(out, 30);
  }
}

TEST_CASE("SIGTERM to ab reaches both runs, which stop with their summaries") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  std::vector<std::string> args{"ab"};
  args.insert(args.end(), kLongSmall.begin(), kLongSmall.end());
  args.insert(args.end(), {"--out-dir", out});
  const int status = signal_after_steps(args, out + "/mutable.jsonl", 20, SIGTERM);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
  check_interrupted_file(out + "/recompile.jsonl", 20);
  check_interrupted_file(out + "/mutable.jsonl", 20);
  CHECK_FALSE(std::filesystem::exists(out + "/report.md"));  // no verdict on half a run
}

TEST_CASE("a run file that hits the file-size limit stops training with one line, file intact") {
  test::TempDir dir;
  const std::string out = dir.file("limited.jsonl");
  const std::string err = dir.file("stderr.txt");
  constexpr rlim_t kLimit = 48 * 1024;  // the header and a few dozen steps
  const pid_t pid =
      test::start_cli({"train", "--epochs", "200,100", "--batch-size", "4", "--seq-len", "6",
                       "--hidden", "8", "--threads", "1", "--quiet", "--out", out},
                      err, kLimit);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));  // not killed by SIGXFSZ
  CHECK(WEXITSTATUS(status) == 1);
  std::string errors;  // stderr without the monitor's alert lines
  std::istringstream lines(test::read_text(err));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("recompdiag alert", 0) != 0) errors += line + "\n";
  }
  CHECK(errors.rfind("recompdiag: error: cannot write run file", 0) == 0);
  CHECK(errors.find("File too large") != std::string::npos);
  CHECK(std::count(errors.begin(), errors.end(), '\n') == 1);
  CHECK(std::filesystem::file_size(out) == kLimit);
  RunFile f = read_run_file(out);  // every complete line reads; the cut one is skipped
  CHECK(f.steps.size() >= 20);
  CHECK(f.skipped.size() <= 1);
  for (size_t i = 0; i < f.steps.size(); ++i) CHECK(f.steps[i].step == static_cast<int64_t>(i));
}

TEST_CASE("ab on a small config: both runs, the reports, and the switch attributed to the JIT") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  Outcome o =
      run_cli(std::string("ab --epochs 6,3 --steps-per-epoch 6 --batch-size 4 --seq-len 6 ") +
              "--hidden 8 --threads 1 --quiet --out-dir " + out);
  REQUIRE((o.exit_code == 0 || o.exit_code == 1));  // a verdict, whichever the noise allows
  CHECK(o.output.find("| Phase |") != std::string::npos);  // the Markdown summary is printed
  for (const char* f :
       {"recompile.jsonl", "mutable.jsonl", "report.md", "report.html", "report.json"}) {
    CAPTURE(f);
    CHECK(std::filesystem::file_size(out + "/" + f) > 0);
  }
  RunFile a = read_run_file(out + "/recompile.jsonl");
  RunFile b = read_run_file(out + "/mutable.jsonl");
  CHECK(a.header.mode == "recompile");
  CHECK(b.header.mode == "mutable");
  CHECK(a.header.seed == b.header.seed);
  CHECK(a.steps.size() == 54);
  CHECK(b.steps.size() == 54);

  Comparison c = compare_runs(a, b);
  REQUIRE(c.switches.size() == 1);
  const SwitchComparison& sw = c.switches[0];
  // The recompile run's switch cost includes the time its second compile took; the mutable run
  // compiles nothing at the switch. (Which run's slow steps cost more is timing, not asserted.)
  CHECK(sw.compile_s_a > 0);
  CHECK(sw.compile_s_b == 0);
  // What the story names at the switch: the recompile run's JIT compile, the mutable run's none.
  const auto jit = [](const SwitchCount& n) { return n.count == "jit_compiles" && n.n >= 1; };
  CHECK(std::any_of(sw.counted_a.begin(), sw.counted_a.end(), jit));
  CHECK(std::none_of(sw.counted_b.begin(), sw.counted_b.end(), jit));
  // The window around the switch: the recompile run shows the compile, the mutable run none.
  REQUIRE(c.a.switches.size() == 1);
  REQUIRE(c.b.switches.size() == 1);
  CHECK(c.a.switches[0].around.compile_events >= 1);
  CHECK(c.b.switches[0].around.compile_events == 0);
  // The recompile run is slow at the switch (the profiling run and new plans), and every slow
  // stretch that covers it names the compile and why.
  int covering = 0;
  for (const auto& stretch : c.a.slow_stretches) {
    if (stretch.first_step <= 36 && 36 <= stretch.last_step) {
      ++covering;
      CAPTURE(reports::stretch_sentence(stretch));
      CHECK(reports::stretch_sentence(stretch).find(
                "JIT compile (reason: phase 2: loss weights [0.7,0.3] -> [0.99,0.01]") !=
            std::string::npos);
    }
  }
  CHECK(covering >= 1);
}
