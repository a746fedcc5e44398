// recompdiag._core: the C++ Monitor for a Python training loop. One class, `Run`: a Monitor over a
// Python model and optimizer, writing the run file (and serving Prometheus metrics) as the C++
// trainer does. The Python layer (recompdiag/monitor.py) stays thin; probes and rules are C++.
// Compiled with NDEBUG forced, like the probes (RecordFunction's layout depends on NDEBUG).
#include <torch/extension.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "collective_timer.h"
#include "monitor_options.h"
#include "recompdiag/core/error.h"
#include "recompdiag/core/job.h"
#include "recompdiag/core/lr_plateau.h"
#include "recompdiag/core/recompile_cause.h"
#include "recompdiag/core/record_sink.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/run_set.h"
#include "recompdiag/core/seed_scenario.h"
#include "recompdiag/core/statistics.h"
#include "recompdiag/core/version.h"
#include "recompdiag/probes/comm_probe.h"
#include "recompdiag/probes/compiled_probe.h"
#include "recompdiag/probes/dispatcher_probe.h"
#include "recompdiag/probes/run_recorder.h"
#include "recompdiag/probes/training_state.h"
#include "recompdiag/reports/prometheus_exporter.h"
#include "recompdiag/reports/renderer.h"

namespace py = pybind11;

namespace recompdiag::python {
namespace {

bool is_tensor(const py::handle& h) { return THPVariable_Check(h.ptr()); }

// A Python number or one-element tensor as a double. Tensors are read inside the recorder's
// scope: the dispatcher probe counts that read as the recorder's, not the model's sync.
double read_value(const py::handle& h) {
  if (!is_tensor(h)) return h.cast<double>();
  const at::Tensor& t = THPVariable_Unpack(h.ptr());
  RECORD_USER_SCOPE(probes::kRecorderReadScope);
  const probes::RecorderRead recorder_read;
  // item() reads any dtype as a double, grad or not: no detached or converted copy per read
  // (the optimizer's step counters are read every step).
  return t.item<double>();
}

bool is_step_key(const py::handle& key) {
  return PyUnicode_Check(key.ptr()) && PyUnicode_CompareWithASCIIString(key.ptr(), "step") == 0;
}

// The optimizer's groups and state, read from a torch.optim.Optimizer at step end.
probes::OptimizerSnapshot snapshot_of(const py::object& optimizer) {
  probes::OptimizerSnapshot out;
  const py::dict state = optimizer.attr("state");
  for (const py::handle group : optimizer.attr("param_groups")) {
    const py::dict g = py::reinterpret_borrow<py::dict>(group);
    out.group_lrs.push_back(g.contains("lr") ? read_value(g["lr"]) : 0.0);
    for (const py::handle param : g["params"]) {
      probes::ParamStateSnapshot p;
      p.param = THPVariable_Unpack(param.ptr());
      if (state.contains(param)) {
        p.has_state = true;
        for (const auto item : py::reinterpret_borrow<py::dict>(state[param])) {
          if (is_step_key(item.first)) {
            p.step = static_cast<int64_t>(read_value(item.second));
          } else if (is_tensor(item.second)) {
            p.state.push_back(THPVariable_Unpack(item.second.ptr()));
          }
        }
      }
      out.params.push_back(std::move(p));
    }
  }
  return out;
}

// A Python model's parameters and buffers, read through model.parameters() and buffers() at most
// once in kRefreshEvery steps. Those generators walk the module tree in Python: about 78k
// instructions a step on a three-layer MLP (callgrind, torch 2.15), most of what the placement
// probe cost a small step. The parameters kept are the model's own TensorImpls, which
// module.to() moves in place (it sets param.data) while it replaces the buffers: a kept parameter
// found on another device than when it was read makes the read happen again at once, so a move
// shows at the next step, buffers included. What only a new read sees (a module added or replaced,
// parameters swapped for new objects) shows within kRefreshEvery steps, and at once after
// set_model(), a compile or a noted event. Between reads the cache keeps the tensors alive, so a
// dropped model's memory is freed within as many steps.
class ModelTensors {
 public:
  static constexpr int kRefreshEvery = 25;

