#include "recompdiag/runner/process.h"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "recompdiag/core/error.h"

extern char** environ;

namespace recompdiag::runner {

namespace {

// An exec's argv or envp: pointers into `strings`, null-terminated (exec and posix_spawn take
// char* const[] and do not write through them).
std::vector<char*> c_argv(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Spawns `argv` with `actions` applied in the child; throws IoError naming the program.
pid_t spawn(std::vector<std::string> argv, posix_spawn_file_actions_t& actions) {
  std::fflush(nullptr);
  std::vector<char*> cargv = c_argv(argv);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    errno = rc;
    throw_os_error("cannot start " + argv[0]);
  }
  return pid;
}

}  // namespace

void throw_os_error(const std::string& what) { throw IoError(what + ": " + std::strerror(errno)); }

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Pipe Pipe::make(const std::string& purpose) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_os_error("cannot create a pipe for " + purpose);
  Pipe p;
  p.read = Fd(fds[0]);
  p.write = Fd(fds[1]);
  return p;
}

pid_t fork_process(const std::string& what) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw_os_error("cannot start " + what + ": fork failed");
  return pid;
}

pid_t fork_into_group(const std::string& what) {
  const pid_t pid = fork_process(what);
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    return 0;
  }
  ::setpgid(pid, pid);  // also here: no signal may reach the group before it exists
  return pid;
}

pid_t spawn_process(const ChildProgram& program, const std::string& what) {
  const std::vector<char*> argv = c_argv(program.argv);
  const std::vector<char*> envp = c_argv(program.env);
  const pid_t pid = fork_into_group(what);
  if (pid != 0) return pid;
  pin_to_cpus(program.cpus);
  if (program.default_sigpipe) ::signal(SIGPIPE, SIG_DFL);
  for (int fd : program.inherit) ::fcntl(fd, F_SETFD, 0);
  ::execve(program.path.c_str(), argv.data(), envp.data());
  (void)!::write(STDERR_FILENO, program.exec_failed_line.data(), program.exec_failed_line.size());
  ::_exit(program.exec_failed_code);
}

int wait_process(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 0;
  }
  return status;
}

std::string make_temp_dir(const std::string& prefix) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string name = (dir / (prefix + "XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr) {
    throw_os_error("cannot create a temporary directory " + (dir / (prefix + "XXXXXX")).string());
  }
  return name;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) throw_os_error("cannot read the CPUs allowed");
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

std::vector<int> parse_cpus(const std::string& text, const std::string& flag) {
  if (text == "all") return {};
  const std::vector<int> allowed = allowed_cpus();
  if (text == "auto")
    return allowed.empty() ? std::vector<int>{} : std::vector<int>{allowed.back()};
  auto bad = [&](const std::string& why) {
    return InputError(
        flag + " '" + text + "': " + why +
        " (auto: one CPU for both sides; all: no pinning; or a list like 0-3 or 1,3)");
  };
  auto number = [&](const std::string& part) {
    if (part.empty() || part.size() > 6 ||
        part.find_first_not_of("0123456789") != std::string::npos) {
      throw bad("'" + part + "' is not a CPU number");
    }
    return std::stoi(part);
  };
  std::vector<int> cpus;
  std::stringstream list(text);
  for (std::string part; std::getline(list, part, ',');) {
    const size_t dash = part.find('-');
    const int first = number(part.substr(0, dash));
    const int last = dash == std::string::npos ? first : number(part.substr(dash + 1));
    if (last < first) throw bad("range " + part + " runs backwards");
    for (int c = first; c <= last; ++c) {
      if (std::find(allowed.begin(), allowed.end(), c) == allowed.end()) {
        throw bad("CPU " + std::to_string(c) + " is not one this process may run on");
      }
      if (std::find(cpus.begin(), cpus.end(), c) == cpus.end()) cpus.push_back(c);
    }
  }
  if (cpus.empty() || text.back() == ',') throw bad("no CPU named");
  return cpus;
}

CpuMask CpuMask::of(const std::vector<int>& cpus) {
  CpuMask mask;
  if (cpus.empty()) return mask;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&set);
  mask.bits.assign(bytes, bytes + sizeof set);
  return mask;
}

void pin_to_cpus(const CpuMask& mask) {
  if (mask.bits.size() != sizeof(cpu_set_t)) return;
  (void)::sched_setaffinity(0, sizeof(cpu_set_t),
                            reinterpret_cast<const cpu_set_t*>(mask.bits.data()));
}

int64_t process_group_cpu_ticks(pid_t pgid) {
  int64_t ticks = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;  // gone since the listing
    // "pid (comm) state ppid pgrp ... utime stime": comm may hold spaces and parentheses, so the
    // fields are counted from the last ')'.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(line.substr(close + 2));
    std::string state;
    long long ppid = 0, pgrp = 0;
    fields >> state >> ppid >> pgrp;
    if (!fields || pgrp != pgid) continue;
    std::string skip;
    for (int i = 0; i < 8; ++i) fields >> skip;  // session ... cmajflt: fields 6-13
    long long utime = 0, stime = 0;
    fields >> utime >> stime;
    if (fields) ticks += utime + stime;
  }
  return ticks;
}

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\0', start);
    argv.push_back(all.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return argv;
}

std::string own_executable() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    errno = ec.value();
    throw_os_error("cannot find this executable (/proc/self/exe)");
  }
  return exe.string();
}

pid_t spawn_logged(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  return spawn(argv, actions);
}

Captured run_capturing(const std::vector<std::string>& argv) {
  Pipe out = Pipe::make("the output of " + argv.at(0));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out.write.get(), 1);  // dup2 clears CLOEXEC
  const pid_t pid = spawn(argv, actions);
  out.write.reset();
  Captured c;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(out.read.get(), buf, sizeof buf);
    if (n > 0) {
      c.out.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  c.status = wait_process(pid);
  return c;
}

}  // namespace recompdiag::runner
