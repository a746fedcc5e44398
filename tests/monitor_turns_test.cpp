// The Monitor's turns (MonitorOptions::take_turns): the channel RECOMPDIAG_TURNS hands over, taken
// at take_turn() or every N steps in begin_step, outside the step's time; a timeout is noted once.
// And the RunRecorder, which writes a Monitor's run file with how its steps pair under `ab`, a
// rank's header fields, and what further sinks get.
#include <fcntl.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/frontend/ir_emitter.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "recompdiag/core/error.h"
#include "recompdiag/core/record_sink.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/core/turn_channel.h"
#include "recompdiag/probes/monitor.h"
#include "recompdiag/probes/run_recorder.h"
#include "test_util.h"
#include "torch_doctest.h"

using namespace recompdiag;

namespace {

/// The pipes of one side and RECOMPDIAG_TURNS naming them, set for the scope.
struct TurnsInEnvironment {
  int mine[2] = {-1, -1};    // turns to the side
  int theirs[2] = {-1, -1};  // turns from the side
  explicit TurnsInEnvironment(const std::string& fields) {
    REQUIRE(::pipe(mine) == 0);
    REQUIRE(::pipe(theirs) == 0);
    const std::string value = std::to_string(mine[0]) + "," + std::to_string(theirs[1]) +
                              (fields.empty() ? "" : ",") + fields;
    ::setenv(kTurnChannelVar, value.c_str(), 1);
    ::fcntl(theirs[0], F_SETFL, O_NONBLOCK);
  }
  ~TurnsInEnvironment() {
    ::unsetenv(kTurnChannelVar);
    // mine[0] and theirs[1] are the monitor's once it takes them.
    for (int fd : {mine[1], theirs[0]}) ::close(fd);
  }
  void give_turn() const {
    const char byte = 1;
    REQUIRE(::write(mine[1], &byte, 1) == 1);
  }
  int passed() const {
    char buf[16];
    const ssize_t n = ::read(theirs[0], buf, sizeof buf);
    return n > 0 ? static_cast<int>(n) : 0;
  }
};

probes::MonitorOptions light_options() {
  probes::MonitorOptions options;
  options.dispatcher = false;
  options.cupti = false;
  options.nvtx = false;
  options.log_alerts = false;
  return options;
}

bool has_timeout_note(const std::vector<EventRecord>& events) {
  for (const EventRecord& e : events) {
    if (e.kind == EventKind::kNote && e.detail.value("turns", "") == "timed_out") return true;
  }
  return false;
}

}  // namespace

TEST_CASE("monitor turns: take_turn waits for the peer; a silent peer is noted once") {
  torch::nn::Linear model(4, 2);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  TurnsInEnvironment turns("timeout_ms=300");
  probes::Monitor monitor(*model, adam, light_options());
  REQUIRE(monitor.takes_turns());
  turns.give_turn();
  monitor.take_turn();  // the first turn: nothing passed
  CHECK(turns.passed() == 0);
  StepRecord rec;
  monitor.begin_step(0);
  monitor.end_step(rec);
  monitor.take_turn();  // passes, then nothing comes back: times out
  CHECK(turns.passed() == 1);
  CHECK_FALSE(monitor.takes_turns());
  monitor.take_turn();  // returns at once from now on
  const std::vector<EventRecord> events = monitor.take_events();
  CHECK(has_timeout_note(events));
  int notes = 0;
  for (const EventRecord& e : events) notes += e.kind == EventKind::kNote ? 1 : 0;
  CHECK(notes == 1);
}

TEST_CASE("monitor turns: every=N takes a turn in begin_step, outside the step's time") {
  torch::nn::Linear model(4, 2);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  TurnsInEnvironment turns("every=2,timeout_ms=400");
  probes::Monitor monitor(*model, adam, light_options());
  CHECK(monitor.turn_every_steps() == 2);  // what the run header records
  turns.give_turn();
  monitor.take_turn();  // the steps take the turns: returns at once, passing nothing
  CHECK(turns.passed() == 0);
  std::vector<double> wall_ms;
  for (int64_t step = 0; step < 4; ++step) {
    StepRecord rec;
    monitor.begin_step(step);  // steps 0 and 2 wait; step 2 times out after 400 ms
    monitor.end_step(rec);
    wall_ms.push_back(rec.wall_ms);
  }
  CHECK(turns.passed() == 1);  // at step 2
  CHECK(has_timeout_note(monitor.take_events()));
  for (double ms : wall_ms) CHECK(ms < 300.0);  // the 400 ms wait is in no step
}

TEST_CASE("monitor turns: step_turns off takes them at take_turn() whatever every=N says") {
  torch::nn::Linear model(4, 2);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  TurnsInEnvironment turns("every=1,timeout_ms=400");
  probes::MonitorOptions options = light_options();
  options.step_turns = false;  // a data-parallel job's rank 0
  probes::Monitor monitor(*model, adam, options);
  CHECK(monitor.turn_every_steps() == 0);
  turns.give_turn();
  monitor.take_turn();  // the first turn: nothing passed
  for (int64_t step = 0; step < 3; ++step) {
    StepRecord rec;
    monitor.begin_step(step);  // no turns here
    monitor.end_step(rec);
  }
  CHECK(turns.passed() == 0);
}

