// The Prometheus exporter: the catalogue's families registered once, children resolved per run
// and per phase, so that on_step only bumps pointers it already holds. The probe sections' fields
// are served by iterating their tables (record_fields.h); the pull endpoint and the Pushgateway
// live in detail/.

#include "recompdiag/reports/prometheus_exporter.h"

#include <prometheus/text_serializer.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "detail/metric_catalogue.h"
#include "detail/pull_endpoint.h"
#include "detail/pushgateway.h"
#include "recompdiag/core/health.h"
#include "recompdiag/core/record_fields.h"

namespace recompdiag::reports {
namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;
using prometheus::Labels;

// Bounded label sets. Values past these caps fold into one "other" series instead of growing.
constexpr std::size_t kMaxHeads = 16;
constexpr std::size_t kMaxAlertRules = 32;
constexpr std::size_t kMaxProbes = 16;
constexpr std::size_t kMaxPhases = 64;

// Step durations are ~1-50 ms in the cases this tool studies; buckets are dense there so that
// histogram_quantile's p50/p95 interpolate within a few percent.
const Histogram::BucketBoundaries& step_buckets() {
  static const Histogram::BucketBoundaries buckets = {
      0.0005, 0.001, 0.0015, 0.002, 0.0025, 0.003, 0.004, 0.005, 0.006,
      0.0075, 0.01,  0.0125, 0.015, 0.02,   0.025, 0.03,  0.04,  0.05,
      0.075,  0.1,   0.15,   0.25,  0.5,    1.0,   2.5,   5.0,   10.0};
  return buckets;
}

Labels with(Labels labels, const std::string& name, const std::string& value) {
  labels[name] = value;
  return labels;
}

// The labels of a field's series: `base` plus the field's own label, if any.
Labels field_labels(const Labels& base, const MetricTarget& metric) {
  return metric.label != nullptr ? with(base, metric.label, metric.value) : base;
}

}  // namespace

struct PrometheusExporter::Impl {
  // Children of the per-step counters for one (run, phase): resolved once when a phase starts.
  struct PhaseSeries {
    Histogram* step_duration = nullptr;
    Counter* device_seconds = nullptr;
    Counter* steps = nullptr;
    std::vector<Counter*> fields;  // one per section field (flat, table order); null: no counter
  };

  // Children of one run that carry no phase label.
  struct RunSeries {
    Labels base;  // run, mode, device
    Gauge* phase = nullptr;
    Gauge* last_step = nullptr;
    Gauge* loss = nullptr;
    Gauge* lr = nullptr;
    Gauge* state_same_device = nullptr;  // derived: state tensors less those off device
    std::vector<Gauge*> fields;          // one per section field (flat, table order); null: none
    std::vector<Gauge*> head_loss;       // grows to the head count once, then fixed
    std::vector<Gauge*> loss_weight;     // same
    std::array<Counter*, std::size(kEventKinds)> events{};
    std::unordered_map<std::string, Counter*> alerts;  // rule -> child, at most kMaxAlertRules
    std::map<int, PhaseSeries> phases;
    PhaseSeries* current = nullptr;
    int current_phase = 0;
    Gauge* finished = nullptr;
    Gauge* elapsed = nullptr;
  };

  explicit Impl(const MetricsOptions& opts)
      : options(opts),
        registry(std::make_shared<prometheus::Registry>()),
        families(*registry),
        field_count(total_field_count()) {}

  std::ostream& warn() const { return options.warnings ? *options.warnings : std::cerr; }

  // Resolves, for every section field whose metric has kind `kind`, the child of its family under
  // `base` (flat, in table order; null for the other fields).
  template <class Child>
  std::vector<Child*> resolve_fields(MetricKind kind, const Labels& base) {
    std::vector<Child*> out(field_count, nullptr);
    std::size_t i = 0;
    for_each_section([&](const auto& section) {
      for (const auto& f : section) {
        if (f.metric.kind == kind) {
          if constexpr (std::is_same_v<Child, Counter>) {
            out[i] = &families.counter(f.metric.family).Add(field_labels(base, f.metric));
          } else {
            out[i] = &families.gauge(f.metric.family).Add(field_labels(base, f.metric));
          }
        }
        ++i;
      }
    });
    return out;
  }

  PhaseSeries& phase_series(int phase) {
    if (run.current && run.current_phase == phase) return *run.current;
    // Phases past the cap share one series so a runaway phase count cannot grow the registry.
    const int key = run.phases.size() >= kMaxPhases && !run.phases.count(phase) ? -1 : phase;
    auto [it, inserted] = run.phases.try_emplace(key);
    PhaseSeries& s = it->second;
    if (inserted) {
      const Labels l = with(run.base, "phase", key < 0 ? "other" : std::to_string(key));
      s.step_duration =
          &families.histogram("recompdiag_step_duration_seconds").Add(l, step_buckets());
      s.device_seconds = &families.counter("recompdiag_step_device_seconds_total").Add(l);
      s.steps = &families.counter("recompdiag_steps_total").Add(l);
      s.fields = resolve_fields<Counter>(MetricKind::kCounter, l);
    }
    run.current = &s;
    run.current_phase = phase;
    return s;
  }

