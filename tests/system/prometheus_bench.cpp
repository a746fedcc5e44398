// Cost of the Prometheus exporter to a training loop (issue 5).
//
//   prometheus_bench [--on-step-iterations N] [--scrapers N] [--seconds S] [--step-ms MS]
//                    [--scrape-interval-ms MS] [--target-port PORT]
//
// 1. ns per on_step: N realistic step records through a serving exporter, without and with one
//    concurrent scraper (histogram and counters are shared with scrapes).
// 2. Load: a training-like loop does a fixed amount of CPU work per step (calibrated to --step-ms)
//    plus on_step; its step time is measured alone, then while N threads scrape /metrics over
//    loopback for S seconds, each every --scrape-interval-ms (0 = back to back; default 1000,
//    i.e. 100 scrapes/s from 100 scrapers, ~1500x one Prometheus at its 15 s default). Prints
//    scrape latency p50/p99/max and the step-time change.
// 3. With --target-port, only the scrapers run, against another process's exporter (see
//    prometheus_load.sh, which times a real training run with and without them).
// Everything is bounded by --seconds and runs on 127.0.0.1 only.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "metrics_records.h"
#include "recompdiag/core/error.h"
#include "recompdiag/reports/prometheus_exporter.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

// A fixed amount of floating-point work: what a CPU training step would contend for.
volatile double g_sink = 0;
void work(int64_t iterations) {
  double x = 1.0;
  for (int64_t i = 0; i < iterations; ++i) x = x * 1.0000001 + 1e-9;
  g_sink = x;
}

int64_t calibrate(double step_ms) {
  int64_t n = 100000;
  for (;;) {
    const auto t0 = Clock::now();
    work(n);
    const double ms = seconds_since(t0) * 1e3;
    if (ms > 20) return static_cast<int64_t>(static_cast<double>(n) * step_ms / ms);
    n *= 4;
  }
}

std::vector<recompdiag::StepRecord> make_steps(std::size_t n) {
  std::vector<recompdiag::StepRecord> steps;
  steps.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    steps.push_back(recompdiag::test::synthetic_step(static_cast<int64_t>(i), 1, "mutable", 2.5));
  }
  return steps;
}

double ns_per_on_step(recompdiag::reports::PrometheusExporter& exporter, int64_t iterations,
                      const std::vector<recompdiag::StepRecord>& steps) {
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < iterations; ++i) {
    exporter.on_step(steps[static_cast<std::size_t>(i) % steps.size()]);
  }
  return seconds_since(t0) * 1e9 / static_cast<double>(iterations);
}

struct StepTimes {
  double mean_ms = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  std::size_t steps = 0;
};

// Steps of `work_iterations` plus on_step until `seconds` have passed.
StepTimes train(recompdiag::reports::PrometheusExporter& exporter, int64_t work_iterations,
                double seconds, const std::vector<recompdiag::StepRecord>& steps) {
  std::vector<double> ms;
  const auto start = Clock::now();
  while (seconds_since(start) < seconds) {
    const auto t0 = Clock::now();
    work(work_iterations);
    exporter.on_step(steps[ms.size() % steps.size()]);
    ms.push_back(seconds_since(t0) * 1e3);
  }
  StepTimes t;
  t.steps = ms.size();
  for (double v : ms) t.mean_ms += v;
  t.mean_ms /= static_cast<double>(std::max<std::size_t>(1, ms.size()));
  t.p50_ms = percentile(ms, 0.5);
  t.p99_ms = percentile(ms, 0.99);
  return t;
}

struct ScrapeStats {
  std::size_t scrapes = 0;
  int64_t errors = 0;
};