TEST_CASE("monitor turns: take_turns off leaves the channel alone; a bad value is bad input") {
  torch::nn::Linear model(4, 2);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  {
    TurnsInEnvironment turns("");
    probes::MonitorOptions options = light_options();
    options.take_turns = false;
    probes::Monitor monitor(*model, adam, options);
    CHECK_FALSE(monitor.takes_turns());
    CHECK((::fcntl(turns.mine[0], F_GETFD) & FD_CLOEXEC) == 0);  // not taken
    ::close(turns.mine[0]);
    ::close(turns.theirs[1]);
  }
  ::setenv(kTurnChannelVar, "7", 1);
  CHECK_THROWS_AS(probes::Monitor(*model, adam, light_options()), InputError);
  ::unsetenv(kTurnChannelVar);
}

TEST_CASE("run recorder: header with the turns, steps with phases, events and summary, read back") {
  test::TempDir dir;
  torch::nn::Linear model(4, 2);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  const torch::Tensor x = torch::randn({8, 4});
  TurnsInEnvironment turns("every=1,timeout_ms=200");
  probes::RunRecorderOptions options;
  options.out = dir.file("run.jsonl");
  options.mode = "baseline";
  options.optimizer = "Adam";
  options.config = {{"hidden", 2}};
  options.monitor = light_options();
  options.monitor.health.warmup_steps = 0;
  {
    probes::RunRecorder recorder(*model, adam, options);
    for (int64_t step = 0; step < 6; ++step) {
      if (step == 4) {
        recorder.start_phase(2, "lr 1e-3 -> 1e-4");
        recorder.monitor().set_requested_lr(1e-4);  // not set in place: lr_not_in_effect fires
      }
      recorder.begin_step();  // the peer never answers: the first wait times out, then no turns
      adam.zero_grad();
      const torch::Tensor loss = model(x).pow(2).mean();
      loss.backward();
      adam.step();
      const StepRecord& written = recorder.end_step(loss);
      CHECK(written.step == step);
    }
    CHECK_THROWS_AS(recorder.start_phase(2), InputError);  // phases count up
  }                                                        // the summary
  const RunFile run = read_run_file(options.out);
  CHECK(run.header.mode == "baseline");
  CHECK(run.header.optimizer == "Adam");
  CHECK(run.header.config == nlohmann::json{{"hidden", 2}});
  CHECK(run.header.turn_every_steps == 1);  // under ab's step turns: how its steps pair
  CHECK(run.header.probes.contains("optimizer"));
  // The one wording of how steps are timed, as the trainer and the Python Monitor write it.
  CHECK(run.header.step_timing == probes::step_timing_for("cpu"));
  CHECK(probes::step_timing_for("cuda:0").find("synchronises with the device") !=
        std::string::npos);
  REQUIRE(run.steps.size() == 6);
  CHECK(run.steps[3].phase == 1);
  CHECK(run.steps[4].phase == 2);
  CHECK(run.steps[4].step_in_phase == 0);
  CHECK(run.steps[5].step_in_phase == 1);
  CHECK(run.steps[5].loss > 0.0);
  CHECK(run.steps[5].lr == doctest::Approx(1e-3));
  REQUIRE(run.steps[5].optimizer.has_value());  // the probes' sections are in the lines
  bool phase_event = false;
  for (const EventRecord& e : run.events) phase_event |= e.kind == EventKind::kPhaseStart;
  CHECK(phase_event);
  // The alerts of phase 2 are phase 2's: the recorder sets the phase before the health rules run.
  int64_t phase_2_alerts = 0;
  for (const EventRecord& e : run.events) {
    if (e.kind != EventKind::kAlert) continue;
    CHECK(e.phase == 2);
    ++phase_2_alerts;
  }
  CHECK(phase_2_alerts >= 1);  // lr_not_in_effect, from step 4
  REQUIRE(run.summary.has_value());
  CHECK(run.summary->steps == 6);
  CHECK(run.summary->alerts == phase_2_alerts);
  CHECK(run.summary->status == "completed");
  // No run file named, or a bad Monitor option: one error, before anything is written (the
  // earlier run's file stays whole).
  probes::RunRecorderOptions none = options;
  none.out.clear();
  CHECK_THROWS_AS(probes::RunRecorder(*model, adam, none), InputError);
  probes::RunRecorderOptions bad = options;
  bad.monitor.expected_device = "gpu:x";
  CHECK_THROWS_AS(probes::RunRecorder(*model, adam, bad), InputError);
  bad = options;
  bad.config = nlohmann::json::array({1, 2});
  CHECK_THROWS_WITH_AS(bad.validate(), "RunRecorderOptions::config: not a JSON object", InputError);
  CHECK_THROWS_WITH_AS(probes::RunRecorder(*model, adam, bad),
                       "RunRecorderOptions::config: not a JSON object", InputError);
  CHECK_NOTHROW(options.validate());
  CHECK(read_run_file(options.out).steps.size() == 6);
}

