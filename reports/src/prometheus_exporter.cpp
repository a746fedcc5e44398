// The Prometheus exporter: prometheus-cpp families built once, children resolved per run and per
// phase, so that on_step only bumps pointers it already holds.

#include "recompdiag/reports/prometheus_exporter.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gateway.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "recompdiag/core/error.h"
#include "recompdiag/core/health.h"

namespace recompdiag {
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

enum Direction { kH2D, kD2H, kD2D, kDirections };
constexpr std::array<const char*, kDirections> kDirectionNames = {"h2d", "d2h", "d2d"};

enum CompileKind { kJitCompile, kPlanBuild, kProfilingRun, kGraphInstantiation, kCompileKinds };
constexpr std::array<const char*, kCompileKinds> kCompileKindNames = {
    "jit_compile", "plan_build", "profiling_run", "cuda_graph_instantiation"};

enum MissKind { kDispatcherSignature, kKernelModuleLoad, kNewKernel, kMissKinds };
constexpr std::array<const char*, kMissKinds> kMissKindNames = {"dispatcher_signature",
                                                                "kernel_module_load", "new_kernel"};

enum SyncSource { kSyncDispatcher, kSyncRecorder, kSyncCupti, kSyncSources };
constexpr std::array<const char*, kSyncSources> kSyncSourceNames = {sections::kDispatch, "recorder",
                                                                    sections::kCupti};

enum DropProbe { kDropDispatcher, kDropCupti, kDropProbes };
constexpr std::array<const char*, kDropProbes> kDropProbeNames = {sections::kDispatch,
                                                                  sections::kCupti};

enum OffDeviceKind { kParams, kGrads, kBuffers, kOffDeviceKinds };
constexpr std::array<const char*, kOffDeviceKinds> kOffDeviceNames = {"parameter", "gradient",
                                                                      "buffer"};

constexpr std::array<EventKind, 7> kEventKinds = {EventKind::kPhaseStart,
                                                  EventKind::kCompile,
                                                  EventKind::kLrChange,
                                                  EventKind::kLossWeightsChange,
                                                  EventKind::kOptimizerRebuild,
                                                  EventKind::kAlert,
                                                  EventKind::kNote};

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

// Adds `value` when non-zero: an atomic read-modify-write costs more than the branch.
inline void add(Counter* counter, int64_t value) {
  if (value > 0) counter->Increment(static_cast<double>(value));
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// Opens and closes a connection to host:port, ignoring failure.
void knock(const std::string& host, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  // A wildcard listener is reached through loopback.
  ::inet_pton(AF_INET, host == "0.0.0.0" ? "127.0.0.1" : host.c_str(), &sa.sin_addr);
  ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  ::close(fd);
}

}  // namespace

struct PrometheusExporter::Impl {
  // Every family of the exporter, registered once so HELP and TYPE are served from the start.
  struct Families {
    explicit Families(prometheus::Registry& r)
        : run_info(prometheus::BuildGauge()
                       .Name("recompdiag_run_info")
                       .Help("Constant 1 per run; labels describe the run")
                       .Register(r)),
          step_duration(prometheus::BuildHistogram()
                            .Name("recompdiag_step_duration_seconds")
                            .Help("Wall time of a training step, device work included on CUDA")
                            .Register(r)),
          device_seconds(prometheus::BuildCounter()
                             .Name("recompdiag_step_device_seconds_total")
                             .Help("Device time of training steps (CUDA events), when measured")
                             .Register(r)),
          steps(prometheus::BuildCounter()
                    .Name("recompdiag_steps_total")
                    .Help("Training steps completed")
                    .Register(r)),
          phase(prometheus::BuildGauge()
                    .Name("recompdiag_phase")
                    .Help("Training phase of the latest step (from 1); a change is a phase switch")
                    .Register(r)),
          last_step(prometheus::BuildGauge()
                        .Name("recompdiag_last_step")
                        .Help("Global index of the latest step (from 0)")
                        .Register(r)),
          compile_events(prometheus::BuildCounter()
                             .Name("recompdiag_compile_events_total")
                             .Help("Compilations seen by the probes, by kind (TorchScript compile, "
                                   "executor plan build, profiling run, CUDA graph instantiation)")
                             .Register(r)),
          cache_misses(prometheus::BuildCounter()
                           .Name("recompdiag_cache_misses_total")
                           .Help("Cache misses by kind (first-seen dispatcher signature, GPU "
                                 "module load, first-seen kernel)")
                           .Register(r)),
          ops(prometheus::BuildCounter()
                  .Name("recompdiag_dispatched_ops_total")
                  .Help("Top-level ATen ops dispatched, by the device type of their tensors")
                  .Register(r)),
          host_ops(prometheus::BuildCounter()
                       .Name("recompdiag_host_ops_total")
                       .Help("Ops run on the host while the expected device is CUDA")
                       .Register(r)),
          copies(prometheus::BuildCounter()
                     .Name("recompdiag_cross_device_copies_total")
                     .Help("Cross-device tensor copies seen by the dispatcher, by direction")
                     .Register(r)),
          copy_bytes(prometheus::BuildCounter()
                         .Name("recompdiag_cross_device_copy_bytes_total")
                         .Help("Bytes of cross-device tensor copies, by direction")
                         .Register(r)),
          memcpys(prometheus::BuildCounter()
                      .Name("recompdiag_cuda_memcpy_total")
                      .Help("CUDA memcpy activities seen by CUPTI, by direction")
                      .Register(r)),
          memcpy_bytes(prometheus::BuildCounter()
                           .Name("recompdiag_cuda_memcpy_bytes_total")
                           .Help("Bytes of CUDA memcpy activities, by direction")
                           .Register(r)),
          syncs(prometheus::BuildCounter()
                    .Name("recompdiag_syncs_total")
                    .Help("Host-device synchronizations, by who saw them (dispatcher: the model's; "
                          "recorder: recompdiag's own loss reads; cupti: CUDA API)")
                    .Register(r)),
          kernels(prometheus::BuildCounter()
                      .Name("recompdiag_kernels_total")
                      .Help("GPU kernels launched (CUPTI)")
                      .Register(r)),
          kernel_seconds(prometheus::BuildCounter()
                             .Name("recompdiag_kernel_seconds_total")
                             .Help("Sum of GPU kernel durations (CUPTI)")
                             .Register(r)),
          dropped(prometheus::BuildCounter()
                      .Name("recompdiag_dropped_probe_records_total")
                      .Help("Probe records lost because a buffer was full, by probe")
                      .Register(r)),
          state_resets(prometheus::BuildCounter()
                           .Name("recompdiag_optimizer_state_resets_total")
                           .Help("Steps where an optimizer step counter fell (state rebuilt)")
                           .Register(r)),
          optimizer_state(prometheus::BuildGauge()
                              .Name("recompdiag_optimizer_state_tensors")
                              .Help("Optimizer state tensors, by location relative to their "
                                    "parameter (same_device or off_device)")
                              .Register(r)),
          optimizer_state_bytes(prometheus::BuildGauge()
                                    .Name("recompdiag_optimizer_state_bytes")
                                    .Help("Bytes of optimizer state")
                                    .Register(r)),
          optimizer_state_missing(prometheus::BuildGauge()
                                      .Name("recompdiag_optimizer_state_missing_params")
                                      .Help("Parameters with a gradient but no optimizer state")
                                      .Register(r)),
          optimizer_dtype_mismatch(
              prometheus::BuildGauge()
                  .Name("recompdiag_optimizer_state_dtype_mismatch_tensors")
                  .Help("Optimizer state tensors whose dtype differs from their parameter's")
                  .Register(r)),
          off_device(prometheus::BuildGauge()
                         .Name("recompdiag_tensors_off_device")
                         .Help("Model tensors not on the expected device, by kind")
                         .Register(r)),
          alerts(prometheus::BuildCounter()
                     .Name("recompdiag_alerts_total")
                     .Help("Health alerts raised, by rule")
                     .Register(r)),
          events(prometheus::BuildCounter()
                     .Name("recompdiag_events_total")
                     .Help("Run events (phase_start, compile, lr_change, ...), by kind")
                     .Register(r)),
          loss(prometheus::BuildGauge()
                   .Name("recompdiag_loss")
                   .Help("Total weighted loss of the latest step")
                   .Register(r)),
          head_loss(prometheus::BuildGauge()
                        .Name("recompdiag_head_loss")
                        .Help("Unweighted loss of the latest step, by head index")
                        .Register(r)),
          loss_weight(prometheus::BuildGauge()
                          .Name("recompdiag_loss_weight")
                          .Help("Loss weight in effect, by head index")
                          .Register(r)),
          lr(prometheus::BuildGauge()
                 .Name("recompdiag_learning_rate")
                 .Help("Learning rate in effect in the optimizer at the latest step")
                 .Register(r)),
          lr_requested(prometheus::BuildGauge()
                           .Name("recompdiag_learning_rate_requested")
                           .Help("Learning rate the trainer asked for at the latest step")
                           .Register(r)),
          probe_available(prometheus::BuildGauge()
                              .Name("recompdiag_probe_available")
                              .Help("1 when a probe runs, 0 when it is unavailable (reason in the "
                                    "run file header)")
                              .Register(r)),
          run_finished(prometheus::BuildGauge()
                           .Name("recompdiag_run_finished")
                           .Help("1 once the run has ended, else 0")
                           .Register(r)),
          run_elapsed(prometheus::BuildGauge()
                          .Name("recompdiag_run_elapsed_seconds")
                          .Help("Wall time of the whole run, set at run end")
                          .Register(r)) {}