  void resize_heads(std::vector<Gauge*>& children, Family<Gauge>& family, std::size_t n) {
    n = std::min(n, kMaxHeads);
    while (children.size() < n) {
      children.push_back(&family.Add(with(run.base, "head", std::to_string(children.size()))));
    }
  }

  Counter* alert_counter(const std::string& rule) {
    auto it = run.alerts.find(rule);
    if (it != run.alerts.end()) return it->second;
    const std::string label = run.alerts.size() < kMaxAlertRules ? rule : "other";
    Counter* c = &families.counter("recompdiag_alerts_total").Add(with(run.base, "rule", label));
    run.alerts.emplace(rule, c);
    return c;
  }

  // Adds each present section's counter fields to the phase's series and sets its gauge fields.
  // The field tables are constants, so each section's loop is unrolled at compile time into
  // direct member reads: this is the exporter's per-step path, and a run-time walk over the table
  // (a variant visit per field) cost twice as much.
  void record_sections(const StepRecord& step, PhaseSeries& s) {
    std::size_t offset = 0;
    for_each_section_constant([&](auto c) {
      constexpr const auto& section = decltype(c)::value;
      if (const auto* values = section.of(step)) {
        record_fields<decltype(c)>(*values, s.fields.data() + offset, run.fields.data() + offset,
                                   last_gauge.data() + offset,
                                   std::make_index_sequence<section.size>{});
      }
      offset += section.size;
    });
  }

  template <class C, class S, std::size_t... I>
  static void record_fields(const S& values, Counter* const* counters, Gauge* const* gauges,
                            double* last, std::index_sequence<I...> /*unused*/) {
    (record_field<C, I>(values, counters[I], gauges[I], last[I]), ...);
  }

  template <class C, std::size_t I, class S>
  static void record_field(const S& values, Counter* counter, Gauge* gauge, double& last) {
    constexpr const Field<S>& f = C::value.fields[I];
    if constexpr (f.metric.kind != MetricKind::kNone) {
      constexpr auto member = std::get<f.member.index()>(f.member);
      double v = static_cast<double>(values.*member);
      if constexpr (f.unit == FieldUnit::kMilliseconds) v *= 1e-3;
      if constexpr (f.metric.kind == MetricKind::kCounter) {
        // An atomic read-modify-write costs more than the branch.
        if (v > 0) counter->Increment(v);
      } else if (v != last) {
        // An unchanged level is not stored again: an atomic store to a line that scrapes read.
        last = v;
        gauge->Set(v);
      }
    }
  }

  MetricsOptions options;
  std::shared_ptr<prometheus::Registry> registry;
  reports::detail::MetricFamilies families;
  std::size_t field_count;
  std::vector<double> last_gauge;  // the value each gauge field last set (NaN: none this run)
  std::unique_ptr<reports::detail::PullEndpoint> endpoint;
  RunSeries run;
  int runs_ended = 0;
};

PrometheusExporter::PrometheusExporter(const MetricsOptions& options)
    : impl_(std::make_unique<Impl>(options)) {
  options.validate();
  if (options.listen_addr.empty()) return;
  impl_->endpoint = std::make_unique<reports::detail::PullEndpoint>(options, impl_->registry);
}

PrometheusExporter::~PrometheusExporter() {
  if (impl_->endpoint && impl_->runs_ended > 0 && impl_->options.hold_seconds > 0) {
    impl_->warn() << "metrics: serving final values at " << metrics_url() << " for "
                  << impl_->options.hold_seconds << " s (--metrics-hold)\n";
    std::this_thread::sleep_for(std::chrono::duration<double>(impl_->options.hold_seconds));
  }
}