  void set_model(py::object model) {
    model_ = std::move(model);
    refresh_soon();
  }
  const py::object& model() const { return model_; }
  void refresh_soon() { steps_to_refresh_ = 0; }
  void clear() {
    params_.clear();
    devices_.clear();
    buffers_.clear();
    refresh_soon();
  }

  void fill(std::vector<at::Tensor>& params, std::vector<at::Tensor>& buffers) {
    if (steps_to_refresh_-- <= 0 || moved()) {
      params_.clear();
      buffers_.clear();
      devices_.clear();
      for (const py::handle t : model_.attr("parameters")()) {
        params_.push_back(THPVariable_Unpack(t.ptr()));
        devices_.push_back(params_.back().device());
      }
      for (const py::handle t : model_.attr("buffers")())
        buffers_.push_back(THPVariable_Unpack(t.ptr()));
      steps_to_refresh_ = kRefreshEvery - 1;
    }
    params = params_;
    buffers = buffers_;
  }

 private:
  // Whether a kept parameter is on another device than when it was read (module.to()).
  bool moved() const {
    for (size_t i = 0; i < params_.size(); ++i) {
      if (params_[i].device() != devices_[i]) return true;
    }
    return false;
  }

  py::object model_ = py::none();
  std::vector<at::Tensor> params_;
  std::vector<c10::Device> devices_;  // params_' devices when read
  std::vector<at::Tensor> buffers_;
  int steps_to_refresh_ = 0;
};

// A sink that keeps nothing.
struct Discard final : RecordSink {
  void on_run_start(const RunHeader&) override {}
  void on_step(const StepRecord&) override {}
  void on_event(const EventRecord&) override {}
  void on_run_end(const RunSummary&) override {}
};

// The Python Monitor's run: a RunRecorder over a Python model and optimizer, writing the run file
// (and serving Prometheus metrics) as a C++ loop's recorder does.
class Run {
 public:
  // `header` is the run header's JSON as Python builds it (mode, config, rank, ...), completed by
  // the recorder with what C++ knows (tool version, host, probes); `options` the MonitorOptions
  // the Python Monitor built (its typed binding, monitor_options.h).
  Run(py::object model, py::object optimizer, const std::string& out, const std::string& header,
      const probes::MonitorOptions& options, const std::string& metrics_listen)
      : optimizer_(std::move(optimizer)) {
    model_.set_model(std::move(model));
    probes::RunRecorderOptions run;
    run.out = out;
    run.header = nlohmann::json::parse(header);
    // A Python exception does not unwind C++: a Monitor never closed ends without a summary, a
    // run that did not finish, not one that completed when Python collects it.
    run.close_on_destruction = false;
    run.monitor = options;
    run.monitor.optimizer = options.optimizer && !optimizer_.is_none();
    run.monitor.placement = options.placement && !model_.model().is_none();
    // A Python loop may call torch.compile whatever `compiled` says, and the mode key would make
    // each frame it compiles on an observed step compile again on the next unobserved one.
    run.monitor.dispatcher_hook =
        probes::resolve_dispatch_hook(options.dispatcher_hook, /*torch_compile_may_run=*/true);
    run.monitor.validate();  // the C++ rules, before the exporter binds its port (the recorder
                             // checks them again before it opens the file)
    if (!metrics_listen.empty()) {
      reports::MetricsOptions m;
      m.listen_addr = metrics_listen;
      exporter_ = std::make_unique<reports::PrometheusExporter>(m);
      run.sinks.push_back(exporter_.get());
    }
    if (run.out.empty() && run.sinks.empty()) run.sinks.push_back(&nowhere_);  // out=None
    probes::TrainingStateSource source;
    if (!model_.model().is_none()) {
      source.model = [this](std::vector<at::Tensor>& p, std::vector<at::Tensor>& b) {
        model_.fill(p, b);
      };
    }
    if (!optimizer_.is_none()) source.optimizer = [this] { return snapshot_of(optimizer_); };
    recorder_ = std::make_unique<probes::RunRecorder>(std::move(source), std::move(run));
    probes_ = recorder_->header().probes.dump();
  }

