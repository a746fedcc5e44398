// The metrics factory of a build without prometheus-cpp: live metrics were asked for but cannot be
// served, which is the user's input to fix (install prometheus-cpp-dev and rebuild, or drop the
// flags), so it is an InputError before training starts rather than a silent no-op.

#include "recompdiag/core/error.h"
#include "recompdiag/reports/prometheus_exporter.h"

namespace recompdiag::reports {

namespace {

[[noreturn]] void refuse() {
  throw InputError(
      "--metrics-addr/--pushgateway: this recompdiag was built "
      "without the Prometheus exporter "
      "(prometheus-cpp not found at configure time; apt-get "
      "install prometheus-cpp-dev and "
      "rebuild)");
}

}  // namespace

bool prometheus_available() { return false; }

std::unique_ptr<RecordSink> make_metrics_sink(const MetricsOptions& options) {
  options.validate();
  if (!metrics_requested(options)) return nullptr;
  refuse();
}

// The exporter's class exists in this build too, for code that names it (the Python module): it
// cannot be made, so none of its other members is ever called.
struct PrometheusExporter::Impl {};

PrometheusExporter::PrometheusExporter(const MetricsOptions& options) {
  options.validate();
  refuse();
}
PrometheusExporter::~PrometheusExporter() = default;
void PrometheusExporter::on_run_start(const RunHeader&) {}
void PrometheusExporter::on_step(const StepRecord&) {}
void PrometheusExporter::on_event(const EventRecord&) {}
void PrometheusExporter::on_run_end(const RunSummary&) {}
int PrometheusExporter::bound_port() const { return 0; }
std::string PrometheusExporter::metrics_url() const { return ""; }
std::string PrometheusExporter::exposition() const { return ""; }

}  // namespace recompdiag::reports
