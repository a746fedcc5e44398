// The dispatcher probe against real LibTorch: ops counted by hand, host ops, sampling, one observer
// per process, the observer-cost figures, and on a GPU the copies and syncs (with CUPTI's kernels).
// No timing assertions.
#include "recompdiag/probes/dispatcher_probe.h"

#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "recompdiag/core/error.h"
#include "recompdiag/probes/cupti_probe.h"
#include "recompdiag/probes/overhead.h"
#include "torch_doctest.h"

using namespace recompdiag;
using probes::DispatcherOptions;
using probes::DispatcherProbe;

namespace {

// Five top-level ops: ones, mul, add, sum, item (item syncs). Nested ops (mul's
// scalar wrapping, item's _local_scalar_dense, sum's fill_) do not count.
float five_ops(int64_t n) {
  torch::Tensor a = torch::ones({2, n});
  torch::Tensor b = a * 2;
  torch::Tensor c = b + a;
  torch::Tensor s = c.sum();
  return s.item<float>();
}

}  // namespace

TEST_CASE("dispatcher probe: its options are checked, not clamped") {
  DispatcherOptions o;
  CHECK_NOTHROW(o.validate());
  o.sample_every = 0;
  CHECK_THROWS_WITH_AS(DispatcherProbe{o}, "DispatcherOptions::sample_every must be >= 1, got 0",
                       InputError);
  o = {};
  o.signature_capacity = 0;
  CHECK_THROWS_WITH_AS(o.validate(), "DispatcherOptions::signature_capacity must be >= 1, got 0",
                       InputError);
  o = {};
  o.expected_device = "";
  CHECK_THROWS_WITH_AS(DispatcherProbe{o}, "DispatcherOptions::expected_device is empty",
                       InputError);
  // A refused probe installed nothing: the next one is the process's active probe.
  DispatcherProbe next{DispatcherOptions{}};
  CHECK(next.availability().available);
}

TEST_CASE("dispatcher probe: counts match a hand-counted op sequence") {
  DispatcherProbe probe;
  REQUIRE(probe.available());
  CHECK(probe.hook() == probes::DispatchHook::kModeKey);  // kAuto: a probe knows no torch.compile

  probe.begin_step(0);
  five_ops(3);
  DispatchStats d = probe.end_step();
  CHECK(d.sampled);
  CHECK(d.ops == 5);
  CHECK(d.ops_cpu == 5);
  CHECK(d.ops_cuda == 0);
  CHECK(d.host_ops == 0);  // expected device is the host
  CHECK(d.syncs == 1);
  CHECK(d.recorder_syncs == 0);
  CHECK(d.new_signatures == 5);
  CHECK(d.dropped == 0);
  CHECK(d.copies_h2d + d.copies_d2h + d.copies_d2d == 0);

  SUBCASE("the same ops again are no new signatures; a new shape is") {
    probe.begin_step(1);
    five_ops(3);
    d = probe.end_step();
    CHECK(d.ops == 5);
    CHECK(d.new_signatures == 0);
    probe.begin_step(2);
    five_ops(4);
    d = probe.end_step();
    CHECK(d.new_signatures == 3);  // mul, add, sum; ones (no tensor argument)
                                   // and item (0-dim) are seen
  }

  SUBCASE("an item() inside a RecorderRead is the recorder's sync") {
    probe.begin_step(1);
    torch::Tensor loss = torch::ones({3}).sum();
    float planted = loss.item<float>();  // the planted sync
    {
      const probes::RecorderRead read;
      planted += loss.item<float>();
    }
    d = probe.end_step();
    CHECK(planted == 6.0f);
    CHECK(d.syncs == 1);
    CHECK(d.recorder_syncs == 1);
    CHECK(d.ops == 4);  // ones, sum, item, item
  }

  SUBCASE("ops outside a step are not counted") {
    five_ops(3);
    probe.begin_step(1);
    d = probe.end_step();
    CHECK(d.ops == 0);
  }

  SUBCASE("a copy to another device is a cross-device copy with its bytes") {
    probe.begin_step(1);
    torch::Tensor host = torch::ones({2, 3});
    torch::Tensor elsewhere = host.to(torch::kMeta);  // the meta device stands in for a GPU
    d = probe.end_step();
    CHECK(elsewhere.device().is_meta());
    CHECK(d.copies_h2d == 1);
    CHECK(d.bytes_h2d == 2 * 3 * 4);
    CHECK(d.copies_d2h == 0);
  }
}

