// The memory pre-flight: estimates scale with the config, and a config that cannot fit is refused
// with the estimate against what is available.

#include "recompdiag/trainer/memory_estimate.h"

#include <doctest/doctest.h>

#include "recompdiag/core/error.h"

namespace recompdiag::trainer {

TEST_CASE("the memory estimate scales with batch and sequence, not parameters") {
  TrainConfig small;
  TrainConfig twice = small;
  twice.batch_size *= 2;
  const MemoryEstimate a = estimate_memory(small);
  const MemoryEstimate b = estimate_memory(twice);
  CHECK(b.data_bytes == doctest::Approx(2.0 * a.data_bytes));
  CHECK(b.activation_bytes == doctest::Approx(2.0 * a.activation_bytes));
  CHECK(b.parameter_bytes == doctest::Approx(a.parameter_bytes));
  TrainConfig longer = small;
  longer.seq_len *= 3;
  CHECK(estimate_memory(longer).data_bytes == doctest::Approx(3.0 * a.data_bytes));
  TrainConfig lstm = small;
  lstm.rnn = "lstm";  // four gates instead of three: more weights and more saved activations
  CHECK(estimate_memory(lstm).parameter_bytes > a.parameter_bytes);
  CHECK(estimate_memory(lstm).activation_bytes > a.activation_bytes);
  // The inputs alone: steps_per_epoch batches of batch x seq x input floats.
  CHECK(a.data_bytes >
        4.0 * small.steps_per_epoch * small.batch_size * small.seq_len * small.input_size);
}

TEST_CASE("a config that cannot fit is refused with the estimate and what is available") {
  TrainConfig huge;
  huge.seq_len = 100000000;
  const MemoryEstimate need = estimate_memory(huge);
  CHECK(need.total_bytes() > 1e12);  // ~ a terabyte: int overflow would have made it small
  try {
    check_fits(need, 24.0 * (1ull << 30), "host memory");
    FAIL("expected InputError");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("needs ~") != std::string::npos);
    CHECK(what.find("24.0 GiB available") != std::string::npos);
    CHECK(what.find("--seq-len") != std::string::npos);
  }
  CHECK_NOTHROW(check_fits(need, std::nullopt, "host memory"));
  CHECK_NOTHROW(check_fits(estimate_memory(TrainConfig{}), 24.0 * (1ull << 30), "host memory"));
}

TEST_CASE("available host memory is read from this machine") {
  const auto available = available_host_memory();
  REQUIRE(available.has_value());  // Linux always has /proc/meminfo
  CHECK(*available > 0.0);
}

TEST_CASE("device memory is unknown without a CUDA driver or device, never a crash") {
  CHECK_FALSE(available_device_memory(-1).has_value());
  CHECK_FALSE(available_device_memory(1 << 20).has_value());  // no such device
  // Device 0: its free memory on a machine with a driver and a GPU, else unknown.
  const auto free = available_device_memory(0);
  if (free) CHECK(*free > 0.0);
  MemoryEstimate need;
  need.data_bytes = 2.0 * 1024 * 1024 * 1024;
  CHECK_THROWS_WITH_AS(check_fits(need, 1024.0 * 1024 * 1024, "memory on cuda:0"),
                       doctest::Contains("GiB of memory on cuda:0, 1.0 GiB available"),
                       InputError);
}

}  // namespace recompdiag::trainer
