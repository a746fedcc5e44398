// `recompdiag ab` exits as `train` would when one of its children fails (README's table): a crash
// is an internal error (3), a run file that cannot be written is 1. Bad input (2) and signals
// (130/143) are in cli_test.cpp.

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "test_util.h"

namespace {

using namespace recompdiag;

// A config long enough (minutes) that the test decides when the runs end.
const std::vector<std::string> kLongSmall = {
    "ab",        "--epochs",  "200,100", "--steps-per-epoch", "10", "--batch-size",
    "4",         "--seq-len", "6",       "--hidden",          "8",  "--quiet",
    "--threads", "1"};

int wait_exit_code(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

// The lines of `path` that begin with "recompdiag: ".
std::vector<std::string> tool_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(test::read_text(path));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("recompdiag: ", 0) == 0) lines.push_back(line);
  }
  return lines;
}

}  // namespace

TEST_CASE("ab exits 4 when its runs crash (no verdict), naming the signal") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  const std::string err = dir.file("stderr.txt");
  std::vector<std::string> args = kLongSmall;
  args.insert(args.end(), {"--out-dir", out});
  const pid_t ab = test::start_cli(args, err);
  test::wait_for_step_lines(out + "/mutable.jsonl", 10);
  const std::vector<pid_t> runs = test::children_of(ab);
  REQUIRE(runs.size() == 2);
  for (const pid_t run : runs) ::kill(run, SIGSEGV);  // as a bug in a run would
  CHECK(wait_exit_code(ab) == 4);
  const std::vector<std::string> lines = tool_lines(err);
  CHECK(lines.size() == 2);  // one per run
  for (const std::string& line : lines) {
    CAPTURE(line);
    CHECK(line.rfind("recompdiag: internal error: ", 0) == 0);
    CHECK(line.find("killed by signal") != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(out + "/report.md"));  // no verdict on crashed runs
}

// The process of `pids` that has `file` open (-1: none).
pid_t writer_of(const std::vector<pid_t>& pids, const std::string& file) {
  for (const pid_t pid : pids) {
    std::error_code ec;
    for (const auto& fd :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
      if (std::filesystem::read_symlink(fd.path(), ec) == std::filesystem::path(file)) return pid;
    }
  }
  return -1;
}

TEST_CASE("ab exits 4 when B crashes, though A failed first") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  std::vector<std::string> args = kLongSmall;
  args.insert(args.end(), {"--out-dir", out});
  const pid_t ab = test::start_cli(args, dir.file("stderr.txt"));
  test::wait_for_step_lines(out + "/recompile.jsonl", 10);
  test::wait_for_step_lines(out + "/mutable.jsonl", 10);
  const std::vector<pid_t> runs = test::children_of(ab);
  const pid_t a = writer_of(runs, std::filesystem::canonical(out + "/recompile.jsonl").string());
  const pid_t b = writer_of(runs, std::filesystem::canonical(out + "/mutable.jsonl").string());
  REQUIRE(a > 0);
  REQUIRE(b > 0);
  // A fails (exit 1, as an out-of-memory kill would) and B crashes: whichever ab sees first, the
  // pair is remembered by the crash.
  ::kill(a, SIGKILL);
  ::kill(b, SIGSEGV);
  CHECK(wait_exit_code(ab) == 4);
}

TEST_CASE("ab exits 4 when its run files cannot be written, each run saying so once") {
  test::TempDir dir;
  const std::string out = dir.file("ab");
  const std::string err = dir.file("stderr.txt");
  std::vector<std::string> args = kLongSmall;
  args.insert(args.end(), {"--out-dir", out});
  constexpr rlim_t kLimit = 48 * 1024;  // the header and a few dozen steps per run
  CHECK(wait_exit_code(test::start_cli(args, err, kLimit)) == 4);
  const std::vector<std::string> lines = tool_lines(err);
  const std::string stderr_text = test::read_text(err);
  CAPTURE(stderr_text);  // both runs fail near the same moment: their lines must not interleave
  CHECK(lines.size() == 2);
  for (const std::string& line : lines) {
    CAPTURE(line);
    CHECK(line.rfind("recompdiag: error: ", 0) == 0);
    CHECK(line.find("run: cannot write run file") != std::string::npos);
  }
  for (const char* run : {"/recompile.jsonl", "/mutable.jsonl"}) {
    CAPTURE(run);
    CHECK(std::filesystem::file_size(out + run) == kLimit);
    CHECK(test::count_step_lines(out + run) >= 20);
  }
  CHECK_FALSE(std::filesystem::exists(out + "/report.md"));
}
