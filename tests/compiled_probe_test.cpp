// The torch.compile probe against the scopes dynamo opens, opened here by hand with the names
// dynamo gives them (function scope): what the probe counts does not depend on who opens them.
// The Python tests (python/tests/test_compiled.py) check the same against torch.compile itself.
#include "recompdiag/probes/compiled_probe.h"

#include <ATen/record_function.h>

#include <stdexcept>
#include <string>

#include "torch_doctest.h"

using namespace recompdiag;

namespace {

void scope(const std::string& name) {
  at::RecordFunction guard(at::RecordScope::FUNCTION);
  if (guard.isActive()) guard.before(name.c_str());
}
void lookup() { scope("TorchDynamo Cache Lookup"); }
void region(const std::string& id) { scope("Torch-Compiled Region: " + id); }

CompiledStats step(probes::CompiledProbe& probe, void (*body)()) {
  probe.begin_step({});
  body();
  StepRecord r;
  probe.end_step(r);
  REQUIRE(r.compiled.has_value());
  return *r.compiled;
}

}  // namespace

TEST_CASE("torch.compile probe: first-seen regions are compiles, later compiles recompiles") {
  probes::CompiledProbe probe;
  REQUIRE(probe.available());
  CompiledStats s = step(probe, [] {
    region("0/0");  // the first call compiles: no lookup before it
    lookup();
    region("1/0");
  });
  CHECK(s.lookups == 1);
  CHECK(s.region_runs == 2);
  CHECK(s.compiles == 2);
  CHECK(s.recompiles == 0);
  CHECK(s.eager_fallbacks == 0);

  s = step(probe, [] {
    lookup();
    region("0/0");
    lookup();
    region("1/1");  // a guard failed: frame 1's second compile
  });
  CHECK(s.compiles == 1);
  CHECK(s.recompiles == 1);
  CHECK(s.region_runs == 2);
  CHECK(probe.regions_seen() == 3);

  s = step(probe, [] {
    lookup();
    region("!0/0/0");  // compiled autograd's own id: first seen
    lookup();
    region("1/1");
  });
  CHECK(s.compiles == 1);
  CHECK(s.recompiles == 0);
}

TEST_CASE("torch.compile probe: a lookup no region follows is an eager fallback") {
  probes::CompiledProbe probe;
  CompiledStats s = step(probe, [] {
    lookup();
    region("0/0");
    lookup();  // frame 1 hit the recompile limit: it runs eagerly
    lookup();
    region("2/0");
    lookup();  // pending at step end
  });
  CHECK(s.lookups == 4);
  CHECK(s.eager_fallbacks == 2);
  CHECK(s.region_runs == 2);
  // Ops that are not dynamo's, including ones starting with "To", count nothing.
  s = step(probe, [] {
    scope("aten::add");
    scope("Torch-Compiled");
    scope("TorchDynamo Cache Lookup (no)");
  });
  CHECK(s.lookups == 0);
  CHECK(s.region_runs == 0);
}

TEST_CASE("torch.compile probe: compile time goes to the step it was added in; one probe counts") {
  probes::CompiledProbe probe;
  probe.begin_step({});
  probe.add_compile_time(12.5);
  probe.add_compile_time(0.5);
  StepRecord r;
  probe.end_step(r);
  CHECK(r.compiled->compile_ms == doctest::Approx(13.0));
  probes::CompiledProbe second;
  CHECK_FALSE(second.available());
  CHECK(second.availability().reason.find("another torch.compile probe") != std::string::npos);
  StepRecord none;
  second.begin_step({});
  second.end_step(none);
  CHECK_FALSE(none.compiled.has_value());
}

TEST_CASE("torch.compile probe: skipped steps count nothing; a compile turns it on mid-step") {
  probes::CompiledProbe probe(10);
  probe.begin_step({3, false});  // not a sampled step
  lookup();
  region("0/0");
  StepRecord skipped;
  probe.end_step(skipped);
  REQUIRE(skipped.compiled.has_value());
  CHECK_FALSE(skipped.compiled->sampled);
  CHECK(skipped.compiled->region_runs == 0);
  CHECK(probe.regions_seen() == 0);

  probe.begin_step({4, false});
  lookup();             // unseen: before the compile started
  probe.observe_now();  // dynamo starts compiling
  region("0/1");
  StepRecord compiled;
  probe.end_step(compiled);
  CHECK(compiled.compiled->sampled);
  CHECK(compiled.compiled->compiles == 1);
  CHECK(compiled.compiled->recompiles == 1);
  CHECK(compiled.compiled->eager_fallbacks == 0);

  probe.begin_step({5, true});  // the Monitor's fully observed steps after an event
  lookup();
  StepRecord observed;
  probe.end_step(observed);
  CHECK(observed.compiled->sampled);
  CHECK(observed.compiled->eager_fallbacks == 1);
}

TEST_CASE("torch.compile probe: the compile ledger adds counts, keeps levels, rejects other names") {
  probes::CompiledProbe probe;
  REQUIRE(probe.available());
  probe.begin_step({});
  probe.add_ledger("graph_breaks", 1);
  probe.add_ledger("graph_breaks", 2);
  probe.add_ledger("dynamo_ms", 1.5);
  probe.add_ledger("recompile_limit", 8);
  StepRecord first;
  probe.end_step(first);
  REQUIRE(first.compiled.has_value());
  CHECK(first.compiled->ledger);
  CHECK(first.compiled->graph_breaks == 3);
  CHECK(first.compiled->dynamo_ms == doctest::Approx(1.5));
  CHECK(first.compiled->recompile_limit == 8);

  StepRecord second = [&] {
    probe.begin_step({});
    StepRecord r;
    probe.end_step(r);
    return r;
  }();
  REQUIRE(second.compiled.has_value());
  CHECK(second.compiled->ledger);                 // measured: nothing compiled
  CHECK(second.compiled->graph_breaks == 0);      // counts start afresh
  CHECK(second.compiled->recompile_limit == 8);   // levels hold
  CHECK_THROWS_AS(probe.add_ledger("no_such_field", 1), std::invalid_argument);
  CHECK_THROWS_AS(probe.add_ledger("sampled", 1), std::invalid_argument);  // a flag is no ledger
  CHECK_THROWS_AS(probe.add_ledger("compiles", 1), std::invalid_argument);  // the probe's own

  // A compile between two steps: its counts go to the next step, not lost.
  probe.add_ledger("graph_breaks", 2);
  probe.begin_step({});
  StepRecord third;
  probe.end_step(third);
  REQUIRE(third.compiled.has_value());
  CHECK(third.compiled->graph_breaks == 2);
}
