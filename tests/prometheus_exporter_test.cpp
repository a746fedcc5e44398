// The Prometheus exporter, fed synthetic records and scraped over loopback HTTP.

#include "recompdiag/reports/prometheus_exporter.h"

#include <doctest/doctest.h>

#include <chrono>
#include <iterator>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "metrics_records.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/health.h"
#include "recompdiag/core/record_fields.h"

namespace recompdiag::reports {
namespace {

using test::http_get;
using test::parse_samples;

// Sum of the samples of `name` whose labels include every pair in `labels`; -1 when none match.
double value(const std::map<std::string, double>& samples, const std::string& name,
             const std::vector<std::pair<std::string, std::string>>& labels = {}) {
  double sum = 0;
  bool found = false;
  for (const auto& [series, v] : samples) {
    if (series.compare(0, name.size(), name) != 0) continue;
    if (series.size() > name.size() && series[name.size()] != '{') continue;
    bool match = true;
    for (const auto& [k, want] : labels) {
      if (series.find(k + "=\"" + want + "\"") == std::string::npos) match = false;
    }
    if (match) {
      sum += v;
      found = true;
    }
  }
  return found ? sum : -1;
}

MetricsOptions loopback_options() {
  MetricsOptions o;
  o.listen_addr = "127.0.0.1:0";
  o.run_label = "r1";
  return o;
}

// Phase 1: steps 0-9; phase switch; phase 2: steps 10-14 in the slow "recompile" shape.
void feed_two_phases(RecordSink& sink) {
  sink.on_run_start(test::synthetic_header("recompile", "2026-01-01T00:00:00Z"));
  for (int i = 0; i < 10; ++i) sink.on_step(test::synthetic_step(i, 1, "recompile", 2.0));
  EventRecord phase_start;
  phase_start.kind = EventKind::kPhaseStart;
  phase_start.step = 10;
  phase_start.phase = 2;
  sink.on_event(phase_start);
  EventRecord compile;
  compile.kind = EventKind::kCompile;
  compile.step = 10;
  compile.phase = 2;
  sink.on_event(compile);
  for (int i = 10; i < 15; ++i) sink.on_step(test::synthetic_step(i, 2, "recompile", 20.0));
}

TEST_CASE("scraped metrics carry the fed records' values") {
  PrometheusExporter exporter(loopback_options());
  REQUIRE(exporter.bound_port() > 0);
  feed_two_phases(exporter);

  const auto response = http_get(exporter.bound_port());
  REQUIRE(response.status == 200);
  const auto s = parse_samples(response.body);

  CHECK(value(s, "recompdiag_steps_total", {{"phase", "1"}}) == 10);
  CHECK(value(s, "recompdiag_steps_total", {{"phase", "2"}, {"run", "r1"}}) == 5);
  CHECK(value(s, "recompdiag_step_duration_seconds_count", {{"phase", "2"}}) == 5);
  CHECK(value(s, "recompdiag_step_duration_seconds_sum", {{"phase", "1"}}) ==
        doctest::Approx(0.020));
  CHECK(value(s, "recompdiag_step_duration_seconds_bucket", {{"phase", "1"}, {"le", "0.002"}}) ==
        10);
  CHECK(value(s, "recompdiag_step_duration_seconds_bucket", {{"phase", "2"}, {"le", "0.015"}}) ==
        0);
  CHECK(value(s, "recompdiag_phase") == 2);
  CHECK(value(s, "recompdiag_last_step") == 14);
  CHECK(value(s, "recompdiag_run_info", {{"mode", "recompile"}, {"device", "cuda:0"}}) == 1);
  // Host placement and copies: phase 2 runs 40 host ops and 12 copies each way per step.
  CHECK(value(s, "recompdiag_host_ops_total", {{"phase", "2"}}) == 200);
  CHECK(value(s, "recompdiag_host_ops_total", {{"phase", "1"}}) == 0);
  CHECK(value(s, "recompdiag_cross_device_copies_total", {{"direction", "d2h"}}) == 60);
  CHECK(value(s, "recompdiag_cross_device_copies_total", {{"direction", "h2d"}}) == 10 + 60);
  CHECK(value(s, "recompdiag_cross_device_copy_bytes_total", {{"direction", "d2h"}}) == 60 * 4096);
  CHECK(value(s, "recompdiag_syncs_total", {{"source", "dispatch"}}) == 15);
  CHECK(value(s, "recompdiag_syncs_total", {{"source", "recorder"}}) == 15);
  CHECK(value(s, "recompdiag_compile_events_total", {{"kind", "jit_compile"}}) == 1);
  CHECK(value(s, "recompdiag_compile_events_total", {{"kind", "profiling_run"}}) == 2);
  CHECK(value(s, "recompdiag_cache_misses_total", {{"kind", "dispatcher_signature"}}) == 7);
  CHECK(value(s, "recompdiag_dropped_probe_records_total", {{"probe", "dispatch"}}) == 1);
  CHECK(value(s, "recompdiag_optimizer_state_tensors", {{"location", "off_device"}}) == 16);
  CHECK(value(s, "recompdiag_optimizer_state_tensors", {{"location", "same_device"}}) == 0);
  CHECK(value(s, "recompdiag_alerts_total", {{"rule", "optimizer_state_off_device"}}) == 1);
  CHECK(value(s, "recompdiag_alerts_total", {{"rule", "host_ops"}}) == 1);
  CHECK(value(s, "recompdiag_events_total", {{"kind", "phase_start"}}) == 1);
  CHECK(value(s, "recompdiag_events_total", {{"kind", "compile"}}) == 1);
  CHECK(value(s, "recompdiag_head_loss", {{"head", "1"}}) == doctest::Approx(0.5 / (1.0 + 0.14)));
  CHECK(value(s, "recompdiag_loss_weight", {{"head", "0"}}) == 0.5);
  CHECK(value(s, "recompdiag_learning_rate") == doctest::Approx(5e-4));
  CHECK(value(s, "recompdiag_probe_available", {{"probe", "dispatch"}}) == 1);
  CHECK(value(s, "recompdiag_probe_available", {{"probe", "cupti"}}) == 0);
  CHECK(value(s, "recompdiag_run_finished") == 0);

  exporter.on_run_end(RunSummary{});
  CHECK(value(parse_samples(http_get(exporter.bound_port()).body), "recompdiag_run_finished") == 1);
}

TEST_CASE("every metric has HELP and TYPE, and no label is unbounded") {
  PrometheusExporter exporter(loopback_options());
  feed_two_phases(exporter);
  const std::string text = http_get(exporter.bound_port()).body;
  std::istringstream in(text);
  int helps = 0;
  int types = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      ++helps;
      CHECK(line.size() > 20);  // a real sentence, not an empty HELP
    } else if (line.rfind("# TYPE ", 0) == 0) {
      ++types;
      if (line.find(" counter") != std::string::npos) {
        CHECK_MESSAGE(line.find("_total counter") != std::string::npos, line);
      }
    } else {
      CHECK_MESSAGE(line.find("step=") == std::string::npos, line);
      CHECK_MESSAGE(line.find("kernel=") == std::string::npos, line);
    }
  }
  CHECK(helps == types);
  CHECK(types >= 30);
}

