#pragma once
// The OS plumbing of the commands that start other processes (ab, train --world-size, the
// benches): descriptors and pipes that close themselves, fork and wait, temporary directories and
// this process's own command line. A failed system call is the environment's fault, not a bug of
// ours: it throws IoError (exit 1) naming what could not be done and errno's reason. Torch-free:
// the launchers must not touch LibTorch before they fork.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace recompdiag::runner {

/// Throws IoError("<what>: <strerror(errno)>").
[[noreturn]] void throw_os_error(const std::string& what);

/// Owns one file descriptor: closed on destruction. Movable, not copyable.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  /// Closes the descriptor (when open).
  void reset();

 private:
  int fd_ = -1;
};

/// A pipe whose ends are close-on-exec.
struct Pipe {
  Fd read;
  Fd write;
  /// Throws IoError ("cannot create a pipe for <purpose>: ...") when the system has no
  /// descriptors left.
  static Pipe make(const std::string& purpose);
};

/// Flushes stdio (a child must not write out the parent's buffers again) and forks. Returns the
/// child's pid in the parent and 0 in the child. Throws IoError ("cannot start <what>: fork
/// failed: ...") when the system has no process to spare.
pid_t fork_process(const std::string& what);

/// Waits for child `pid` through EINTR; returns waitpid's status (0 when it is no child).
int wait_process(pid_t pid);

/// A fresh directory under the system's temporary directory, named `<prefix>XXXXXX` (mkdtemp):
/// no other process can take it between its choice and its use. Throws IoError when it cannot be
/// created. The caller owns it (TempDir removes it).
std::string make_temp_dir(const std::string& prefix);

/// A make_temp_dir() directory removed with its contents on destruction (best effort: a leftover
/// temporary directory harms nothing). Neither copyable nor movable.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) : path_(make_temp_dir(prefix)) {}
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// The CPUs this process may run on (sched_getaffinity), ascending. Throws IoError when the
/// system does not say.
std::vector<int> allowed_cpus();

/// The CPUs a pair of runs taking turns shares (`ab --cpus`): "auto" is one CPU, the last this
/// process may run on; "all" pins nothing (empty); else a list such as "3", "0-3" or "1,3". Throws
/// InputError naming `flag` for a malformed list or a CPU this process may not run on.
std::vector<int> parse_cpus(const std::string& text, const std::string& flag);

/// A CPU set for pin_to_cpus(), built before a fork so that the child only makes the call.
struct CpuMask {
  std::vector<unsigned char> bits;  ///< cpu_set_t's bytes; empty: pin nothing.
  static CpuMask of(const std::vector<int>& cpus);
};

/// In a forked child: runs this process (and the threads it starts) on `mask`'s CPUs only.
/// Async-signal-safe; a refusal is ignored (the run then floats, as without pinning).
void pin_to_cpus(const CpuMask& mask);

/// fork_process() into a process group of the child's own: a terminal's Ctrl-C then reaches this
/// process alone, which forwards it once (ForwardSignals). In the child SIGINT and SIGTERM are back
/// at their default actions; the group is also made in the parent, so that no signal this process
/// sends reaches it before it exists. Returns the pid in the parent and 0 in the child.
pid_t fork_into_group(const std::string& what);

/// What spawn_process() runs in a child: everything prepared before the fork, so that between
/// fork and exec the child calls only async-signal-safe functions.
struct ChildProgram {
  std::string path;               ///< "/bin/sh", "/proc/self/exe"
  std::vector<std::string> argv;  ///< argv[0] included
  std::vector<std::string> env;   ///< the whole environment, NAME=VALUE
  std::vector<int> inherit;       ///< descriptors that survive the exec (close-on-exec cleared)
  CpuMask cpus;                   ///< pinned before the exec; empty: not pinned
  bool default_sigpipe = false;   ///< SIGPIPE back at its default action (else as inherited)
  int exec_failed_code = 127;     ///< the child's exit code when the exec fails
  /// Written to stderr when the exec fails: "recompdiag: error: cannot start a rank: ...".
  std::string exec_failed_line;
};

/// fork_into_group() (`what` names the child in a fork failure), then exec of `program` in the
/// child. Returns the child's pid; throws IoError when the fork fails.
pid_t spawn_process(const ChildProgram& program, const std::string& what);

/// The CPU time (user and system, in clock ticks) used so far by the live processes of process
/// group `pgid`, from /proc/PID/stat; 0 when none is found. A group whose time stops growing is
/// waiting (blocked in a read, a sleep) or gone.
int64_t process_group_cpu_ticks(pid_t pgid);

/// This process's arguments, from /proc/self/cmdline (empty when it cannot be read).
std::vector<std::string> own_command_line();

/// This executable's path (/proc/self/exe). Throws IoError when it cannot be read.
std::string own_executable();

/// Starts `argv` (argv[0] a path; no shell) with its stdout and stderr in the file `log`
/// (created or truncated) and returns its pid for wait_process(). Throws IoError when it cannot
/// start.
pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log);

/// What run_capturing() got from a child.
struct Captured {
  std::string out;  ///< Everything it wrote to stdout.
  int status = 0;   ///< waitpid's status.
};

/// Runs `argv` (argv[0] a path; no shell) to its end, its stdout captured and its stderr this
/// process's. Throws IoError when it cannot start.
Captured run_capturing(const std::vector<std::string>& argv);

}  // namespace recompdiag::runner
