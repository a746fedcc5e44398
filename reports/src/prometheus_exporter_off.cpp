// The metrics factory of a build without prometheus-cpp: live metrics were asked for but cannot be
// served, which is the user's input to fix (install prometheus-cpp-dev and rebuild, or drop the
// flags), so it is an InputError before training starts rather than a silent no-op.

#include "recompdiag/core/error.h"
#include "recompdiag/reports/prometheus_exporter.h"

namespace recompdiag::reports {

bool prometheus_available() { return false; }

std::unique_ptr<RecordSink> make_metrics_sink(const MetricsOptions& options) {
  validate(options);
  if (!metrics_requested(options)) return nullptr;
  throw InputError(
      "--metrics-addr/--pushgateway: this recompdiag was built "
      "without the Prometheus exporter "
      "(prometheus-cpp not found at configure time; apt-get "
      "install prometheus-cpp-dev and "
      "rebuild)");
}

}  // namespace recompdiag::reports
