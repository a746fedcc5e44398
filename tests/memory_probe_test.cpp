// The memory probes: statm parsing, the resident-size reader against memory this test touches, and
// the Monitor's memory sections (resident on any Linux host; the CUDA allocator's only on CUDA).
#include <torch/torch.h>

// LibTorch brings glog's CHECK macros; doctest's must win, or assertions go uncounted.
#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LT
#undef CHECK_LE
#undef CHECK_GT
#undef CHECK_GE
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "recompdiag/probes/memory_probe.h"
#include "recompdiag/probes/monitor.h"

using namespace recompdiag;
using probes::Monitor;
using probes::MonitorOptions;

TEST_CASE("memory probe: statm's second count is the resident size in pages") {
  CHECK(probes::parse_statm_resident("12345 678 90 12 0 3456 0\n", 4096) == 678 * 4096);
  CHECK(probes::parse_statm_resident("1 2", 65536) == 2 * 65536);
  CHECK_FALSE(probes::parse_statm_resident("12345", 4096));
  CHECK_FALSE(probes::parse_statm_resident("", 4096));
  CHECK_FALSE(probes::parse_statm_resident("x 1 2", 4096));
  CHECK_FALSE(probes::parse_statm_resident("1 99999999999999999999", 4096));
}

TEST_CASE("memory probe: the resident size rises by the memory this process touches") {
  probes::ResidentMemoryReader reader;
  REQUIRE_MESSAGE(reader.availability().available, reader.availability().reason);
  const auto before = reader.read();
  REQUIRE(before);
  CHECK(*before > 0);
  constexpr size_t kTouched = 64 << 20;
  std::unique_ptr<char[]> block(new char[kTouched]);
  std::memset(block.get(), 1, kTouched);  // the pages become resident once written
  const auto after = reader.read();
  REQUIRE(after);
  CHECK(*after - *before >= static_cast<int64_t>(kTouched) * 3 / 4);
  CHECK(block[kTouched - 1] == 1);
}

TEST_CASE("memory probe: a copy outlives its original; a forked child reads its own size") {
  std::optional<probes::ResidentMemoryReader> original(std::in_place);
  const probes::ResidentMemoryReader copy = *original;
  original.reset();  // the copy keeps the file the two share
  REQUIRE(copy.read());

  // The reader's file is the parent's /proc/<pid>/statm: the child must not read it, or the
  // memory it touches would not show.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const auto before = copy.read();
    constexpr size_t kTouched = 64 << 20;
    std::unique_ptr<char[]> block(new char[kTouched]);
    std::memset(block.get(), 1, kTouched);
    const auto after = copy.read();
    const bool own = before && after && *after - *before >= static_cast<int64_t>(kTouched) * 3 / 4;
    ::_exit(own && block[kTouched - 1] == 1 ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("monitor: every step gets the memory section; the CUDA allocator's says why not on CPU") {
  torch::nn::Linear model(4, 2);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  MonitorOptions options;
  options.log_alerts = false;
  {
    Monitor monitor(*model, adam, options);
    const nlohmann::json availability = monitor.probe_availability();
    CHECK(availability[sections::kMemory]["available"] == true);
    CHECK(availability[sections::kCudaMemory]["available"] == false);
    CHECK(availability[sections::kCudaMemory]["reason"].get<std::string>().rfind("unavailable: ",
                                                                                 0) == 0);
    StepRecord record;
    monitor.begin_step(0);
    model->forward(torch::ones({1, 4})).sum().backward();
    adam.step();
    monitor.end_step(record);
    REQUIRE(record.memory.has_value());
    CHECK(record.memory->resident_bytes > 0);
    CHECK_FALSE(record.cuda_memory.has_value());
  }
  options.memory = false;
  Monitor monitor(*model, adam, options);
  const nlohmann::json availability = monitor.probe_availability();
  for (const char* name : {sections::kMemory, sections::kCudaMemory}) {
    CAPTURE(name);
    CHECK(availability[name]["reason"] == "disabled by MonitorOptions");
  }
  StepRecord record;
  monitor.begin_step(0);
  monitor.end_step(record);
  CHECK_FALSE(record.memory.has_value());
}
