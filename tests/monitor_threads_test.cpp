// The Monitor with ops from two threads at once, and its records served to concurrent scrapers:
// the threads train their own models inside the same steps, so the dispatcher probe's callbacks
// run on both at once. The counts must add up to what one thread alone gives, twice: a lost or
// doubled callback fails here, and under ThreadSanitizer (scripts/sanitize tsan-torch) so does
// any unsynchronized access of the probes, the Monitor or the exporter.
#include <ATen/record_function.h>

#include <atomic>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "metrics_records.h"
#include "recompdiag/core/error.h"
#include "recompdiag/probes/dispatcher_probe.h"
#include "recompdiag/probes/monitor.h"
#include "recompdiag/reports/prometheus_exporter.h"
#include "torch_doctest.h"

using namespace recompdiag;

namespace {

constexpr int kIterations = 3;  // training iterations per thread per step

// One thread's training: its own model, data and optimizer. An iteration is forward, backward,
// an optimizer step, one host sync (`item`) of its own and one inside the recorder's scope.
struct Worker {
  Worker() { iterate(); }  // the first iteration differs (gradients not yet allocated): not counted

  void iterate() {
    sgd.zero_grad();
    torch::Tensor loss = model(input).pow(2).mean();
    loss.backward();
    sgd.step();
    if (loss.item<double>() < 0) throw std::logic_error("a mean of squares is negative");
    RECORD_USER_SCOPE(probes::kRecorderReadScope);
    last_loss = loss.item<double>();
  }

  torch::nn::Linear model{8, 4};
  torch::optim::SGD sgd{model->parameters(), torch::optim::SGDOptions(0.01)};
  torch::Tensor input = torch::ones({16, 8});
  double last_loss = 0;
};

// One step observed by `monitor`: each worker runs kIterations iterations, all in threads of
// their own at once.
StepRecord observed_step(probes::Monitor& monitor, std::vector<Worker*> workers) {
  StepRecord record;
  monitor.begin_step();
  std::vector<std::thread> threads;
  for (Worker* w : workers) {
    threads.emplace_back([w] {
      for (int i = 0; i < kIterations; ++i) w->iterate();
    });
  }
  for (std::thread& t : threads) t.join();
  monitor.end_step(record);
  REQUIRE(record.dispatch.has_value());
  REQUIRE(record.dispatch->sampled);
  return record;
}

// Through the RecordFunction callback, which sees every thread's ops (the default hook, the mode
// key, sees the thread that begins the step only: the last test case).
probes::MonitorOptions quiet_options() {
  probes::MonitorOptions options;
  options.log_alerts = false;
  options.dispatcher_full_steps_after_event = 1000;  // every step of these tests is sampled
  options.dispatcher_hook = probes::DispatchHook::kRecordFunction;
  return options;
}

// The sink of a Prometheus exporter on a free loopback port (retried: another test may take the
// port between the probe and the bind).
std::unique_ptr<RecordSink> loopback_exporter(int& port) {
  for (int attempt = 0;; ++attempt) {
    reports::MetricsOptions metrics;
    port = test::free_loopback_port();
    metrics.listen_addr = "127.0.0.1:" + std::to_string(port);
    metrics.run_label = "threads";
    try {
      return reports::make_metrics_sink(metrics);
    } catch (const InputError&) {
      if (attempt == 3) throw;
    }
  }
}

// Sum of the samples of `name` whose series includes `label` ("" for any).
double sample_sum(const std::map<std::string, double>& samples, const std::string& name,
                  const std::string& label = "") {
  double sum = 0;
  for (const auto& [series, v] : samples) {
    if (series.compare(0, name.size(), name) != 0) continue;
    if (series.size() > name.size() && series[name.size()] != '{') continue;
    if (label.empty() || series.find(label) != std::string::npos) sum += v;
  }
  return sum;
}

}  // namespace

TEST_CASE("monitor: ops of two threads at once count as twice one thread's") {
  Worker a;
  Worker b;
  probes::Monitor monitor(*a.model, a.sgd, quiet_options());
  const StepRecord one = observed_step(monitor, {&a});
  const StepRecord two = observed_step(monitor, {&a, &b});
  const StepRecord one_again = observed_step(monitor, {&b});

  CHECK(one.dispatch->ops > 0);
  CHECK(two.dispatch->ops == 2 * one.dispatch->ops);
  CHECK(one_again.dispatch->ops == one.dispatch->ops);
  CHECK(two.dispatch->ops_cpu == two.dispatch->ops);
  // Syncs and the recorder's scope are counted per thread, each in its own nesting.
  CHECK(one.dispatch->syncs == kIterations);
  CHECK(two.dispatch->syncs == 2 * kIterations);
  CHECK(two.dispatch->recorder_syncs == 2 * kIterations);
  // Both models have the same shapes: the second thread brings no new signature.
  CHECK(two.dispatch->new_signatures == 0);
  CHECK(two.dispatch->dropped == 0);
  REQUIRE(two.optimizer.has_value());
  CHECK(two.optimizer->params == 2);
}