    Family<Gauge>& run_info;
    Family<Histogram>& step_duration;
    Family<Counter>& device_seconds;
    Family<Counter>& steps;
    Family<Gauge>& phase;
    Family<Gauge>& last_step;
    Family<Counter>& compile_events;
    Family<Counter>& cache_misses;
    Family<Counter>& ops;
    Family<Counter>& host_ops;
    Family<Counter>& copies;
    Family<Counter>& copy_bytes;
    Family<Counter>& memcpys;
    Family<Counter>& memcpy_bytes;
    Family<Counter>& syncs;
    Family<Counter>& kernels;
    Family<Counter>& kernel_seconds;
    Family<Counter>& dropped;
    Family<Counter>& state_resets;
    Family<Gauge>& optimizer_state;
    Family<Gauge>& optimizer_state_bytes;
    Family<Gauge>& optimizer_state_missing;
    Family<Gauge>& optimizer_dtype_mismatch;
    Family<Gauge>& off_device;
    Family<Counter>& alerts;
    Family<Counter>& events;
    Family<Gauge>& loss;
    Family<Gauge>& head_loss;
    Family<Gauge>& loss_weight;
    Family<Gauge>& lr;
    Family<Gauge>& lr_requested;
    Family<Gauge>& probe_available;
    Family<Gauge>& run_finished;
    Family<Gauge>& run_elapsed;
  };