TEST_CASE("a fresh run serves every rule's alert counter at 0") {
  MetricsOptions o;
  PrometheusExporter exporter(o);  // no endpoint: exposition() only
  exporter.on_run_start(test::synthetic_header("mutable", "t"));
  auto s = parse_samples(exporter.exposition());
  for (const char* rule : rules::kAll) {
    CAPTURE(rule);
    CHECK(value(s, "recompdiag_alerts_total", {{"rule", rule}}) == 0);
  }
  // The event kinds are a fixed set too: each one is served before it happens.
  CHECK(value(s, "recompdiag_events_total", {{"kind", "optimizer_rebuild"}}) == 0);
  StepRecord step = test::synthetic_step(0, 1, "mutable", 2.0);
  step.alerts = {rules::kSlowStep};
  exporter.on_step(step);
  s = parse_samples(exporter.exposition());
  CHECK(value(s, "recompdiag_alerts_total", {{"rule", rules::kSlowStep}}) == 1);
  CHECK(value(s, "recompdiag_alerts_total", {{"rule", rules::kHostOps}}) == 0);
}

TEST_CASE("every section field with a metric is served from the start, from the field tables") {
  MetricsOptions o;
  PrometheusExporter exporter(o);  // no endpoint: exposition() only
  exporter.on_run_start(test::synthetic_header("mutable", "t"));
  const auto s = parse_samples(exporter.exposition());
  int served = 0;
  for_each_section([&](const auto& section) {
    for (const auto& f : section) {
      if (f.metric.kind == MetricKind::kNone) continue;
      CAPTURE(f.name);
      CAPTURE(f.metric.family);
      std::vector<std::pair<std::string, std::string>> labels;
      if (f.metric.label != nullptr) labels.emplace_back(f.metric.label, f.metric.value);
      CHECK(value(s, f.metric.family, labels) == 0);
      ++served;
    }
  });
  CHECK(served >= 30);
}