TEST_CASE("monitor: two training threads feed an exporter that scrapers read meanwhile") {
  if (!reports::prometheus_available()) {
    MESSAGE("skipped: built without prometheus-cpp");
    return;
  }
  constexpr int kSteps = 8;
  Worker a;
  Worker b;
  int port = 0;
  std::unique_ptr<RecordSink> exporter = loopback_exporter(port);
  REQUIRE(exporter != nullptr);
  exporter->on_run_start(test::synthetic_header("mutable", "2026-01-01T00:00:00Z"));

  // Scrapers read while the training thread feeds on_step: every scrape must succeed, and the
  // ops counter may only grow.
  std::atomic<bool> done{false};
  std::atomic<int> scrapes{0};
  std::atomic<int> failures{0};
  std::atomic<int> decreases{0};
  std::vector<std::thread> scrapers;
  for (int s = 0; s < 2; ++s) {
    scrapers.emplace_back([&] {
      double last = 0;
      while (!done.load()) {
        try {
          const test::HttpResponse r = test::http_get(port);
          if (r.status != 200) ++failures;
          const double ops = sample_sum(test::parse_samples(r.body),
                                        "recompdiag_dispatched_ops_total", "target=\"cpu\"");
          if (ops < last) ++decreases;
          last = ops;
          ++scrapes;
        } catch (const std::exception&) {
          ++failures;
        }
      }
    });
  }

  int64_t ops = 0;
  int64_t first_step_ops = -1;
  int64_t steps_unlike_the_first = 0;  // every step runs the same iterations: the same op count
  int64_t syncs = 0;
  int64_t recorder_syncs = 0;
  {
    probes::Monitor monitor(*a.model, a.sgd, quiet_options());
    for (int step = 0; step < kSteps; ++step) {
      StepRecord record = observed_step(monitor, {&a, &b});
      record.phase = 1;
      record.loss = a.last_loss;
      if (first_step_ops < 0) first_step_ops = record.dispatch->ops;
      if (record.dispatch->ops != first_step_ops) ++steps_unlike_the_first;
      ops += record.dispatch->ops_cpu;
      syncs += record.dispatch->syncs;
      recorder_syncs += record.dispatch->recorder_syncs;
      exporter->on_step(record);
    }
  }
  while (scrapes.load() < 2) std::this_thread::yield();  // at least one scrape per scraper's turn
  done = true;
  for (std::thread& t : scrapers) t.join();

  CHECK(first_step_ops > 0);
  CHECK(steps_unlike_the_first == 0);
  CHECK(failures.load() == 0);
  CHECK(decreases.load() == 0);
  CHECK(syncs == 2 * kIterations * kSteps);
  CHECK(recorder_syncs == 2 * kIterations * kSteps);
  const auto samples = test::parse_samples(test::http_get(port).body);
  CHECK(sample_sum(samples, "recompdiag_steps_total") == kSteps);
  CHECK(sample_sum(samples, "recompdiag_dispatched_ops_total", "target=\"cpu\"") ==
        static_cast<double>(ops));
  CHECK(sample_sum(samples, "recompdiag_syncs_total", "source=\"dispatch\"") ==
        static_cast<double>(syncs));
  CHECK(sample_sum(samples, "recompdiag_syncs_total", "source=\"recorder\"") ==
        static_cast<double>(recorder_syncs));
}

TEST_CASE("monitor: the default hook in a C++ loop sees the thread that begins the step only") {
  Worker a;
  probes::MonitorOptions options = quiet_options();
  options.dispatcher_hook = probes::kDefaultDispatchHook;
  probes::Monitor monitor(*a.model, a.sgd, options);
  REQUIRE(monitor.dispatcher_hook() == probes::DispatchHook::kModeKey);
  const StepRecord elsewhere = observed_step(monitor, {&a});  // a thread of its own
  CHECK(elsewhere.dispatch->ops == 0);
  CHECK(elsewhere.dispatch->syncs == 0);

  StepRecord here;
  monitor.begin_step();
  a.iterate();
  monitor.end_step(here);
  REQUIRE(here.dispatch.has_value());
  CHECK(here.dispatch->ops > 0);
  // The recorder's RECORD_USER_SCOPE is a RecordFunction scope, which the mode key does not see:
  // both reads are the step's syncs (a probes::RecorderRead marks a read for either hook).
  CHECK(here.dispatch->syncs == 2);
  CHECK(here.dispatch->recorder_syncs == 0);
}