  // Children of the per-step counters for one (run, phase): resolved once when a phase starts.
  struct PhaseSeries {
    Histogram* step_duration = nullptr;
    Counter* device_seconds = nullptr;
    Counter* steps = nullptr;
    std::array<Counter*, kCompileKinds> compile{};
    std::array<Counter*, kMissKinds> misses{};
    Counter* ops_cpu = nullptr;
    Counter* ops_cuda = nullptr;
    Counter* host_ops = nullptr;
    std::array<Counter*, kDirections> copies{};
    std::array<Counter*, kDirections> copy_bytes{};
    std::array<Counter*, kDirections> memcpys{};
    std::array<Counter*, kDirections> memcpy_bytes{};
    std::array<Counter*, kSyncSources> syncs{};
    Counter* kernels = nullptr;
    Counter* kernel_seconds = nullptr;
    std::array<Counter*, kDropProbes> dropped{};
    Counter* state_resets = nullptr;
  };

  // Children of one run that carry no phase label.
  struct RunSeries {
    Labels base;  // run, mode, device
    Gauge* phase = nullptr;
    Gauge* last_step = nullptr;
    Gauge* loss = nullptr;
    Gauge* lr = nullptr;
    Gauge* lr_requested = nullptr;
    Gauge* state_same_device = nullptr;
    Gauge* state_off_device = nullptr;
    Gauge* state_bytes = nullptr;
    Gauge* state_missing = nullptr;
    Gauge* dtype_mismatch = nullptr;
    std::array<Gauge*, kOffDeviceKinds> off_device{};
    std::vector<Gauge*> head_loss;    // grows to the head count once, then fixed
    std::vector<Gauge*> loss_weight;  // same
    std::array<Counter*, kEventKinds.size()> events{};
    std::unordered_map<std::string, Counter*> alerts;  // rule -> child, at most kMaxAlertRules
    std::map<int, PhaseSeries> phases;
    PhaseSeries* current = nullptr;
    int current_phase = 0;
    Gauge* finished = nullptr;
    Gauge* elapsed = nullptr;
  };

  explicit Impl(const MetricsOptions& opts)
      : options(opts), registry(std::make_shared<prometheus::Registry>()), families(*registry) {}

  std::ostream& warn() const { return options.warnings ? *options.warnings : std::cerr; }

