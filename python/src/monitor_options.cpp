// recompdiag._core.MonitorOptions: probes::MonitorOptions as a typed Python class. Its defaults are
// the C++ struct's own and its checks are MonitorOptions::validate(): the Python Monitor keeps no
// defaults or rules of its own.
#include "monitor_options.h"

#include <sstream>
#include <string>

#include "recompdiag/probes/dispatch_hook.h"

namespace py = pybind11;

namespace recompdiag::python {

void bind_monitor_options(py::module_& m) {
  using probes::MonitorOptions;
  py::class_<MonitorOptions>(
      m, "MonitorOptions",
      "What a Monitor observes, and how often: the C++ probes::MonitorOptions, with its defaults. "
      "validate() raises ValueError naming the first option that cannot work.")
      .def(py::init<>())
      .def_readwrite("expected_device", &MonitorOptions::expected_device,
                     "the device the model is meant to train on (\"cpu\", \"cuda\", \"cuda:1\")")
      .def_readwrite("dispatcher", &MonitorOptions::dispatcher, "observe ops (section dispatcher)")
      .def_readwrite("jit", &MonitorOptions::jit, "the TorchScript probe")
      .def_readwrite("optimizer", &MonitorOptions::optimizer, "the optimizer-state probe")
      .def_readwrite("placement", &MonitorOptions::placement, "where parameters and ops run")
      .def_readwrite("cupti", &MonitorOptions::cupti, "CUDA kernels (needs a GPU)")
      .def_readwrite("comm", &MonitorOptions::comm, "a data-parallel rank's collectives")
      .def_readwrite("memory", &MonitorOptions::memory, "resident and CUDA-allocator memory")
      .def_readwrite("compiled", &MonitorOptions::compiled, "torch.compile's work per step")
      .def_readwrite("nvtx", &MonitorOptions::nvtx, "NVTX ranges for run, phase and step")
      .def_readwrite("dispatcher_sample_every", &MonitorOptions::dispatcher_sample_every,
                     "observe ops every Nth step (and every step for a while after an event)")
      .def_readwrite("dispatcher_count_unsampled", &MonitorOptions::dispatcher_count_unsampled,
                     "count ops by name on the steps sampling skips")
      .def_property(
          "dispatcher_hook",
          [](const MonitorOptions& o) {
            return std::string(probes::dispatch_hook_name(o.dispatcher_hook));
          },
          [](MonitorOptions& o, const std::string& name) {
            o.dispatcher_hook = probes::parse_dispatch_hook(name, "dispatcher_hook");
          },
          "\"auto\" (the RecordFunction callback in Python), \"record-function\" or "
          "\"mode-key\"")
      .def_readwrite("dispatcher_full_steps_after_event",
                     &MonitorOptions::dispatcher_full_steps_after_event,
                     "steps observed in full at the start and after each compile or phase start")
      .def_readwrite("op_signatures", &MonitorOptions::op_signatures,
                     "hash first-seen op signatures (dispatcher cache misses)")
      .def_readwrite("log_alerts", &MonitorOptions::log_alerts, "write alert lines to stderr")
      .def_readwrite("max_queued_events", &MonitorOptions::max_queued_events)
      .def_readwrite("take_turns", &MonitorOptions::take_turns,
                     "take turns when `recompdiag ab` hands this process a turn channel")
      .def_readwrite("step_turns", &MonitorOptions::step_turns,
                     "whether the channel's every=N may set the turns")
      .def_property(
          "warmup_steps", [](const MonitorOptions& o) { return o.health.warmup_steps; },
          [](MonitorOptions& o, int64_t n) { o.health.warmup_steps = n; },
          "steps the health rules leave alone at the start")
      .def("validate", &MonitorOptions::validate)
      .def("__copy__", [](const MonitorOptions& o) { return o; })
      .def("__deepcopy__", [](const MonitorOptions& o, const py::dict&) { return o; })
      .def("__repr__", [](const MonitorOptions& o) {
        std::ostringstream s;
        s << "MonitorOptions(expected_device='" << o.expected_device
          << "', dispatcher=" << (o.dispatcher ? "True" : "False")
          << ", dispatcher_sample_every=" << o.dispatcher_sample_every << ", dispatcher_hook='"
          << probes::dispatch_hook_name(o.dispatcher_hook)
          << "', compiled=" << (o.compiled ? "True" : "False")
          << ", warmup_steps=" << o.health.warmup_steps << ", ...)";
        return s.str();
      });
}

}  // namespace recompdiag::python