TEST_CASE("dispatcher probe: host ops when the expected device is CUDA; sampling") {
  for (const auto hook : {probes::DispatchHook::kRecordFunction, probes::DispatchHook::kModeKey}) {
    CAPTURE(probes::dispatch_hook_name(hook));
    DispatcherOptions options;
    options.expected_device = "cuda";
    options.sample_every = 2;
    options.hook = hook;
    DispatcherProbe probe(options);
    REQUIRE(probe.available());
    probe.begin_step(0);
    five_ops(3);
    DispatchStats d = probe.end_step();
    CHECK(d.host_ops == 5);
    probe.begin_step(1);
    five_ops(3);
    d = probe.end_step();
    CHECK_FALSE(d.sampled);
    CHECK_FALSE(d.counted);
    CHECK(d.ops == 0);
  }
}

TEST_CASE("dispatcher probe: unsampled steps counted by op name, without inputs") {
  for (const auto hook : {probes::DispatchHook::kRecordFunction, probes::DispatchHook::kModeKey}) {
    CAPTURE(probes::dispatch_hook_name(hook));
    DispatcherOptions options;
    options.expected_device = "cuda";
    options.sample_every = 2;
    options.count_unsampled = true;
    options.hook = hook;
    DispatcherProbe probe(options);
    REQUIRE(probe.available());
    const int64_t signatures_before = probe.signatures_seen();
    probe.begin_step(1);  // not sampled: counted only
    five_ops(7);
    DispatchStats d = probe.end_step();
    CHECK_FALSE(d.sampled);
    CHECK(d.counted);
    CHECK(d.ops == 5);
    CHECK(d.syncs == 1);  // item, by its name
    // What needs the inputs is absent: no device split, host ops or signatures.
    CHECK(d.ops_cpu == 0);
    CHECK(d.host_ops == 0);
    CHECK(d.new_signatures == 0);
    CHECK(probe.signatures_seen() == signatures_before);
    probe.begin_step(2);  // sampled: inspected
    five_ops(7);
    d = probe.end_step();
    CHECK(d.sampled);
    CHECK(d.counted);
    CHECK(d.ops == 5);
    CHECK(d.host_ops == 5);
    CHECK(d.new_signatures > 0);
  }
}

TEST_CASE(
    "dispatcher probe: counted by name and inspected agree through backward and deep nesting") {
  // The callbacks keep each thread's open records on a stack: a start pushes, an end pops. A
  // backward pass opens autograd's transparent "evaluate_function" records around its ops, and a
  // user scope nested deeper than the stack still closes what it opened.
  DispatcherOptions options;
  options.sample_every = 2;
  options.count_unsampled = true;
  options.hook = probes::DispatchHook::kRecordFunction;  // the records are the callback's
  DispatcherProbe probe(options);
  REQUIRE(probe.available());
  torch::Tensor w = torch::ones({3, 3}, torch::requires_grad());
  const auto work = [&] {
    torch::Tensor loss = (torch::ones({2, 3}).matmul(w) * 3).sum();
    loss.backward();
    std::vector<std::unique_ptr<at::RecordFunction>> scopes;
    for (int i = 0; i < 70; ++i) {  // deeper than the stack (64)
      scopes.push_back(std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE));
      if (scopes.back()->isActive()) scopes.back()->before("deep");
    }
    const float value = loss.item<float>();     // inside 70 user scopes: still an op and a sync
    while (!scopes.empty()) scopes.pop_back();  // closed innermost first
    return value + five_ops(3);
  };
  std::vector<DispatchStats> steps;
  for (int64_t step = 0; step < 4; ++step) {  // inspected, counted, inspected, counted
    probe.begin_step(step);
    CHECK(work() == 54.0f + 18.0f);
    steps.push_back(probe.end_step());
  }
  for (const DispatchStats& d : steps) {
    CAPTURE(d.sampled);
    CHECK(d.counted);
    CHECK(d.ops == steps[0].ops);
    CHECK(d.syncs == 2);
    CHECK(d.recorder_syncs == 0);
  }
  CHECK(steps[0].ops > 10);  // the forward ops, backward's, the two items and five_ops' five
  CHECK(steps[0].sampled);
  CHECK_FALSE(steps[1].sampled);
}

