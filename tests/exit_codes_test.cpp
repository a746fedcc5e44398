// The exit codes every command shares (README's table): exceptions and children's wait statuses.

#include "recompdiag/runner/exit_codes.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "recompdiag/core/error.h"

using namespace recompdiag;
using namespace recompdiag::runner;

namespace {

// The code and the text report_error gives for `error`.
std::pair<int, std::string> reported(const std::exception_ptr& error,
                                     const std::string& context = "") {
  std::ostringstream err;
  const int code = report_error(error, err, context);
  return {code, err.str()};
}

// The wait status of a child that ends with `signal` (default action restored: doctest installs
// handlers of its own), or exits with `code` when `signal` is 0.
int child_status(int signal, int code = 0) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (signal != 0) {
      ::signal(signal, SIG_DFL);
      ::kill(::getpid(), signal);
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

}  // namespace

TEST_CASE("report_error: one line and the README's exit code per kind of failure") {
  auto [code, text] = reported(std::make_exception_ptr(InputError("--seed -1: must be >= 0")));
  CHECK(code == kExitBadInput);
  CHECK(text == "recompdiag: error: --seed -1: must be >= 0\n");

  std::tie(code, text) = reported(
      std::make_exception_ptr(IoError("cannot write run file x: No space left")), "mutable run: ");
  CHECK(code == kExitRunFailed);
  CHECK(text == "recompdiag: error: mutable run: cannot write run file x: No space left\n");

  std::tie(code, text) = reported(std::make_exception_ptr(Interrupted(SIGTERM, "train")));
  CHECK(code == 143);
  CHECK(text.rfind("recompdiag: ", 0) == 0);
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);

  // A LibTorch error carries a backtrace after its first line: only the first line is printed.
  std::tie(code, text) = reported(
      std::make_exception_ptr(std::runtime_error("shape mismatch\nException raised from ...")),
      "recompile run: ");
  CHECK(code == kExitInternal);
  CHECK(text == "recompdiag: internal error: recompile run: shape mismatch\n");

  std::tie(code, text) = reported(std::make_exception_ptr(42));
  CHECK(code == kExitInternal);
  CHECK(text == "recompdiag: internal error: unknown exception\n");
}

TEST_CASE("a child's wait status becomes the parent's exit code") {
  CHECK(exit_code_of_wait_status(child_status(0, 0)) == kExitOk);
  CHECK(exit_code_of_wait_status(child_status(0, 2)) == kExitBadInput);
  CHECK(exit_code_of_wait_status(child_status(0, 3)) == kExitInternal);
  CHECK(exit_code_of_wait_status(child_status(0, 143)) == 143);
  CHECK(exit_code_of_wait_status(child_status(SIGINT)) == 130);
  CHECK(exit_code_of_wait_status(child_status(SIGTERM)) == 143);
  CHECK(exit_code_of_wait_status(child_status(SIGKILL)) == kExitRunFailed);  // e.g. OOM killer
  // A crash is a bug: internal error, whatever the signal.
  CHECK(exit_code_of_wait_status(child_status(SIGABRT)) == kExitInternal);
  CHECK(exit_code_of_wait_status(child_status(SIGSEGV)) == kExitInternal);
  CHECK(exit_code_of_wait_status(child_status(SIGFPE)) == kExitInternal);
}