TEST_CASE("a counter field feeds its series in base units") {
  MetricsOptions o;
  PrometheusExporter exporter(o);
  exporter.on_run_start(test::synthetic_header("mutable", "t"));
  StepRecord step = test::synthetic_step(0, 1, "mutable", 2.0);
  step.cupti = CuptiStats{};
  step.cupti->kernel_ms = 250.0;
  step.cupti->module_loads = 3;
  exporter.on_step(step);
  exporter.on_step(step);
  const auto s = parse_samples(exporter.exposition());
  CHECK(value(s, "recompdiag_kernel_seconds_total") == doctest::Approx(0.5));
  CHECK(value(s, "recompdiag_cache_misses_total", {{"kind", "kernel_module_load"}}) == 6);
}

TEST_CASE("a second run through the same exporter keeps both runs' series apart") {
  PrometheusExporter exporter(loopback_options());
  feed_two_phases(exporter);
  exporter.on_run_end(RunSummary{});
  exporter.on_run_start(test::synthetic_header("mutable", "2026-01-01T01:00:00Z"));
  for (int i = 0; i < 3; ++i) exporter.on_step(test::synthetic_step(i, 1, "mutable", 2.0));
  const auto s = parse_samples(exporter.exposition());
  CHECK(value(s, "recompdiag_steps_total", {{"mode", "recompile"}}) == 15);
  CHECK(value(s, "recompdiag_steps_total", {{"mode", "mutable"}}) == 3);
}

TEST_CASE("labels stay bounded when alert rules and heads run away") {
  MetricsOptions o;
  o.listen_addr = "";
  o.pushgateway_url = "";
  PrometheusExporter exporter(o);  // no endpoint: exposition() only
  exporter.on_run_start(test::synthetic_header("mutable", "t"));
  StepRecord step = test::synthetic_step(1, 1, "mutable", 2.0);
  step.head_losses.assign(100, 1.0);
  for (int i = 0; i < 100; ++i) step.alerts.push_back("rule" + std::to_string(i));
  exporter.on_step(step);
  const auto s = parse_samples(exporter.exposition());
  int heads = 0;
  int rules = 0;
  for (const auto& [series, v] : s) {
    if (series.rfind("recompdiag_head_loss{", 0) == 0) ++heads;
    if (series.rfind("recompdiag_alerts_total{", 0) == 0) ++rules;
  }
  CHECK(heads == 16);
  CHECK(rules == 33);  // 32 named rules and "other"
  // The known rules hold their series from the start; the first runaway names fill the rest.
  const int runaway_named = 32 - static_cast<int>(std::size(rules::kAll));
  CHECK(value(s, "recompdiag_alerts_total", {{"rule", "other"}}) == 100 - runaway_named);
}

TEST_CASE("listen addresses: default port, localhost, bad input") {
  CHECK(parse_listen_address("127.0.0.1").port == kDefaultMetricsPort);
  CHECK(parse_listen_address("127.0.0.1:9999").port == 9999);
  CHECK(parse_listen_address("localhost:0").host == "127.0.0.1");
  for (const char* bad : {"", "abc", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:80x", ":9464",
                          "::1", "[::1]:9464", "300.1.1.1:80", "127.0.0.1:-1"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_listen_address(bad), InputError);
    MetricsOptions o;
    o.listen_addr = bad;
    if (*bad) CHECK_THROWS_AS(make_metrics_sink(o), InputError);
  }
  CHECK_THROWS_WITH_AS(parse_listen_address("abc"), doctest::Contains("--metrics-addr"),
                       InputError);
}

