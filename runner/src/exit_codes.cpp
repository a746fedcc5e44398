#include "recompdiag/runner/exit_codes.h"

#include <sys/wait.h>

#include <csignal>
#include <string>
#include <utility>

#include "recompdiag/core/error.h"

namespace recompdiag::runner {

Interrupted::Interrupted(int signal, const std::string& what)
    : std::runtime_error(what + " interrupted by " +
                         (signal == SIGINT    ? std::string("SIGINT")
                          : signal == SIGTERM ? std::string("SIGTERM")
                                              : "signal " + std::to_string(signal)) +
                         "; every completed step is in the run file, with a summary marked "
                         "interrupted"),
      signal_(signal) {}

namespace {

// The error's line and exit code.
std::pair<std::string, int> error_line(const std::exception_ptr& error,
                                       const std::string& context) {
  try {
    std::rethrow_exception(error);
  } catch (const InputError& e) {
    return {"recompdiag: error: " + context + e.what() + "\n", kExitBadInput};
  } catch (const IoError& e) {
    return {"recompdiag: error: " + context + e.what() + "\n", kExitRunFailed};
  } catch (const JobError& e) {
    // A data-parallel job failed around this rank (a peer never joined or died).
    return {"recompdiag: error: " + context + e.what() + "\n", kExitRunFailed};
  } catch (const Interrupted& e) {
    return {"recompdiag: " + context + e.what() + "\n", e.exit_code()};
  } catch (const std::exception& e) {
    // Anything else is our fault, not the input's: one line (LibTorch appends a backtrace to
    // its messages), and an exit code apart from bad input. Run files are flushed line by line,
    // so every completed step is already on disk.
    const std::string what = e.what();
    return {"recompdiag: internal error: " + context + what.substr(0, what.find('\n')) + "\n",
            kExitInternal};
  } catch (...) {
    return {"recompdiag: internal error: " + context + "unknown exception\n", kExitInternal};
  }
}

}  // namespace

int report_error(const std::exception_ptr& error, std::ostream& err, const std::string& context) {
  const auto [line, code] = error_line(error, context);
  // One write: the runs of a pair share ab's stderr and may fail at the same moment; pieces of
  // two lines written piece by piece interleave (cli_test saw one line where two runs failed).
  err.write(line.data(), static_cast<std::streamsize>(line.size()));
  err.flush();
  return code;
}

int exit_code_of_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (!WIFSIGNALED(status)) return kExitInternal;
  const int signal = WTERMSIG(status);
  if (signal == SIGINT || signal == SIGTERM) return 128 + signal;
  if (signal == SIGKILL) return kExitRunFailed;
  return kExitInternal;
}

int side_failed_exit_code(int code) {
  // A stop asked of ab itself ends it as Interrupted before any side's code is judged: a side
  // ended by SIGINT or SIGTERM here was stopped by someone else, a failed run like any other.
  return code == kExitBadInput ? code : kExitSideFailed;
}

}  // namespace recompdiag::runner