namespace {

// A step with a little of everything the probe counts: forward and backward, nested ops, an
// op that throws, a cross-device copy (to the meta device), a sync and a recorder's read.
float mixed_step(const torch::Tensor& w) {
  torch::Tensor loss = (torch::ones({2, 3}).matmul(w) * 3).sum();
  loss.backward();
  try {
    (void)torch::ones({2}).view({3});  // throws inside the dispatcher
  } catch (const std::exception&) {
  }
  torch::Tensor elsewhere = torch::ones({4}).to(torch::kMeta);
  float value = loss.item<float>();
  {
    const probes::RecorderRead read;
    value += loss.item<float>();
  }
  // A boolean mask's index finds the mask's true entries: a sync nested in a plain op.
  const torch::Tensor picked = torch::arange(4).index({torch::arange(4) > 1});
  return value + five_ops(3) + static_cast<float>(elsewhere.numel() + picked.numel());
}

// Two steps of mixed_step under `hook`: inspected (step 0), then counted by name (step 1).
std::vector<DispatchStats> mixed_steps(probes::DispatchHook hook) {
  DispatcherOptions options;
  options.hook = hook;
  options.sample_every = 2;
  options.count_unsampled = true;
  DispatcherProbe probe(options);
  REQUIRE_MESSAGE(probe.available(), probe.availability().reason);
  torch::Tensor w = torch::ones({3, 3}, torch::requires_grad());
  std::vector<DispatchStats> steps;
  for (int64_t step = 0; step < 2; ++step) {
    probe.begin_step(step);
    CHECK(mixed_step(w) == 54.0f * 2 + 18.0f + 4.0f + 2.0f);
    steps.push_back(probe.end_step());
  }
  return steps;
}

}  // namespace

TEST_CASE("dispatcher probe, mode key: the same counts as the RecordFunction callback") {
  const std::vector<DispatchStats> by_callback = mixed_steps(probes::DispatchHook::kRecordFunction);
  const std::vector<DispatchStats> by_key = mixed_steps(probes::DispatchHook::kModeKey);
  CHECK_FALSE(at::hasGlobalCallbacks());
  CHECK_FALSE(c10::impl::tls_is_dispatch_key_included(c10::DispatchKey::TESTING_ONLY_GenericMode));
  // What a counted op's frame changed is undone with it.
  CHECK_FALSE(c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::TESTING_ONLY_GenericMode));
  CHECK_FALSE(
      c10::impl::tls_is_dispatch_key_included(c10::DispatchKey::TESTING_ONLY_GenericWrapper));
  for (size_t i = 0; i < 2; ++i) {
    CAPTURE(i);
    const DispatchStats& a = by_callback[i];
    const DispatchStats& b = by_key[i];
    CHECK(b.sampled == a.sampled);
    CHECK(b.counted);
    CHECK(b.ops == a.ops);
    CHECK(b.ops_cpu == a.ops_cpu);
    CHECK(b.syncs == a.syncs);
    CHECK(b.recorder_syncs == a.recorder_syncs);
    CHECK(b.copies_h2d == a.copies_h2d);
    CHECK(b.bytes_h2d == a.bytes_h2d);
    CHECK(b.new_signatures == a.new_signatures);
    CHECK(b.dropped == a.dropped);
  }
  // By hand: the item outside the read syncs for the step (five_ops' item and the mask's
  // nonzero too), the one inside for the recorder; the copy is seen on the inspected step only.
  CHECK(by_key[0].syncs == 3);
  CHECK(by_key[1].syncs == 3);
  CHECK(by_key[0].recorder_syncs == 1);
  CHECK(by_key[0].copies_h2d == 1);
  CHECK(by_key[0].bytes_h2d == 4 * 4);
  CHECK(by_key[0].ops > 15);
  CHECK(by_key[1].copies_h2d == 0);
  CHECK(by_key[1].ops == by_key[0].ops);
}

