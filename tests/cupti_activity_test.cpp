// CUPTI activity interpretation, fed synthetic records: what the CUPTI probe counts, tested on a
// machine without a GPU (the SDK calls themselves need one; see the GPU test in probes_test.cpp).

#include "detail/cupti_activity.h"

#include <doctest/doctest.h>

#include <cstdio>

namespace recompdiag::probes::detail {
namespace {

using Kind = Activity::Kind;
using Direction = Activity::Direction;

Activity kernel(const char* name, uint64_t start_ns, uint64_t end_ns) {
  Activity a;
  a.kind = Kind::kKernel;
  a.name = name;
  a.start_ns = start_ns;
  a.end_ns = end_ns;
  return a;
}

Activity memcpy_of(Direction direction, int64_t bytes) {
  Activity a;
  a.kind = Kind::kMemcpy;
  a.direction = direction;
  a.bytes = bytes;
  return a;
}

Activity of_kind(Kind kind) {
  Activity a;
  a.kind = kind;
  return a;
}

TEST_CASE("kernels: count, time, and first-seen names across steps") {
  SignatureTable names(1024);
  CuptiStats step1;
  interpret(kernel("gemm", 1000, 3000), names, step1);
  interpret(kernel("gemm", 4000, 4500), names, step1);
  interpret(kernel("relu", 5000, 5250), names, step1);
  interpret(kernel(nullptr, 6000, 6100), names, step1);  // no name: counted, not a cache miss
  CHECK(step1.kernels == 4);
  CHECK(step1.new_kernels == 2);
  CHECK(step1.kernel_ms == doctest::Approx((2000 + 500 + 250 + 100) / 1e6));
  CuptiStats step2;  // the same kernels again: no cache miss
  interpret(kernel("relu", 0, 10), names, step2);
  interpret(kernel("gemm", 0, 10), names, step2);
  CHECK(step2.kernels == 2);
  CHECK(step2.new_kernels == 0);
  CuptiStats bad_clock;  // an end before the start adds no time
  interpret(kernel("relu", 10, 5), names, bad_clock);
  CHECK(bad_clock.kernel_ms == 0.0);
}

TEST_CASE("memcpy by direction, memsets and syncs") {
  SignatureTable names(64);
  CuptiStats s;
  interpret(memcpy_of(Direction::kHostToDevice, 4096), names, s);
  interpret(memcpy_of(Direction::kHostToDevice, 4), names, s);
  interpret(memcpy_of(Direction::kDeviceToHost, 8), names, s);
  interpret(memcpy_of(Direction::kDeviceToDevice, 100), names, s);
  interpret(memcpy_of(Direction::kOther, 7), names, s);  // e.g. host to host: not a device copy
  interpret(of_kind(Kind::kMemset), names, s);
  interpret(of_kind(Kind::kSync), names, s);
  Activity wait = of_kind(Kind::kSync);
  wait.device_side = true;  // a stream waiting on an event does not block the host
  interpret(wait, names, s);
  CHECK(s.memcpy_h2d == 2);
  CHECK(s.bytes_h2d == 4100);
  CHECK(s.memcpy_d2h == 1);
  CHECK(s.bytes_d2h == 8);
  CHECK(s.memcpy_d2d == 1);
  CHECK(s.bytes_d2d == 100);
  CHECK(s.memsets == 1);
  CHECK(s.syncs == 1);
  CHECK(s.kernels == 0);
}

TEST_CASE("module loads, graph instantiations and drops") {
  SignatureTable names(64);
  CuptiStats s;
  interpret(of_kind(Kind::kModuleLoad), names, s);
  interpret(of_kind(Kind::kModuleLoad), names, s);
  interpret(of_kind(Kind::kGraphInstantiation), names, s);
  Activity drops = of_kind(Kind::kDropped);
  drops.count = 17;
  interpret(drops, names, s);
  CHECK(s.module_loads == 2);
  CHECK(s.graph_instantiations == 1);
  CHECK(s.dropped == 17);
}

TEST_CASE("a full kernel-name table counts the names it cannot hold as dropped") {
  SignatureTable names(64);  // at most 48 names (3/4 of 64 slots)
  CuptiStats s;
  char name[16];
  for (int i = 0; i < 200; ++i) {
    std::snprintf(name, sizeof name, "k%d", i);
    interpret(kernel(name, 0, 1), names, s);
  }
  CHECK(s.kernels == 200);
  CHECK(s.new_kernels + s.dropped == 200);
  CHECK(s.new_kernels <= 48);
  CHECK(s.dropped >= 152);
}

}  // namespace
}  // namespace recompdiag::probes::detail
