#include "recompdiag/probes/memory_probe.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace recompdiag::probes {
namespace {

constexpr char kStatm[] = "/proc/self/statm";

/// Parses a non-negative decimal at `pos`, skipping leading spaces; advances `pos`.
std::optional<int64_t> next_count(std::string_view text, size_t& pos) {
  while (pos < text.size() && text[pos] == ' ') ++pos;
  const size_t start = pos;
  int64_t value = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    if (value > (INT64_MAX - 9) / 10) return std::nullopt;
    value = value * 10 + (text[pos] - '0');
    ++pos;
  }
  if (pos == start) return std::nullopt;
  return value;
}

class MemoryStepProbe final : public StepProbe {
 public:
  const char* name() const override { return sections::kMemory; }
  const Availability& availability() const override { return reader_.availability(); }
  void begin_step(const StepBegin&) override {}
  void end_step(StepRecord& record) override {
    if (auto bytes = reader_.read()) record.memory = MemoryStats{*bytes};
  }

 private:
  ResidentMemoryReader reader_;
};

}  // namespace

std::optional<int64_t> parse_statm_resident(std::string_view statm, int64_t page_size) {
  size_t pos = 0;
  if (!next_count(statm, pos)) return std::nullopt;  // total program size
  const std::optional<int64_t> resident = next_count(statm, pos);
  if (!resident || *resident > INT64_MAX / std::max<int64_t>(page_size, 1)) return std::nullopt;
  return *resident * page_size;
}

struct ResidentMemoryReader::OpenFile {
  OpenFile() : fd(::open(kStatm, O_RDONLY | O_CLOEXEC)), pid(::getpid()) {}
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  const int fd;
  const pid_t pid;
};

ResidentMemoryReader::ResidentMemoryReader() : file_(std::make_shared<const OpenFile>()) {
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) page_size_ = page;
  availability_.available = true;
  if (!read()) {
    const int error = errno;
    availability_ = {false, std::string("unavailable: cannot read ") + kStatm + ": " +
                                (error != 0 ? std::strerror(error) : "unexpected content")};
  }
}

std::optional<int64_t> ResidentMemoryReader::read() const {
  if (!availability_.available) return std::nullopt;
  errno = 0;
  char buf[128];
  ssize_t n = -1;
  if (file_ && file_->fd >= 0 && file_->pid == ::getpid()) {
    n = ::pread(file_->fd, buf, sizeof buf, 0);
  } else {  // opened by the parent of a fork (its /proc/self was the parent), not at all, or moved
    const int fd = ::open(kStatm, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    n = ::read(fd, buf, sizeof buf);
    ::close(fd);
  }
  if (n <= 0) return std::nullopt;
  return parse_statm_resident(std::string_view(buf, static_cast<size_t>(n)), page_size_);
}

double measure_resident_read_ns(int reads, int rounds) {
  ResidentMemoryReader reader;
  if (!reader.availability().available || reads <= 0 || rounds <= 0) return 0.0;
  std::vector<double> per_read;
  volatile int64_t last = 0;  // keeps the reads from being optimised away
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reads; ++i) last = reader.read().value_or(0);
    const auto t1 = std::chrono::steady_clock::now();
    per_read.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / reads);
  }
  (void)last;
  std::nth_element(per_read.begin(), per_read.begin() + per_read.size() / 2, per_read.end());
  return per_read[per_read.size() / 2];
}

std::unique_ptr<StepProbe> make_memory_probe() { return std::make_unique<MemoryStepProbe>(); }

}  // namespace recompdiag::probes
