#pragma once
/// \file
/// Live metrics: a `RecordSink` that serves a run's figures to Prometheus while it trains and can
/// push them to a Pushgateway at run end.
///
/// The exporter turns `StepRecord`s, `EventRecord`s and the `RunHeader` into Prometheus metrics
/// (base units, `_total` counters, bounded labels: run, mode, device, phase and small fixed sets
/// such as copy direction or cache-miss kind; never step numbers or kernel names). Everything here
/// is declared whether or not prometheus-cpp was found; without it, `make_metrics_sink` throws
/// `InputError` when metrics are asked for, so the trainer and CLI never need an `#if`.

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "recompdiag/core/record_sink.h"

namespace recompdiag::reports {

/// Port used when `--metrics-addr` names a host without a port. 9464 is the port Prometheus's
/// default-port-allocations list gives to in-process application exporters (OpenTelemetry's
/// Prometheus exporter); the exporter ranges 9100-9999 are otherwise fully allocated to standalone
/// exporters, and a training process is an instrumented application, not an exporter.
inline constexpr int kDefaultMetricsPort = 9464;

/// Port of a Pushgateway URL that names none (the Pushgateway's registered port).
inline constexpr int kDefaultPushgatewayPort = 9091;

/// Configuration of live metrics. Plain data; `validate` checks it, `make_metrics_sink` uses it.
struct MetricsOptions {
  /// Where to serve `/metrics`: "" = off, "HOST" (port `kDefaultMetricsPort`) or "HOST:PORT". HOST
  /// is an IPv4 address or "localhost"; PORT 0 asks the kernel for a free port.
  std::string listen_addr;
  /// Pushgateway to push every metric to at each run end: "" = off, else "http[s]://HOST[:PORT][/]"
  /// (port `kDefaultPushgatewayPort` when absent).
  std::string pushgateway_url;
  /// Seconds the exporter keeps serving after the last run ended (in its destructor), so that a
  /// scraper gets the final values of a short run. 0 = stop at once.
  double hold_seconds = 0.0;
  /// Value of the `run` label. "" = the run header's `start_time` (unique per run).
  std::string run_label;
  /// Pushgateway job name (grouping key `job`; `instance` is "<host>:<pid>").
  std::string push_job = "recompdiag";
  /// The push waits at most this long, then warns and lets training finish.
  double push_timeout_seconds = 10.0;
  /// HTTP worker threads of the pull endpoint (civetweb, one connection per thread at a time).
  /// Connections beyond this many wait in civetweb's queue, so held or slow connections delay
  /// scrapes by about held x `http_request_timeout_ms` / `http_threads`: 1,000 held connections
  /// cost a scrape under 3 s with the defaults (tests/system/metrics_abuse.sh).
  int http_threads = 16;
  /// How long a connection may take to send its request (and each response write may take)
  /// before civetweb drops it. Short, because a silent or slow client holds a worker thread for
  /// this long; a scraper sends its request at once after connecting. civetweb's own default is
  /// 30,000 ms, with which 2 held connections starve every scrape.
  int http_request_timeout_ms = 200;
  /// Where warnings go (one line each). nullptr = std::cerr. Not owned.
  std::ostream* warnings = nullptr;

  /// Checks every field that can be checked without binding: addresses parse, hold and timeout
  /// are finite and not negative, at least one HTTP thread. Throws `InputError` (one line)
  /// otherwise. A port already in use is found by `make_metrics_sink`, which binds.
  void validate() const;
};

/// A `listen_addr` taken apart.
struct ListenAddress {
  std::string host;  ///< IPv4 dotted quad ("localhost" is returned as "127.0.0.1").
  int port = kDefaultMetricsPort;
};

/// A `pushgateway_url` taken apart, in the shape prometheus-cpp's Gateway wants.
struct PushgatewayAddress {
  std::string scheme_host;  ///< "http://host" or "https://host".
  int port = kDefaultPushgatewayPort;
};

/// Parses `--metrics-addr`. Throws `InputError` naming the flag when it cannot be parsed.
ListenAddress parse_listen_address(const std::string& text);

/// Parses `--pushgateway`. Throws `InputError` naming the flag when it cannot be parsed.
PushgatewayAddress parse_pushgateway_url(const std::string& text);

/// MetricsOptions::validate(), under its 0.8 name.
[[deprecated("use MetricsOptions::validate(); removed in 0.10")]] void validate(
    const MetricsOptions& options);

/// Binds and closes a plain socket on `listen_addr` (no server, no threads) and throws
/// `InputError` when that fails, e.g. the port is in use. For a parent process that forks the runs
/// (`recompdiag ab`): it checks before any run starts; each child then builds its exporter. Does
/// nothing when `listen_addr` is empty or its port is 0.
void check_listen_address_free(const MetricsOptions& options);

/// True when `options` asks for metrics at all (a listen address or a Pushgateway).
bool metrics_requested(const MetricsOptions& options);

/// True when this build has the Prometheus exporter (prometheus-cpp was found at configure time).
bool prometheus_available();

/// Prometheus exporter for the records of one or more runs (e.g. both runs of an A/B).
///
/// Construction validates `options` and binds the listen address, so a bad address or a port in use
/// throws `InputError` before training starts. `on_step` updates pre-resolved metric children (no
/// label lookup, no allocation, no lock of ours; prometheus-cpp's counters are atomics and its
/// histogram takes a short mutex shared only with scrapes). All `on_*` calls must come from one
/// thread; scrapes are served concurrently by civetweb threads. `on_run_end` pushes to the
/// Pushgateway when configured; a failed push writes one warning and never throws. The destructor
/// keeps serving for `hold_seconds` when at least one run ended. Not copyable or movable: it owns a
/// listening socket and server threads.
class PrometheusExporter final : public RecordSink {
 public:
  /// Throws `InputError` for a bad option or an address that cannot be bound.
  explicit PrometheusExporter(const MetricsOptions& options);
  ~PrometheusExporter() override;
  PrometheusExporter(const PrometheusExporter&) = delete;
  PrometheusExporter& operator=(const PrometheusExporter&) = delete;
  PrometheusExporter(PrometheusExporter&&) = delete;
  PrometheusExporter& operator=(PrometheusExporter&&) = delete;

  void on_run_start(const RunHeader& header) override;
  void on_step(const StepRecord& step) override;
  void on_event(const EventRecord& event) override;
  void on_run_end(const RunSummary& summary) override;

  /// Port the pull endpoint listens on (the kernel's choice when port 0 was asked); 0 when off.
  int bound_port() const;
  /// "http://HOST:PORT/metrics" of the pull endpoint; "" when off.
  std::string metrics_url() const;
  /// The current exposition text, exactly what a scrape of `/metrics` returns.
  std::string exposition() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The sink for `options`: nullptr when no metrics were asked for, else a `PrometheusExporter`.
/// Throws `InputError` for a bad option, a port in use, or metrics asked of a build without
/// prometheus-cpp. Call it before training starts so that these errors exit 2 early.
std::unique_ptr<RecordSink> make_metrics_sink(const MetricsOptions& options);

}  // namespace recompdiag::reports