// `scrapers` threads GET /metrics from 127.0.0.1:`port`, each every `interval_ms` (0 = back to
// back), while `during` runs on this thread; then prints scrape latency figures.
template <typename Fn>
ScrapeStats scrape_load(int port, int scrapers, double interval_ms, Fn&& during) {
  std::vector<std::vector<double>> latencies(scrapers);
  std::atomic<int64_t> errors{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  const auto load_start = Clock::now();
  for (int c = 0; c < scrapers; ++c) {
    clients.emplace_back([&, c] {
      // Staggered starts, then a fixed period: scrapers like Prometheus servers, not a flood.
      auto next = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(
                                     interval_ms * 1e3 * c / std::max(1, scrapers)));
      while (!stop) {
        std::this_thread::sleep_until(next);
        next += std::chrono::microseconds(static_cast<int64_t>(interval_ms * 1e3));
        if (stop) break;
        const auto t0 = Clock::now();
        try {
          if (recompdiag::test::http_get(port, "/metrics", 10).status != 200) ++errors;
        } catch (const std::exception&) {
          ++errors;
        }
        latencies[c].push_back(seconds_since(t0) * 1e3);
      }
    });
  }
  during();
  stop = true;
  for (auto& t : clients) t.join();
  const double load_seconds = seconds_since(load_start);

  std::vector<double> all;
  for (const auto& v : latencies) all.insert(all.end(), v.begin(), v.end());
  std::printf(
      "load: %d scrapers every %.0f ms for %.1f s on loopback: %zu scrapes (%.0f/s), %lld errors\n",
      scrapers, interval_ms, load_seconds, all.size(),
      static_cast<double>(all.size()) / load_seconds, static_cast<long long>(errors.load()));
  std::printf("scrape latency: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", percentile(all, 0.5),
              percentile(all, 0.99), percentile(all, 1.0));
  std::fflush(stdout);
  return {all.size(), errors.load()};
}

int run(int argc, char** argv) {
  int64_t iterations = 1000000;
  int scrapers = 100;
  double seconds = 20;
  double step_ms = 3;
  double interval_ms = 1000;
  int target_port = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--on-step-iterations") {
      iterations = std::stoll(value);
    } else if (flag == "--scrapers") {
      scrapers = std::stoi(value);
    } else if (flag == "--seconds") {
      seconds = std::stod(value);
    } else if (flag == "--scrape-interval-ms") {
      interval_ms = std::stod(value);
    } else if (flag == "--target-port") {
      target_port = std::stoi(value);
    } else if (flag == "--step-ms") {
      step_ms = std::stod(value);
    } else {
      throw recompdiag::InputError("unknown flag " + flag);
    }
  }

  if (target_port > 0) {
    // Another process (a real `recompdiag train`) serves the metrics: only load it.
    const ScrapeStats scraped = scrape_load(target_port, scrapers, interval_ms, [&] {
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    });
    return scraped.errors > 0 ? 1 : 0;
  }

  recompdiag::reports::MetricsOptions options;
  options.listen_addr = "127.0.0.1:0";
  recompdiag::reports::PrometheusExporter exporter(options);
  exporter.on_run_start(recompdiag::test::synthetic_header("mutable", "bench"));
  const auto steps = make_steps(1024);
  const int port = exporter.bound_port();

  // 1. on_step cost.
  ns_per_on_step(exporter, iterations / 10, steps);  // warm up
  const double ns_idle = ns_per_on_step(exporter, iterations, steps);
  std::atomic<bool> stop{false};
  std::thread scraper([&] {
    while (!stop) recompdiag::test::http_get(port);
  });
  const double ns_scraped = ns_per_on_step(exporter, iterations, steps);
  stop = true;
  scraper.join();
  std::printf(
      "on_step: %.0f ns (no scrape), %.0f ns (one scraper looping); %.4f%% of a 2 ms step\n",
      ns_idle, ns_scraped, std::max(ns_idle, ns_scraped) / 2e6 * 100);
  std::printf("exposition: %zu bytes\n", exporter.exposition().size());

  // 2. Load.
  const int64_t work_iterations = calibrate(step_ms);
  const double baseline_seconds = std::min(5.0, seconds / 2);
  const StepTimes alone = train(exporter, work_iterations, baseline_seconds, steps);
  StepTimes loaded;

  const ScrapeStats scraped = scrape_load(port, scrapers, interval_ms, [&] {
    loaded = train(exporter, work_iterations, seconds, steps);
  });
  std::printf("step time alone:        mean %.3f ms, p50 %.3f ms, p99 %.3f ms (%zu steps)\n",
              alone.mean_ms, alone.p50_ms, alone.p99_ms, alone.steps);
  std::printf("step time while scraped: mean %.3f ms, p50 %.3f ms, p99 %.3f ms (%zu steps)\n",
              loaded.mean_ms, loaded.p50_ms, loaded.p99_ms, loaded.steps);
  std::printf(
      "step time change: mean %+.1f%%, p50 %+.1f%% (%u hardware threads shared by the "
      "loop, %d scrapers and the server)\n",
      (loaded.mean_ms / alone.mean_ms - 1) * 100, (loaded.p50_ms / alone.p50_ms - 1) * 100,
      std::thread::hardware_concurrency(), scrapers);
  return scraped.errors > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "prometheus_bench: " << e.what() << "\n";
    return 2;
  }
}