TEST_CASE("dispatcher probe, mode key: the stepping thread's ops only, the key gone after") {
  const auto key = c10::DispatchKey::TESTING_ONLY_GenericMode;
  DispatcherOptions options;
  options.hook = probes::DispatchHook::kModeKey;
  DispatcherProbe probe(options);
  REQUIRE_MESSAGE(probe.available(), probe.availability().reason);
  CHECK(at::hasGlobalCallbacks() == false);  // no RecordFunction callback, ever
  probe.begin_step(0);
  CHECK(c10::impl::tls_is_dispatch_key_included(key));
  std::thread other([] { five_ops(3); });  // a thread the step did not start: not seen
  other.join();
  five_ops(3);
  DispatchStats d = probe.end_step();
  CHECK_FALSE(c10::impl::tls_is_dispatch_key_included(key));
  CHECK(d.ops == 5);
  CHECK(d.syncs == 1);
  five_ops(3);  // between steps: not seen
  probe.begin_step(1);
  d = probe.end_step();
  CHECK(d.ops == 0);

  SUBCASE("a step that never ended leaves no key behind when the next begins and ends") {
    probe.begin_step(2);
    probe.begin_step(3);
    five_ops(3);
    d = probe.end_step();
    CHECK(d.ops == 5);
    CHECK_FALSE(c10::impl::tls_is_dispatch_key_included(key));
  }
  SUBCASE("a second probe, of either hook, is refused while this one is active") {
    CHECK_FALSE(DispatcherProbe(DispatcherOptions{}).available());
    DispatcherOptions other;
    other.hook = probes::DispatchHook::kModeKey;
    CHECK_FALSE(DispatcherProbe(other).available());
    other.hook = probes::DispatchHook::kRecordFunction;
    CHECK_FALSE(DispatcherProbe(other).available());
  }
}

TEST_CASE("dispatcher probe, mode key: a probe that goes mid-step takes its key along") {
  const auto key = c10::DispatchKey::TESTING_ONLY_GenericMode;
  {
    DispatcherOptions options;
    options.hook = probes::DispatchHook::kModeKey;
    DispatcherProbe probe(options);
    REQUIRE(probe.available());
    probe.begin_step(0);
    CHECK(c10::impl::tls_is_dispatch_key_included(key));
  }
  CHECK_FALSE(c10::impl::tls_is_dispatch_key_included(key));
  CHECK(five_ops(3) == 18.0f);  // ops still run, with no probe
  // The fallback stays registered; with the key included by hand and no probe it passes ops on.
  c10::impl::tls_set_dispatch_key_included(key, true);
  const float value = five_ops(3);
  c10::impl::tls_set_dispatch_key_included(key, false);
  CHECK(value == 18.0f);
}

TEST_CASE("dispatcher probe: one per process; the observer goes with the probe") {
  {
    DispatcherProbe first;
    REQUIRE(first.available());
    DispatcherProbe second;
    CHECK_FALSE(second.available());
    CHECK(second.availability().reason.find("another dispatcher probe") != std::string::npos);
  }
  CHECK_FALSE(at::hasGlobalCallbacks());
  DispatcherProbe again;
  CHECK(again.available());
}

