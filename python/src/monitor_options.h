// The typed Python binding of probes::MonitorOptions (recompdiag._core.MonitorOptions).
#pragma once

#include <pybind11/pybind11.h>

#include "recompdiag/probes/monitor.h"

namespace recompdiag::python {

/// Adds `MonitorOptions` to the module: every field of probes::MonitorOptions a Python loop can
/// set, with the C++ defaults, and validate().
void bind_monitor_options(pybind11::module_& m);

}  // namespace recompdiag::python
