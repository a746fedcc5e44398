// The launchers' OS plumbing (runner/include/recompdiag/runner/process.h): descriptors that close themselves,
// temporary directories, the own command line, and system-call failures as the environment's
// error (exit 1), never as a bug of ours (exit 3).

#include "recompdiag/runner/process.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "process/command_pair.h"
#include "recompdiag/core/error.h"
#include "recompdiag/runner/ab_sides.h"
#include "recompdiag/runner/exit_codes.h"
#include "recompdiag/runner/forward_signals.h"
#include "recompdiag/runner/rank_processes.h"

using namespace recompdiag;
using namespace recompdiag::runner;

namespace {

bool fd_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

}  // namespace

TEST_CASE("process: a pipe's ends close with it, however the scope is left") {
  int read_fd = -1, write_fd = -1;
  try {
    Pipe p = Pipe::make("a test");
    read_fd = p.read.get();
    write_fd = p.write.get();
    REQUIRE(fd_open(read_fd));
    REQUIRE(fd_open(write_fd));
    CHECK((::fcntl(read_fd, F_GETFD) & FD_CLOEXEC) != 0);
    throw std::runtime_error("a failed write");  // as run_interleaved_pair's first turn may
  } catch (const std::runtime_error&) {
  }
  CHECK_FALSE(fd_open(read_fd));
  CHECK_FALSE(fd_open(write_fd));
  Pipe moved = Pipe::make("a test");
  const int fd = moved.read.get();
  moved = {};
  CHECK_FALSE(fd_open(fd));
}

TEST_CASE("process: a temporary directory that cannot be made is the environment's error") {
  const std::string missing = "recompdiag-no-such-directory-" + std::to_string(::getpid());
  REQUIRE_FALSE(std::filesystem::exists(std::filesystem::temp_directory_path() / missing));
  std::exception_ptr error;
  try {
    make_temp_dir(missing + "/x-");
  } catch (...) {
    error = std::current_exception();
  }
  REQUIRE(error);
  CHECK_THROWS_AS(std::rethrow_exception(error), IoError);
  std::ostringstream err;
  CHECK(report_error(error, err) == kExitRunFailed);
  CHECK(err.str().find("cannot create a temporary directory") != std::string::npos);
  CHECK(err.str().find("No such file or directory") != std::string::npos);
}

TEST_CASE("process: a temporary directory is fresh and removed with its contents") {
  std::string path;
  {
    TempDir a("recompdiag-process-test-");
    TempDir b("recompdiag-process-test-");
    path = a.path();
    CHECK(a.path() != b.path());
    CHECK(std::filesystem::is_directory(path));
    std::ofstream(path + "/file") << "x";
  }
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("process: the own command line is this process's argv") {
  const std::vector<std::string> argv = own_command_line();
  REQUIRE_FALSE(argv.empty());
  CHECK(std::filesystem::path(argv[0]).filename() == "runner_test");
}

TEST_CASE("process: rank r of a local job serves metrics on PORT + r") {
  CHECK(rank_listen_addr("127.0.0.1:9464", 0) == "127.0.0.1:9464");
  CHECK(rank_listen_addr("127.0.0.1:9464", 3) == "127.0.0.1:9467");
  CHECK(rank_listen_addr("127.0.0.1:0", 3) == "127.0.0.1:0");  // any free port, each
  CHECK(rank_listen_addr("", 3).empty());                      // no endpoint
  CHECK_THROWS_AS(rank_listen_addr("127.0.0.1:port", 1), InputError);
}

TEST_CASE("process: a pair is remembered by a crash of either side") {
  CHECK(pair_code(kExitRunFailed, kExitInternal) == kExitInternal);
  CHECK(pair_code(kExitInternal, kExitRunFailed) == kExitInternal);
  CHECK(pair_code(kExitRunFailed, 0) == kExitRunFailed);
  CHECK(pair_code(0, kExitBadInput) == kExitBadInput);
}

TEST_CASE("process: run_capturing returns the child's stdout and status; spawn_logged its log") {
  const Captured c = run_capturing({"/bin/sh", "-c", "printf 'a\\nb'; exit 3"});
  CHECK(c.out == "a\nb");
  REQUIRE(WIFEXITED(c.status));
  CHECK(WEXITSTATUS(c.status) == 3);

  TempDir dir("recompdiag_process_test_");
  const std::string log = dir.path() + "/child.log";
  const pid_t pid = spawn_logged({"/bin/sh", "-c", "echo out; echo err >&2"}, log);
  const int status = wait_process(pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "out\nerr\n");

  // A program that is not there is the environment's error, naming it.
  try {
    run_capturing({"/nonexistent/recompdiag-child"});
    FAIL("no exception");
  } catch (const IoError& e) {
    CHECK(std::string(e.what()).find("cannot start /nonexistent/recompdiag-child") !=
          std::string::npos);
  }
  CHECK(std::filesystem::exists(own_executable()));
}

TEST_CASE("process: a process group's CPU time grows while it works, not while it waits") {
  const auto group = [](const char* script) {
    ChildProgram p;
    p.path = "/bin/sh";
    p.argv = {"sh", "-c", script};
    for (char** e = environ; *e != nullptr; ++e) p.env.emplace_back(*e);
    return spawn_process(p, "a test group");
  };
  const pid_t idle = group("sleep 2");
  const pid_t busy = group("i=0; while [ $i -lt 2000000 ]; do i=$((i+1)); done");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const int64_t idle_ticks = process_group_cpu_ticks(idle);
  const int64_t busy_ticks = process_group_cpu_ticks(busy);
  CHECK(idle_ticks <= 2);
  CHECK(busy_ticks >= 10);  // 0.1 s of CPU in 0.6 s
  CHECK(process_group_cpu_ticks(999999999) == 0);
  for (pid_t pid : {idle, busy}) {
    ::kill(-pid, SIGKILL);
    wait_process(pid);
  }
}

TEST_CASE("command pair: its options are checked before anything starts") {
  detail::CommandPairOptions o;
  o.commands = {"true", "true"};
  o.labels = {"a", "b"};
  CHECK_NOTHROW(o.validate());
  ForwardSignals forward;
  o.first = 2;
  CHECK_THROWS_WITH_AS(detail::run_command_pair(o, forward),
                       "CommandPairOptions::first must be 0 or 1, got 2", InputError);
  o.first = 0;
  o.commands[1].clear();
  CHECK_THROWS_WITH_AS(o.validate(), "CommandPairOptions::commands[1] is empty", InputError);
  o.commands[1] = "true";
  o.start_wait_ms = -1;
  CHECK_THROWS_WITH_AS(o.validate(), "CommandPairOptions::start_wait_ms must be >= 0, got -1",
                       InputError);
  o.start_wait_ms = 0;
  o.cpus = {0, -2};
  CHECK_THROWS_WITH_AS(o.validate(), "CommandPairOptions::cpus[i] must be >= 0, got -2",
                       InputError);
}
