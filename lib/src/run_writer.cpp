// RunWriter: one record per line, written through to the file as it comes (a killed run keeps
// every completed line).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "recompdiag/core/error.h"
#include "recompdiag/core/run_io.h"

namespace recompdiag {

RunWriter::RunWriter(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw InputError("cannot write run file '" + path + "': " + std::strerror(errno));
  }
  buffer_.reserve(4096);
}

RunWriter::~RunWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void RunWriter::write_line() {
  buffer_ += '\n';
  const char* p = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      // A partial line may be left behind: readers skip a truncated last line.
      throw IoError("cannot write run file '" + path_ + "' after " + std::to_string(lines_) +
                    " lines: " + std::strerror(errno) + "; training stopped, every line before " +
                    "is intact");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  ++lines_;
}

void RunWriter::write(const RunHeader& header) {
  buffer_ = to_json_line(header);
  write_line();
}

void RunWriter::write(const StepRecord& step) {
  buffer_.clear();
  append_json(buffer_, step);
  write_line();
}

void RunWriter::write(const EventRecord& event) {
  buffer_ = to_json_line(event);
  write_line();
}

void RunWriter::write(const RunSummary& summary) {
  buffer_ = to_json_line(summary);
  write_line();
}

}  // namespace recompdiag