TEST_CASE("pushgateway URLs and other options") {
  CHECK(parse_pushgateway_url("http://127.0.0.1").port == kDefaultPushgatewayPort);
  CHECK(parse_pushgateway_url("http://gw.example:9000/").scheme_host == "http://gw.example");
  CHECK(parse_pushgateway_url("https://[::1]:9091").scheme_host == "https://[::1]");
  for (const char* bad : {"127.0.0.1:9091", "ftp://x", "http://", "http://h:0", "http://h:x",
                          "http://h/metrics/job/x", "http://a b"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_pushgateway_url(bad), InputError);
  }
  MetricsOptions o;
  CHECK(make_metrics_sink(o) == nullptr);
  o.hold_seconds = -1;
  CHECK_THROWS_AS(o.validate(), InputError);
  o.hold_seconds = 0;
  o.http_request_timeout_ms = 0;
  CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("request timeout"), InputError);
  o.http_request_timeout_ms = 200;
  o.http_threads = 0;
  CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("threads"), InputError);
  CHECK(prometheus_available());
}

TEST_CASE("a port already in use is an InputError at construction") {
  PrometheusExporter first(loopback_options());
  MetricsOptions o;
  o.listen_addr = "127.0.0.1:" + std::to_string(first.bound_port());
  CHECK_THROWS_WITH_AS(PrometheusExporter{o}, doctest::Contains("in use"), InputError);
  CHECK_THROWS_AS(make_metrics_sink(o), InputError);
  CHECK_THROWS_WITH_AS(check_listen_address_free(o), doctest::Contains("in use"), InputError);
  o.listen_addr = "127.0.0.1:0";
  CHECK_NOTHROW(check_listen_address_free(o));
}

TEST_CASE("an unreachable pushgateway warns once and does not throw") {
  std::ostringstream warnings;
  MetricsOptions o;
  o.pushgateway_url = "http://127.0.0.1:" + std::to_string(test::free_loopback_port());
  o.warnings = &warnings;
  auto sink = make_metrics_sink(o);
  REQUIRE(sink);
  feed_two_phases(*sink);
  CHECK_NOTHROW(sink->on_run_end(RunSummary{}));
  const std::string text = warnings.str();
  CHECK(text.find("warning: pushgateway") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
}

TEST_CASE("push sends every metric to the Pushgateway's job URL") {
  // A one-shot HTTP server standing in for the Pushgateway.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  socklen_t len = sizeof sa;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&sa), &len);
  std::string request;
  std::thread server([&] {
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[65536];
    std::size_t want = std::string::npos;
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) {
      request.append(buf, n);
      const auto head_end = request.find("\r\n\r\n");
      if (head_end == std::string::npos) continue;
      const auto cl = request.find("Content-Length: ");
      if (want == std::string::npos && cl != std::string::npos && cl < head_end) {
        want = head_end + 4 + std::stoul(request.substr(cl + 16));
      }
      if (want != std::string::npos && request.size() >= want) break;
      if (cl == std::string::npos && request.find("0\r\n\r\n", head_end + 4) != std::string::npos)
        break;  // chunked body ended
    }
    const std::string ok = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    ::send(fd, ok.data(), ok.size(), MSG_NOSIGNAL);
    ::close(fd);
  });
  std::ostringstream warnings;
  MetricsOptions o;
  o.pushgateway_url = "http://127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  o.warnings = &warnings;
  {
    PrometheusExporter exporter(o);
    feed_two_phases(exporter);
    exporter.on_run_end(RunSummary{});
  }
  server.join();
  ::close(listener);
  CHECK(warnings.str().empty());
  // prometheus-cpp's Push() is a POST: it replaces the group's metrics of the same names, which
  // here are all of them.
  const std::string request_line = request.substr(0, request.find('\r'));
  CHECK_MESSAGE(request_line.rfind("POST /metrics/job/recompdiag/instance/", 0) == 0, request_line);
  CHECK(request.find("recompdiag_steps_total{") != std::string::npos);
}

TEST_CASE("the exporter keeps serving for hold_seconds after the run ends") {
  std::ostringstream warnings;
  MetricsOptions o = loopback_options();
  o.hold_seconds = 0.5;
  o.warnings = &warnings;
  auto exporter = std::make_unique<PrometheusExporter>(o);
  const int port = exporter->bound_port();
  feed_two_phases(*exporter);
  exporter->on_run_end(RunSummary{});
  const auto start = std::chrono::steady_clock::now();
  std::thread destroy([&] { exporter.reset(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  const auto during = http_get(port);
  destroy.join();
  const double held =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(during.status == 200);
  CHECK(value(parse_samples(during.body), "recompdiag_run_finished") == 1);
  CHECK(held >= 0.45);
  CHECK(warnings.str().find("--metrics-hold") != std::string::npos);
}

}  // namespace
}  // namespace recompdiag::reports
