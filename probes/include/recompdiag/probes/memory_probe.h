#pragma once
/// \file
/// The memory probes: the process's resident set size at every step end (section `memory`), and
/// on CUDA the caching allocator's allocated and reserved bytes (section `cuda_memory`). A leak
/// that keeps compiled units or optimizers alive shows as resident memory that grows step after
/// step; the `memory_growth` health rule (health.h) reads it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "recompdiag/core/record.h"
#include "recompdiag/probes/step_probe.h"

namespace recompdiag::probes {

/// Resident bytes from the text of /proc/<pid>/statm ("size resident shared text lib data dt", in
/// pages of `page_size` bytes), or nullopt when the text does not start with two page counts.
/// Pure: tests feed it strings.
std::optional<int64_t> parse_statm_resident(std::string_view statm, int64_t page_size);

/// Reads the calling process's resident set size from /proc/self/statm, opened once: each read is
/// one pread of at most 128 bytes into a stack buffer, no heap allocation (a few microseconds;
/// `bench overhead` prints the figure). Opening the file at every read cost a Python loop's
/// small step about 26 us, most of it after the read, in the next step (torch 2.15, this
/// machine). Copies share the open file. Thread-safe. In a child forked after the reader was made,
/// a read opens the child's own file each time. Unavailable, with the reason, where the file cannot
/// be read (not Linux, /proc not mounted).
class ResidentMemoryReader {
 public:
  ResidentMemoryReader();
  const Availability& availability() const { return availability_; }
  /// The resident set size now, or nullopt when the read failed (or the reader is unavailable).
  std::optional<int64_t> read() const;

 private:
  struct OpenFile;  // the file descriptor and the process that opened it
  Availability availability_;
  int64_t page_size_ = 4096;
  std::shared_ptr<const OpenFile> file_;
};

/// Median nanoseconds per ResidentMemoryReader::read() over `rounds` rounds of `reads` reads, for
/// the benchmark output; 0 when the reader is unavailable.
double measure_resident_read_ns(int reads = 2000, int rounds = 7);

/// The step probe of section `memory`: the resident set size at step end.
std::unique_ptr<StepProbe> make_memory_probe();

/// The step probe of section `cuda_memory` for `expected_device` ("cpu", "cuda:0"): the caching
/// allocator's bytes of that device at step end. A null probe with the reason where it cannot run:
/// LibTorch built without CUDA, or a model on the host. Decided in probe_factory.cpp.
std::unique_ptr<StepProbe> make_cuda_memory_probe(const std::string& expected_device);

}  // namespace recompdiag::probes
