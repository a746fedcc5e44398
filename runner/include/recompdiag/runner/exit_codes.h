#pragma once
/// \file
/// The exit codes every recompdiag command shares (README, "Commands"), in one place for the
/// command line and for the children `ab` forks, so that a child's failure reaches the parent's
/// exit code unchanged:
///
///     try {
///       run_command();
///     } catch (...) {
///       return report_error(std::current_exception(), std::cerr);
///     }

#include <exception>
#include <ostream>
#include <stdexcept>
#include <string>

namespace recompdiag::runner {

/// Exit code: success.
inline constexpr int kExitOk = 0;
/// Exit code: a run failed for its environment (the run file cannot be written: disk full,
/// file-size limit; a child killed from outside, e.g. by the kernel's OOM killer).
inline constexpr int kExitRunFailed = 1;
/// Exit code: bad input (a flag, a file, a config that cannot fit).
inline constexpr int kExitBadInput = 2;
/// Exit code: an internal error, i.e. a bug of ours (an unexpected exception, a crashed child).
inline constexpr int kExitInternal = 3;
/// Exit code of `ab`: no verdict, because a side's run failed (killed, crashed, or exited with an
/// error other than bad input) or the pair could not be run or recorded; apart from 1, a
/// regression.
inline constexpr int kExitSideFailed = 4;

/// A command ended early because of a signal; main() prints what() and exits exit_code().
class Interrupted : public std::runtime_error {
 public:
  /// `what` names what was interrupted ("train", "ab").
  Interrupted(int signal, const std::string& what);
  int signal() const { return signal_; }
  /// 128 + the signal: 130 for SIGINT, 143 for SIGTERM.
  int exit_code() const { return 128 + signal_; }

 private:
  int signal_;
};

/// Writes the one line that `error` deserves to `err` and returns its exit code: `InputError` ->
/// "recompdiag: error: ..." and 2; `IoError` -> the same line and 1; `Interrupted` ->
/// "recompdiag: <what>" and 128 + its signal; anything else -> "recompdiag: internal error: ..."
/// (the first line of what(): LibTorch appends a backtrace) and 3. `context`, when not empty,
/// goes before the message ("mutable run: "). `error` must not be null. Never throws.
int report_error(const std::exception_ptr& error, std::ostream& err,
                 const std::string& context = "");

/// The exit code a parent gives for a child's `waitpid` status: the child's own exit code; for a
/// child ended by a signal, 128 + the signal for SIGINT and SIGTERM (a stop that was asked for),
/// 1 for SIGKILL (killed from outside: the OOM killer, a job scheduler) and 3 for any other
/// (SIGSEGV, SIGABRT...: a crash is a bug).
int exit_code_of_wait_status(int status);

/// The exit code of `ab` when a side's run ended with `code` (not 0): 2 for bad input (the flags
/// or the command line were wrong), else kExitSideFailed, so that a failed run never reads as a
/// verdict. (A stop asked of `ab` itself ends it with 128 + the signal before this is asked.)
int side_failed_exit_code(int code);

}  // namespace recompdiag::runner
