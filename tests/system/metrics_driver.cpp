// Stand-in for `recompdiag train --metrics-addr ...` in the live-metrics integration test: feeds
// realistic synthetic records through the Prometheus exporter at training-step rate.
//
//   metrics_driver [--metrics-addr A] [--metrics-hold S] [--seconds S] [--step-ms MS]
//                  [--modes recompile,mutable] [--port-file F] [--scrape-to F]
//
// Each mode is one run (like `recompdiag ab`), half in phase 1 and half in phase 2, with a
// phase_start and a compile event at the switch. Steps busy-wait --step-ms to stand for compute.
// --port-file writes the bound port (useful with port 0); --scrape-to writes one scrape of
// /metrics, taken over loopback HTTP after the last run ended. Exits 2 on InputError, like the CLI.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "metrics_records.h"
#include "recompdiag/core/error.h"
#include "recompdiag/reports/prometheus_exporter.h"

namespace {

using Clock = std::chrono::steady_clock;

void busy_wait(double ms) {
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double, std::milli>(ms));
  while (Clock::now() < until) {
  }
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, sep);) parts.push_back(part);
  return parts;
}

int run(int argc, char** argv) {
  recompdiag::reports::MetricsOptions options;
  options.listen_addr = "127.0.0.1:0";
  double seconds = 6.0;
  double step_ms = 3.0;
  std::string modes = "recompile,mutable";
  std::string port_file;
  std::string scrape_to;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help") {
      std::cout
          << "usage: metrics_driver [--metrics-addr A] [--metrics-hold S] [--pushgateway URL] "
             "[--seconds S] [--step-ms MS] [--modes M1,M2] [--port-file F] [--scrape-to F]\n";
      return 0;
    }
    if (i + 1 >= argc) throw recompdiag::InputError(flag + ": missing value");
    const std::string value = argv[++i];
    if (flag == "--metrics-addr") {
      options.listen_addr = value;
    } else if (flag == "--metrics-hold") {
      options.hold_seconds = std::stod(value);
    } else if (flag == "--pushgateway") {
      options.pushgateway_url = value;
    } else if (flag == "--seconds") {
      seconds = std::stod(value);
    } else if (flag == "--step-ms") {
      step_ms = std::stod(value);
    } else if (flag == "--modes") {
      modes = value;
    } else if (flag == "--port-file") {
      port_file = value;
    } else if (flag == "--scrape-to") {
      scrape_to = value;
    } else {
      throw recompdiag::InputError("unknown flag " + flag);
    }
  }
  recompdiag::reports::PrometheusExporter exporter(options);
  if (!port_file.empty()) {
    std::ofstream(port_file + ".tmp") << exporter.bound_port() << "\n";
    std::rename((port_file + ".tmp").c_str(), port_file.c_str());
  }
  std::cerr << "metrics_driver: serving " << exporter.metrics_url() << "\n";

  const std::vector<std::string> mode_list = split(modes, ',');
  const double per_run = seconds / static_cast<double>(mode_list.size());
  int run_index = 0;
  for (const std::string& mode : mode_list) {
    const auto start = Clock::now();
    exporter.on_run_start(recompdiag::test::synthetic_header(
        mode, "2026-01-01T00:0" + std::to_string(run_index++) + ":00Z"));
    int phase = 1;
    int64_t step = 0;
    for (double elapsed = 0; elapsed < per_run;
         elapsed = std::chrono::duration<double>(Clock::now() - start).count()) {
      if (phase == 1 && elapsed >= per_run / 2) {
        phase = 2;
        recompdiag::EventRecord event;
        event.step = step;
        event.phase = 2;
        event.kind = recompdiag::EventKind::kPhaseStart;
        exporter.on_event(event);
        event.kind = recompdiag::EventKind::kCompile;
        event.reason = "loss weights changed: step recompiled";
        exporter.on_event(event);
      }
      // The slow mode's phase 2 takes longer per step, as the diagnosed regression does.
      const double ms = step_ms * (phase == 2 && mode == "recompile" ? 1.6 : 1.0);
      const auto t0 = Clock::now();
      busy_wait(ms);
      const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      exporter.on_step(recompdiag::test::synthetic_step(step++, phase, mode, wall_ms));
    }
    recompdiag::RunSummary summary;
    summary.steps = step;
    summary.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
    exporter.on_run_end(summary);
  }
  if (!scrape_to.empty()) {
    const auto response = recompdiag::test::http_get(exporter.bound_port());
    if (response.status != 200) {
      std::cerr << "metrics_driver: scrape returned HTTP " << response.status << "\n";
      return 1;
    }
    std::ofstream(scrape_to) << response.body;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const recompdiag::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "metrics_driver: " << e.what() << "\n";
    return 1;
  }
}