  void begin_step(int64_t step) { open().begin_step(step); }
  // The planted slowdown (`recompdiag calibrate`), before Python reads its step clock.
  void planted_work() { open().monitor().planted_work(); }

  // Reads the losses (the recorder's reads), ends the step, writes it; returns the fired rules.
  std::vector<std::string> end_step(const py::object& loss, const py::list& head_losses,
                                    const std::vector<double>& loss_weights, const py::object& lr,
                                    double wall_ms) {
    probes::RunRecorder& recorder = open();
    record_collectives(recorder);
    StepRecord r;
    if (!loss.is_none()) r.loss = read_value(loss);
    for (const py::handle h : head_losses) r.head_losses.push_back(read_value(h));
    if (wall_ms > 0.0) r.wall_ms = wall_ms;
    r.loss_weights = loss_weights;
    if (!lr.is_none()) r.lr = read_value(lr);
    return recorder.end_step(std::move(r)).alerts;
  }

  void note_event(const std::string& kind, const std::string& reason, const std::string& detail) {
    const std::optional<EventKind> k = parse_event_kind(kind);
    if (!k) throw InputError("unknown event kind '" + kind + "'");
    nlohmann::json d = detail.empty() ? nlohmann::json::object() : nlohmann::json::parse(detail);
    open().note_event(*k, reason, std::move(d));
    model_.refresh_soon();  // a phase start, a recompile, a rebuilt optimizer: the model may be new
  }
  void set_epoch(int epoch) { open().set_epoch(epoch); }

  // Dynamo starts compiling: the probes observe from now on (the region it is about to run).
  void observe_compile() {
    if (recorder_) recorder_->monitor().observe_from_now();
    model_.refresh_soon();
  }

  void add_compile_time(double ms) {
    if (!recorder_) return;  // a compile after close
    if (probes::CompiledProbe* c = recorder_->monitor().compiled()) c->add_compile_time(ms);
  }
  // One all-reduce of a data-parallel rank's DDP comm hook, timed from issue to completion; the
  // future the hook returns (CollectiveTimer::time).
  py::object time_collective(int64_t bytes, const py::function& issue) {
    return collectives_.time(bytes, issue);
  }
  // torch's own compile counters since the last read: {field of the compiled section: value}.
  void add_compile_ledger(const std::map<std::string, double>& fields) {
    if (!recorder_) return;
    probes::CompiledProbe* c = recorder_->monitor().compiled();
    if (c == nullptr) return;
    for (const auto& [name, value] : fields) c->add_ledger(name, value);
  }
  void set_requested_lr(double lr) { open().monitor().set_requested_lr(lr); }
  // Inspected from the next step on. A fresh optimizer shows as a state reset (its step counters
  // fall), as in the C++ Monitor.
  void set_model(py::object model) { model_.set_model(std::move(model)); }
  void set_optimizer(py::object optimizer) { optimizer_ = std::move(optimizer); }
  void take_turn() { open().monitor().take_turn(); }
  bool takes_turns() const { return recorder_ && recorder_->monitor().takes_turns(); }
  const std::string& probes() const { return probes_; }
  std::string metrics_url() const { return exporter_ ? exporter_->metrics_url() : ""; }

  void close(const std::string& status) {
    // The probes go now, even if the summary cannot be written, not when Python collects this
    // object: their global callbacks would otherwise keep counting, and a next Monitor's
    // torch.compile probe would find one alive.
    const std::unique_ptr<probes::RunRecorder> recorder = std::move(recorder_);
    // The all-reduces still in flight land first: their callbacks hand their futures to the
    // training thread, not to a Run that is closing (CollectiveTimer).
    collectives_.settle(std::chrono::seconds(2));
    if (recorder) recorder->close(status);
    model_.clear();  // the model's tensors are the model's again
  }

 private:
  // The collectives completed since the last step end, into the comm probe.
  void record_collectives(probes::RunRecorder& recorder) {
    probes::CommProbe* comm = recorder.monitor().comm();
    for (const CompletedCollective& c : collectives_.take_completed()) {
      if (comm != nullptr) comm->record_collective(c.bytes, c.wait_ms);
    }
  }