namespace {

// Every record a sink was handed.
struct Collected final : RecordSink {
  std::vector<RunHeader> headers;
  std::vector<StepRecord> steps;
  std::vector<RunSummary> summaries;
  void on_run_start(const RunHeader& h) override { headers.push_back(h); }
  void on_step(const StepRecord& s) override { steps.push_back(s); }
  void on_event(const EventRecord&) override {}
  void on_run_end(const RunSummary& s) override { summaries.push_back(s); }
};

}  // namespace

TEST_CASE("run recorder: a rank's header fields, further sinks, the summary's compiles and time") {
  test::TempDir dir;
  torch::nn::Linear model(4, 2);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  const torch::Tensor x = torch::randn({8, 4});
  Collected sink;
  probes::RunRecorderOptions options;
  options.out = dir.file("run.rank1.jsonl");
  options.mode = "ddp";
  options.header = {{"rank", 1},
                    {"world_size", 2},
                    {"job_id", "job-7"},
                    {"probes", {{"ledger", {{"available", false}, {"reason", "unavailable: x"}}}}}};
  options.sinks = {&sink};
  options.monitor = light_options();
  {
    // A source hands the tensors over, as the Python Monitor's does.
    probes::TrainingStateSource source;
    source.model = [&](std::vector<at::Tensor>& params, std::vector<at::Tensor>&) {
      for (const at::Tensor& p : model->parameters()) params.push_back(p);
    };
    probes::RunRecorder recorder(std::move(source), options);
    auto unit = torch::jit::compile("def loss(y):\n  return (y * y).mean()\n");
    for (int64_t step = 0; step < 4; ++step) {
      if (step == 2) {
        recorder.note_event(EventKind::kPhaseStart, "loss weights", {{"phase", 2}});
        recorder.monitor().watch(unit);  // one JIT compile, at step 2
      }
      recorder.begin_step();
      adam.zero_grad();
      const torch::Tensor loss = unit->run_method("loss", model(x)).toTensor();
      loss.backward();
      adam.step();
      recorder.end_step(loss);
    }
  }
  const RunFile run = read_run_file(options.out);
  CHECK(run.header.mode == "ddp");
  CHECK(run.header.rank == 1);
  CHECK(run.header.world_size == 2);
  CHECK(run.header.job_id == "job-7");
  // The writer's own probe beside the Monitor's.
  CHECK(run.header.probes["ledger"]["reason"] == "unavailable: x");
  CHECK(run.header.probes.contains("placement"));
  REQUIRE(run.steps.size() == 4);
  CHECK(run.steps[2].phase == 2);
  CHECK(run.steps[2].step_in_phase == 0);
  CHECK(run.steps[3].step_in_phase == 1);
  REQUIRE(run.steps[2].jit.has_value());
  CHECK(run.steps[2].jit->compiles == 1);
  REQUIRE(run.summary.has_value());
  CHECK(run.summary->compiles == 1);
  double steps_s = 0.0;
  for (const StepRecord& s : run.steps) steps_s += s.wall_ms / 1000.0;
  CHECK(run.summary->elapsed_s >= steps_s);  // the run's wall time, its steps within it
  // The sink got what the file got.
  REQUIRE(sink.headers.size() == 1);
  CHECK(sink.headers[0].job_id == "job-7");
  CHECK(sink.steps.size() == 4);
  REQUIRE(sink.summaries.size() == 1);
  CHECK(sink.summaries[0].compiles == 1);

  // A sink alone needs no file; a header field the parser refuses is one error, and no file.
  probes::RunRecorderOptions no_file = options;
  no_file.out.clear();
  probes::RunRecorder(probes::TrainingStateSource{}, no_file).close();
  CHECK(sink.headers.size() == 2);
  probes::RunRecorderOptions bad = options;
  bad.out = dir.file("bad.jsonl");
  bad.header = {{"world_size", "two"}};
  CHECK_THROWS_AS(probes::RunRecorder(*model, adam, bad), InputError);
  CHECK_FALSE(std::filesystem::exists(bad.out));
  // A Monitor that refuses to start (its turn channel malformed) leaves no file either.
  probes::RunRecorderOptions refused = options;
  refused.out = dir.file("refused.jsonl");
  ::setenv(kTurnChannelVar, "not,fds", 1);
  CHECK_THROWS_AS(probes::RunRecorder(*model, adam, refused), InputError);
  ::unsetenv(kTurnChannelVar);
  CHECK_FALSE(std::filesystem::exists(refused.out));
}
