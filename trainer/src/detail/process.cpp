#include "detail/process.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "recompdiag/core/error.h"

namespace recompdiag::trainer::detail {

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

}  // namespace recompdiag::trainer::detail