  probes::RunRecorder& open() {
    if (!recorder_) throw InputError("the recompdiag monitor is closed");
    return *recorder_;
  }

  ModelTensors model_;
  py::object optimizer_;
  // The sinks outlive the recorder: declared before it.
  std::unique_ptr<reports::PrometheusExporter> exporter_;
  Discard nowhere_;  // what a Monitor with no run file and no metrics writes to
  std::unique_ptr<probes::RunRecorder> recorder_;
  std::string probes_;  // the header's probes, JSON
  CollectiveTimer collectives_;
};

}  // namespace
// Runs of A against runs of B as `recompdiag compare` and `ab` compare them (compare_run_paths):
// the JSON report, which recompdiag.compare() parses.
std::string compare_json(const std::vector<std::string>& a, const std::vector<std::string>& b,
                         double threshold_pct, bool turns,
                         const std::vector<std::string>& fail_on) {
  CompareOptions o;
  o.threshold = threshold_pct / 100.0;
  o.turns = turns;
  o.paired = turns;
  for (const std::string& name : fail_on) {
    for (const std::string& n : parse_fail_on(name)) o.fail_on.push_back(n);
  }
  o.validate();
  std::ostringstream out;
  reports::JsonRenderer().render(compare_run_paths(a, b, o), out);
  return out.str();
}

// The known cause of a guard failure (classify_guard_failure) as a dict, or None.
py::object recompile_cause(const std::string& guard) {
  const RecompileCause* c = classify_guard_failure(guard);
  if (c == nullptr) return py::none();
  py::dict d;
  d["cause"] = c->key;
  d["what"] = c->what;
  d["fix"] = c->fix;
  d["upstream"] = c->upstream;
  return std::move(d);
}

// The seed scenario's defaults (core/seed_scenario.h) as a dict, for the Python seed.
py::dict seed_scenario() {
  namespace sc = recompdiag::seed_scenario;
  py::list phases;
  for (const sc::Phase& p : sc::kPhases) {
    py::dict phase;
    phase["epochs"] = p.epochs;
    phase["loss_weights"] = py::make_tuple(p.loss_weights[0], p.loss_weights[1]);
    phase["lr"] = p.lr;
    phases.append(std::move(phase));
  }
  py::dict d;
  d["phases"] = std::move(phases);
  d["steps_per_epoch"] = sc::kStepsPerEpoch;
  d["batch_size"] = sc::kBatchSize;
  d["seq_len"] = sc::kSeqLen;
  d["input_size"] = sc::kInputSize;
  d["hidden"] = sc::kHidden;
  d["num_classes"] = sc::kNumClasses;
  d["clip_value"] = sc::kClipValue;
  d["adam_epsilon"] = sc::kAdamEpsilon;
  d["seed"] = sc::kSeed;
  return d;
}

// stats::arm_ratio over paired rounds, as the C++ overhead bench judges its arms.
py::dict arm_ratio(const std::vector<double>& baseline, const std::vector<double>& arm, double trim,
                   double confidence) {
  if (!(confidence > 0.0 && confidence < 1.0)) {
    throw InputError("arm_ratio: confidence must be in (0, 1), got " + std::to_string(confidence));
  }
  stats::RatioTestOptions options;
  options.confidence = confidence;
  const stats::ArmRatio r = stats::arm_ratio(baseline, arm, trim, options);
  py::dict d;
  d["ratio"] = r.test.ratio;
  d["low"] = r.test.low;
  d["high"] = r.test.high;
  d["confidence"] = r.test.confidence;
  d["rounds"] = r.test.n_a;
  d["includes_one"] = r.includes_one;
  d["wider_than_effect"] = r.wider_than_effect;
  d["rounds_to_settle"] = r.rounds_to_settle;
  return d;
}

}  // namespace recompdiag::python