  PhaseSeries& phase_series(int phase) {
    if (run.current && run.current_phase == phase) return *run.current;
    // Phases past the cap share one series so a runaway phase count cannot grow the registry.
    const int key = run.phases.size() >= kMaxPhases && !run.phases.count(phase) ? -1 : phase;
    auto [it, inserted] = run.phases.try_emplace(key);
    PhaseSeries& s = it->second;
    if (inserted) {
      const Labels l = with(run.base, "phase", key < 0 ? "other" : std::to_string(key));
      auto& f = families;
      s.step_duration = &f.step_duration.Add(l, step_buckets());
      s.device_seconds = &f.device_seconds.Add(l);
      s.steps = &f.steps.Add(l);
      for (int k = 0; k < kCompileKinds; ++k) {
        s.compile[k] = &f.compile_events.Add(with(l, "kind", kCompileKindNames[k]));
      }
      for (int k = 0; k < kMissKinds; ++k) {
        s.misses[k] = &f.cache_misses.Add(with(l, "kind", kMissKindNames[k]));
      }
      s.ops_cpu = &f.ops.Add(with(l, "target", "cpu"));
      s.ops_cuda = &f.ops.Add(with(l, "target", "cuda"));
      s.host_ops = &f.host_ops.Add(l);
      for (int d = 0; d < kDirections; ++d) {
        const Labels ld = with(l, "direction", kDirectionNames[d]);
        s.copies[d] = &f.copies.Add(ld);
        s.copy_bytes[d] = &f.copy_bytes.Add(ld);
        s.memcpys[d] = &f.memcpys.Add(ld);
        s.memcpy_bytes[d] = &f.memcpy_bytes.Add(ld);
      }
      for (int k = 0; k < kSyncSources; ++k) {
        s.syncs[k] = &f.syncs.Add(with(l, "source", kSyncSourceNames[k]));
      }
      s.kernels = &f.kernels.Add(l);
      s.kernel_seconds = &f.kernel_seconds.Add(l);
      for (int k = 0; k < kDropProbes; ++k) {
        s.dropped[k] = &f.dropped.Add(with(l, "probe", kDropProbeNames[k]));
      }
      s.state_resets = &f.state_resets.Add(l);
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
    Counter* c = &families.alerts.Add(with(run.base, "rule", label));
    run.alerts.emplace(rule, c);
    return c;
  }

  void push() {
    const PushgatewayAddress gw = parse_pushgateway_url(options.pushgateway_url);
    // The push runs on its own thread with shared ownership, so a gateway that never answers costs
    // the run at most push_timeout_seconds; the thread is then left to finish on its own.
    auto gateway = std::make_shared<prometheus::Gateway>(
        gw.scheme_host, std::to_string(gw.port), options.push_job,
        Labels{{"instance", host_name() + ":" + std::to_string(::getpid())}});
    gateway->RegisterCollectable(registry);
    std::packaged_task<int()> task([gateway, keep = registry] {
      try {
        return gateway->Push();
      } catch (...) {
        return -1;
      }
    });
    auto result = task.get_future();
    std::thread(std::move(task)).detach();
    const auto timeout = std::chrono::duration<double>(options.push_timeout_seconds);
    if (result.wait_for(timeout) != std::future_status::ready) {
      warn() << "warning: pushgateway " << options.pushgateway_url << " did not answer within "
             << options.push_timeout_seconds << " s; metrics not pushed\n";
      return;
    }
    const int code = result.get();
    if (code < 200 || code >= 300) {
      warn() << "warning: pushgateway " << options.pushgateway_url << ": push failed ("
             << (code < 0 ? "unreachable, curl error " + std::to_string(-code)
                          : "HTTP " + std::to_string(code))
             << "); metrics not pushed\n";
    }
  }

  MetricsOptions options;
  std::shared_ptr<prometheus::Registry> registry;
  Families families;
  std::unique_ptr<prometheus::Exposer> exposer;
  ListenAddress listen;
  int port = 0;
  RunSeries run;
  int runs_ended = 0;
};

PrometheusExporter::PrometheusExporter(const MetricsOptions& options)
    : impl_(std::make_unique<Impl>(options)) {
  validate(options);
  if (options.listen_addr.empty()) return;
  impl_->listen = parse_listen_address(options.listen_addr);
  const std::string bind = impl_->listen.host + ":" + std::to_string(impl_->listen.port);
  try {
    impl_->exposer =
        std::make_unique<prometheus::Exposer>(bind, static_cast<std::size_t>(options.http_threads));
  } catch (const std::exception&) {
    // civetweb's exception does not say why; a plain bind gets the kernel's reason.
    check_listen_address_free(options);
    throw InputError("--metrics-addr " + options.listen_addr + ": cannot listen on " + bind +
                     ": the HTTP server did not start");
  }
  const auto ports = impl_->exposer->GetListeningPorts();
  impl_->port = ports.empty() ? impl_->listen.port : ports.front();
  impl_->exposer->RegisterCollectable(impl_->registry);
}

PrometheusExporter::~PrometheusExporter() {
  if (impl_->exposer && impl_->runs_ended > 0 && impl_->options.hold_seconds > 0) {
    impl_->warn() << "metrics: serving final values at " << metrics_url() << " for "
                  << impl_->options.hold_seconds << " s (--metrics-hold)\n";
    std::this_thread::sleep_for(std::chrono::duration<double>(impl_->options.hold_seconds));
  }
  if (!impl_->exposer) return;
  // civetweb's stop waits for its accept loop, which polls with a 2 s timeout; a connection wakes
  // it at once. Knock every 20 ms until the server is gone, so a run's end does not wait 2 s.
  std::atomic<bool> stopped{false};
  std::thread knocker([&stopped, addr = impl_->listen, port = impl_->port] {
    while (!stopped) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (!stopped) knock(addr.host, port);
    }
  });
  impl_->exposer.reset();
  stopped = true;
  knocker.join();
}

void PrometheusExporter::on_run_start(const RunHeader& header) {
  Impl& m = *impl_;
  auto& f = m.families;
  m.run = Impl::RunSeries{};
  const std::string run = !m.options.run_label.empty() ? m.options.run_label
                          : !header.start_time.empty() ? header.start_time
                                                       : "unnamed";
  m.run.base = {{"run", run},
                {"mode", header.mode.empty() ? "unknown" : header.mode},
                {"device", header.device_used.empty() ? "unknown" : header.device_used}};
  const Labels& b = m.run.base;
  f.run_info
      .Add(with(with(with(b, "optimizer_handoff", header.optimizer_handoff), "tool_version",
                     header.tool_version),
                "torch_version", header.torch_version))
      .Set(1);
  m.run.phase = &f.phase.Add(b);
  m.run.last_step = &f.last_step.Add(b);
  m.run.loss = &f.loss.Add(b);
  m.run.lr = &f.lr.Add(b);
  m.run.lr_requested = &f.lr_requested.Add(b);
  m.run.state_same_device = &f.optimizer_state.Add(with(b, "location", "same_device"));
  m.run.state_off_device = &f.optimizer_state.Add(with(b, "location", "off_device"));
  m.run.state_bytes = &f.optimizer_state_bytes.Add(b);
  m.run.state_missing = &f.optimizer_state_missing.Add(b);
  m.run.dtype_mismatch = &f.optimizer_dtype_mismatch.Add(b);
  for (int k = 0; k < kOffDeviceKinds; ++k) {
    m.run.off_device[k] = &f.off_device.Add(with(b, "kind", kOffDeviceNames[k]));
  }
  for (std::size_t k = 0; k < kEventKinds.size(); ++k) {
    m.run.events[k] = &f.events.Add(with(b, "kind", to_string(kEventKinds[k])));
  }
  // Every rule's alert counter is served at 0 from the start (Prometheus practice for known label
  // values), so the dashboard's alert panels have data on a healthy run.
  for (const char* rule : rules::kAll) m.alert_counter(rule);
  m.run.finished = &f.run_finished.Add(b);
  m.run.finished->Set(0);
  m.run.elapsed = &f.run_elapsed.Add(b);

  std::size_t probes = 0;
  const auto set_probe = [&](const std::string& name, bool available) {
    if (probes++ >= kMaxProbes) return;
    f.probe_available.Add(with(b, "probe", name)).Set(available ? 1 : 0);
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
    m.resize_heads(r.head_loss, m.families.head_loss, step.head_losses.size());
  }
  for (std::size_t i = 0; i < r.head_loss.size() && i < step.head_losses.size(); ++i) {
    r.head_loss[i]->Set(step.head_losses[i]);
  }
  if (step.loss_weights.size() > r.loss_weight.size()) {
    m.resize_heads(r.loss_weight, m.families.loss_weight, step.loss_weights.size());
  }
  for (std::size_t i = 0; i < r.loss_weight.size() && i < step.loss_weights.size(); ++i) {
    r.loss_weight[i]->Set(step.loss_weights[i]);
  }

  if (step.dispatch && step.dispatch->sampled) {
    const DispatchStats& d = *step.dispatch;
    add(s.ops_cpu, d.ops_cpu);
    add(s.ops_cuda, d.ops_cuda);
    add(s.host_ops, d.host_ops);
    add(s.copies[kH2D], d.copies_h2d);
    add(s.copies[kD2H], d.copies_d2h);
    add(s.copies[kD2D], d.copies_d2d);
    add(s.copy_bytes[kH2D], d.bytes_h2d);
    add(s.copy_bytes[kD2H], d.bytes_d2h);
    add(s.copy_bytes[kD2D], d.bytes_d2d);
    add(s.syncs[kSyncDispatcher], d.syncs);
    add(s.syncs[kSyncRecorder], d.recorder_syncs);
    add(s.misses[kDispatcherSignature], d.new_signatures);
    add(s.dropped[kDropDispatcher], d.dropped);
  }
  if (step.jit) {
    add(s.compile[kJitCompile], step.jit->compiles);
    add(s.compile[kPlanBuild], step.jit->plan_builds);
    add(s.compile[kProfilingRun], step.jit->profiling_runs);
  }
  if (step.cupti) {
    const CuptiStats& c = *step.cupti;
    add(s.compile[kGraphInstantiation], c.graph_instantiations);
    add(s.misses[kKernelModuleLoad], c.module_loads);
    add(s.misses[kNewKernel], c.new_kernels);
    add(s.memcpys[kH2D], c.memcpy_h2d);
    add(s.memcpys[kD2H], c.memcpy_d2h);
    add(s.memcpys[kD2D], c.memcpy_d2d);
    add(s.memcpy_bytes[kH2D], c.bytes_h2d);
    add(s.memcpy_bytes[kD2H], c.bytes_d2h);
    add(s.memcpy_bytes[kD2D], c.bytes_d2d);
    add(s.syncs[kSyncCupti], c.syncs);
    add(s.kernels, c.kernels);
    if (c.kernel_ms > 0) s.kernel_seconds->Increment(c.kernel_ms * 1e-3);
    add(s.dropped[kDropCupti], c.dropped);
  }
  if (step.optimizer) {
    const OptimizerStats& o = *step.optimizer;
    r.state_off_device->Set(static_cast<double>(o.state_off_device));
    r.state_same_device->Set(static_cast<double>(o.state_tensors - o.state_off_device));
    r.state_bytes->Set(static_cast<double>(o.state_bytes));
    r.state_missing->Set(static_cast<double>(o.state_missing));
    r.dtype_mismatch->Set(static_cast<double>(o.state_dtype_mismatch));
    r.lr_requested->Set(o.lr_requested);
    if (o.state_reset) s.state_resets->Increment();
  }
  if (step.placement) {
    r.off_device[kParams]->Set(static_cast<double>(step.placement->params_off_device));
    r.off_device[kGrads]->Set(static_cast<double>(step.placement->grads_off_device));
    r.off_device[kBuffers]->Set(static_cast<double>(step.placement->buffers_off_device));
  }
  for (const std::string& rule : step.alerts) m.alert_counter(rule)->Increment();
}

void PrometheusExporter::on_event(const EventRecord& event) {
  Impl& m = *impl_;
  if (!m.run.phase) return;
  for (std::size_t k = 0; k < kEventKinds.size(); ++k) {
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
      m.push();
    } catch (const std::exception& e) {
      m.warn() << "warning: pushgateway " << m.options.pushgateway_url << ": " << e.what()
               << "; metrics not pushed\n";
    }
  }
}

int PrometheusExporter::bound_port() const { return impl_->exposer ? impl_->port : 0; }

std::string PrometheusExporter::metrics_url() const {
  if (!impl_->exposer) return {};
  return "http://" + impl_->listen.host + ":" + std::to_string(impl_->port) + "/metrics";
}

std::string PrometheusExporter::exposition() const {
  return prometheus::TextSerializer().Serialize(impl_->registry->Collect());
}

bool prometheus_available() { return true; }

std::unique_ptr<RecordSink> make_metrics_sink(const MetricsOptions& options) {
  validate(options);
  if (!metrics_requested(options)) return nullptr;
  return std::make_unique<PrometheusExporter>(options);
}

}  // namespace recompdiag