void PrometheusExporter::on_run_start(const RunHeader& header) {
  Impl& m = *impl_;
  auto& f = m.families;
  m.run = Impl::RunSeries{};
  // The ranks of a data-parallel job are one run (its job id), told apart by `rank`: a label
  // bounded by the world size (at most kMaxWorldSize values), 0 for a single process.
  const std::string run = !m.options.run_label.empty() ? m.options.run_label
                          : !header.job_id.empty()     ? header.job_id
                          : !header.start_time.empty() ? header.start_time
                                                       : "unnamed";
  m.run.base = {{"run", run},
                {"mode", header.mode.empty() ? "unknown" : header.mode},
                {"device", header.device_used.empty() ? "unknown" : header.device_used},
                {"rank", std::to_string(header.rank)}};
  const Labels& b = m.run.base;
  f.gauge("recompdiag_run_info")
      .Add(with(with(with(b, "optimizer_handoff", header.optimizer_handoff), "tool_version",
                     header.tool_version),
                "torch_version", header.torch_version))
      .Set(1);
  m.run.phase = &f.gauge("recompdiag_phase").Add(b);
  m.run.last_step = &f.gauge("recompdiag_last_step").Add(b);
  m.run.loss = &f.gauge("recompdiag_loss").Add(b);
  m.run.lr = &f.gauge("recompdiag_learning_rate").Add(b);
  m.run.state_same_device =
      &f.gauge("recompdiag_optimizer_state_tensors").Add(with(b, "location", "same_device"));
  m.run.fields = m.resolve_fields<Gauge>(MetricKind::kGauge, b);
  m.last_gauge.assign(m.field_count, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t k = 0; k < std::size(kEventKinds); ++k) {
    m.run.events[k] =
        &f.counter("recompdiag_events_total").Add(with(b, "kind", to_string(kEventKinds[k])));
  }
  // Every rule's alert counter is served at 0 from the start (Prometheus practice for known label
  // values), so the dashboard's alert panels have data on a healthy run.
  for (const char* rule : rules::kAll) m.alert_counter(rule);
  m.run.finished = &f.gauge("recompdiag_run_finished").Add(b);
  m.run.finished->Set(0);
  m.run.elapsed = &f.gauge("recompdiag_run_elapsed_seconds").Add(b);

  std::size_t probes = 0;
  const auto set_probe = [&](const std::string& name, bool available) {
    if (probes++ >= kMaxProbes) return;
    f.gauge("recompdiag_probe_available").Add(with(b, "probe", name)).Set(available ? 1 : 0);
  };
  if (header.probes.is_object()) {
    for (const auto& [name, value] : header.probes.items()) {
      const bool available = value.is_object() && value.value("available", false) == true;
      set_probe(name, available);
    }
  }
  if (!header.probes.is_object() || !header.probes.contains(sections::kCupti)) {
    set_probe(sections::kCupti, header.cupti.available);
  }
  // Resolve phase 1 now so the first step pays nothing extra and the series exist from the start.
  m.phase_series(1);
}

void PrometheusExporter::on_step(const StepRecord& step) {
  Impl& m = *impl_;
  if (!m.run.phase) return;  // no on_run_start: nothing to label the step with
  Impl::PhaseSeries& s = m.phase_series(step.phase);
  Impl::RunSeries& r = m.run;

  s.step_duration->Observe(step.wall_ms * 1e-3);
  s.steps->Increment();
  if (step.device_ms) s.device_seconds->Increment(*step.device_ms * 1e-3);
  r.phase->Set(step.phase);
  r.last_step->Set(static_cast<double>(step.step));
  r.loss->Set(step.loss);
  r.lr->Set(step.lr);

  if (step.head_losses.size() > r.head_loss.size()) {
    m.resize_heads(r.head_loss, m.families.gauge("recompdiag_head_loss"), step.head_losses.size());
  }
  for (std::size_t i = 0; i < r.head_loss.size() && i < step.head_losses.size(); ++i) {
    r.head_loss[i]->Set(step.head_losses[i]);
  }
  if (step.loss_weights.size() > r.loss_weight.size()) {
    m.resize_heads(r.loss_weight, m.families.gauge("recompdiag_loss_weight"),
                   step.loss_weights.size());
  }
  for (std::size_t i = 0; i < r.loss_weight.size() && i < step.loss_weights.size(); ++i) {
    r.loss_weight[i]->Set(step.loss_weights[i]);
  }

  m.record_sections(step, s);
  if (step.optimizer) {
    r.state_same_device->Set(
        static_cast<double>(step.optimizer->state_tensors - step.optimizer->state_off_device));
  }
  for (const std::string& rule : step.alerts) m.alert_counter(rule)->Increment();
}

void PrometheusExporter::on_event(const EventRecord& event) {
  Impl& m = *impl_;
  if (!m.run.phase) return;
  for (std::size_t k = 0; k < std::size(kEventKinds); ++k) {
    if (kEventKinds[k] == event.kind) m.run.events[k]->Increment();
  }
  if (event.kind == EventKind::kPhaseStart) {
    // Move the phase gauge at the switch itself, before the new phase's first step, and resolve the
    // new phase's children off the step path.
    m.run.phase->Set(event.phase);
    m.phase_series(event.phase);
  }
}

void PrometheusExporter::on_run_end(const RunSummary& summary) {
  Impl& m = *impl_;
  ++m.runs_ended;
  if (m.run.phase) {
    m.run.finished->Set(1);
    m.run.elapsed->Set(summary.elapsed_s);
  }
  if (!m.options.pushgateway_url.empty()) {
    try {
      reports::detail::push_to_gateway(m.registry, m.options, m.warn());
    } catch (const std::exception& e) {
      m.warn() << "warning: pushgateway " << m.options.pushgateway_url << ": " << e.what()
               << "; metrics not pushed\n";
    }
  }
}

int PrometheusExporter::bound_port() const { return impl_->endpoint ? impl_->endpoint->port() : 0; }

std::string PrometheusExporter::metrics_url() const {
  return impl_->endpoint ? impl_->endpoint->url() : std::string();
}

std::string PrometheusExporter::exposition() const {
  return prometheus::TextSerializer().Serialize(impl_->registry->Collect());
}

bool prometheus_available() { return true; }

std::unique_ptr<RecordSink> make_metrics_sink(const MetricsOptions& options) {
  options.validate();
  if (!metrics_requested(options)) return nullptr;
  return std::make_unique<PrometheusExporter>(options);
}

}  // namespace recompdiag::reports