PYBIND11_MODULE(_core, m) {
  using recompdiag::python::Run;
  m.doc() = "recompdiag's C++ monitor for Python training loops (see recompdiag.Monitor)";
  m.attr("version") = recompdiag::kToolVersion;
  py::register_exception<recompdiag::InputError>(m, "InputError", PyExc_ValueError);
  m.def("compare_json", &recompdiag::python::compare_json, py::arg("a"), py::arg("b"),
        py::arg("threshold_pct"), py::arg("turns"), py::arg("fail_on"),
        py::call_guard<py::gil_scoped_release>());
  m.def("recompile_cause", &recompdiag::python::recompile_cause, py::arg("guard"),
        "The known cause of a torch.compile guard failure: {cause, what, fix, upstream}, or None");
  m.def("seed_scenario", &recompdiag::python::seed_scenario,
        "The seed scenario's defaults, as the C++ trainer has them (core/seed_scenario.h): "
        "{phases: [{epochs, loss_weights, lr}, ...], steps_per_epoch, batch_size, seq_len, "
        "input_size, hidden, num_classes, clip_value, adam_epsilon, seed}");
  m.def("rank_file_path", &recompdiag::rank_file_path, py::arg("out"), py::arg("rank"),
        "The run file of a data-parallel rank: run.jsonl -> run.rank0.jsonl");
  m.def("arm_ratio", &recompdiag::python::arm_ratio, py::arg("baseline"), py::arg("arm"),
        py::arg("trim") = 0.2, py::arg("confidence") = 0.95,
        "arm[i] / baseline[i] over paired rounds: Yuen's trimmed paired test, as `recompdiag bench "
        "overhead` judges its arms ({ratio, low, high, confidence, rounds, includes_one, "
        "wider_than_effect, rounds_to_settle}); ValueError for fewer than two rounds, sides of "
        "different length or a value not positive");
  recompdiag::python::bind_monitor_options(m);
  static const recompdiag::PlateauOptions kPlateauDefaults;
  py::class_<recompdiag::ReduceLrOnPlateau>(
      m, "ReduceLrOnPlateau",
      "Keras's ReduceLROnPlateau (mode min), the C++ trainer's: on_epoch_end(loss, lr) returns "
      "the new lr when it drops, else None")
      .def(py::init([](double factor, int patience, double min_delta, int cooldown, double min_lr) {
             return recompdiag::ReduceLrOnPlateau(
                 recompdiag::PlateauOptions{factor, patience, min_delta, cooldown, min_lr});
           }),
           // The defaults are PlateauOptions' own, and so are the checks (InputError).
           py::arg("factor") = kPlateauDefaults.factor,
           py::arg("patience") = kPlateauDefaults.patience,
           py::arg("min_delta") = kPlateauDefaults.min_delta,
           py::arg("cooldown") = kPlateauDefaults.cooldown,
           py::arg("min_lr") = kPlateauDefaults.min_lr)
      .def("on_epoch_end", &recompdiag::ReduceLrOnPlateau::on_epoch_end, py::arg("loss"),
           py::arg("lr"))
      .def("reset", &recompdiag::ReduceLrOnPlateau::reset);
  py::class_<Run>(m, "Run")
      .def(py::init<py::object, py::object, const std::string&, const std::string&,
                    const recompdiag::probes::MonitorOptions&, const std::string&>(),
           py::arg("model"), py::arg("optimizer"), py::arg("out"), py::arg("header"),
           py::arg("options"), py::arg("metrics_listen"))
      .def("begin_step", &Run::begin_step)
      .def("end_step", &Run::end_step)
      .def("planted_work", &Run::planted_work)
      .def("note_event", &Run::note_event)
      .def("add_compile_time", &Run::add_compile_time)
      .def("add_compile_ledger", &Run::add_compile_ledger)
      .def("time_collective", &Run::time_collective, py::arg("bytes"), py::arg("issue"))
      .def("observe_compile", &Run::observe_compile)
      .def("set_epoch", &Run::set_epoch)
      .def("set_requested_lr", &Run::set_requested_lr)
      .def("set_model", &Run::set_model)
      .def("set_optimizer", &Run::set_optimizer)
      .def("take_turn", &Run::take_turn, py::call_guard<py::gil_scoped_release>())
      .def("takes_turns", &Run::takes_turns)
      .def("probes", &Run::probes)
      .def("metrics_url", &Run::metrics_url)
      .def("close", &Run::close);
}