TEST_CASE("observer cost micro-benchmark: the 'on' rounds are observed (figures only, no timing)") {
  const probes::ObserverCost cost = probes::measure_observer_cost(20000, 3);
  MESSAGE("ns/op off " << cost.ns_per_op_off << ", on " << cost.ns_per_op_on
                       << ", on without signatures " << cost.ns_per_op_on_no_signatures);
  // Every add_ of every "on" round went through the observer (plus the few ops that make the
  // round's constant); the "off" rounds had no observer left behind.
  CHECK(cost.ops_observed_on >= 3 * 20000);
  CHECK(cost.ops_observed_on < 3 * 20000 + 3 * 100);
  CHECK(cost.ops_observed_on_no_signatures >= 3 * 20000);
  CHECK_FALSE(at::hasGlobalCallbacks());
}

TEST_CASE("comm probe cost micro-benchmark: the section it adds is measured (figures only)") {
  const probes::CommProbeCost cost = probes::measure_comm_probe_cost(20000, 3);
  MESSAGE("comm probe: " << cost.probe_ns << " ns per step, " << cost.write_ns << " ns to write "
                         << cost.line_bytes << " bytes");
  CHECK(cost.steps_per_round == 20000);
  CHECK(cost.rounds == 3);
  // ,"comm":{"collectives":1,"bytes":4096,"wait_ms":0.125}: what one step line gains.
  CHECK(cost.line_bytes == 54);
  CHECK(cost.probe_ns > 0.0);
}

// GPU only: skipped (and counted as skipped) without a CUDA LibTorch and a device.
TEST_CASE("GPU: CUPTI and dispatcher probes see kernels, copies and syncs on CUDA" *
          doctest::skip(!torch::cuda::is_available())) {
  auto cupti = probes::make_cupti_probe();
  MESSAGE("CUPTI: " << (cupti->available() ? "available" : cupti->availability().reason));
  // A build with CUPTI on a GPU machine must get it: unavailable here is a failure, not a skip.
  if (probes::cupti_built()) REQUIRE_MESSAGE(cupti->available(), cupti->availability().reason);
  DispatcherOptions options;
  options.expected_device = "cuda";
  DispatcherProbe dispatcher(options);
  REQUIRE(dispatcher.available());
  auto step = [&](int64_t n) {
    cupti->begin_step();
    dispatcher.begin_step(0);
    torch::Tensor host = torch::ones({n});        // host op: ones
    torch::Tensor dev = host.to(torch::kCUDA);    // h2d copy of n floats
    float value = (dev * 2).sum().item<float>();  // kernels, then a sync (d2h)
    CHECK(value == doctest::Approx(2.0 * static_cast<double>(n)));
    torch::cuda::synchronize();
    return std::make_pair(dispatcher.end_step(), cupti->end_step());
  };
  auto [d1, c1] = step(1024);
  CHECK(d1.copies_h2d == 1);
  CHECK(d1.bytes_h2d == 1024 * 4);
  CHECK(d1.syncs == 1);
  CHECK(d1.ops_cuda >= 3);  // mul, sum, item
  CHECK(d1.host_ops >= 1);  // ones on the host
  if (cupti->available()) {
    CHECK(c1.kernels >= 2);
    CHECK(c1.new_kernels >= 1);
    CHECK(c1.memcpy_h2d >= 1);
    CHECK(c1.bytes_h2d >= 1024 * 4);
    CHECK(c1.memcpy_d2h >= 1);
    auto [d2, c2] = step(1024);
    CHECK(d2.new_signatures == 0);
    CHECK(c2.new_kernels == 0);
    CHECK(c2.module_loads == 0);
    CHECK(c2.dropped == 0);
  }
}
