// The default hook where another library holds the mode key's dispatch key: this executable
// registers a fallback of its own on TESTING_ONLY_GenericMode before any probe exists (a process
// of its own, since the probe's registration is once per process). A Monitor on the default hook
// then observes through the RecordFunction callback; one that asks for the mode key by name
// reports why it cannot.
#include <torch/library.h>

#include <string>

#include "recompdiag/probes/dispatcher_probe.h"
#include "recompdiag/probes/monitor.h"
#include "torch_doctest.h"

using namespace recompdiag;

namespace {

void pass_on(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
  op.redispatchBoxed(keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER,
                                                c10::DispatchKey::TESTING_ONLY_GenericMode),
                     stack);
}

}  // namespace

TORCH_LIBRARY_IMPL(_, TESTING_ONLY_GenericMode, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&pass_on>());
}

TEST_CASE("monitor: the default hook falls back to the callback when the mode key is taken") {
  torch::nn::Linear model(4, 2);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.1));
  probes::MonitorOptions options;
  options.log_alerts = false;
  {
    probes::MonitorOptions keyed = options;
    keyed.dispatcher_hook = probes::DispatchHook::kModeKey;
    const probes::Monitor refused(*model, sgd, keyed);
    CHECK_FALSE(refused.dispatcher_hook().has_value());
    const std::string why = refused.probe_availability()[sections::kDispatch]["reason"];
    CHECK(why.find("mode key") != std::string::npos);
  }
  probes::Monitor monitor(*model, sgd, options);
  REQUIRE(monitor.dispatcher_hook() == probes::DispatchHook::kRecordFunction);
  StepRecord record;
  monitor.begin_step(0);
  model->forward(torch::ones({3, 4})).sum().backward();
  sgd.step();
  monitor.end_step(record);
  REQUIRE(record.dispatch.has_value());
  CHECK(record.dispatch->ops > 0);
  RunHeader header;
  monitor.describe(header);
  CHECK_FALSE(header.config.contains("dispatch_hook"));  // the callback's runs name no hook
}
