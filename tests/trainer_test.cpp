// The two-phase trainer on real (small) runs.

#include "recompdiag/trainer/trainer.h"

#include <cmath>

#include "recompdiag/core/error.h"
#include "recompdiag/core/lr_plateau.h"
#include "recompdiag/core/run_io.h"
#include "recompdiag/trainer/dist_backend.h"
#include "recompdiag/trainer/model.h"
#include "test_util.h"
#include "torch_doctest.h"

using namespace recompdiag;
using namespace recompdiag::trainer;

namespace {

TrainConfig small_config(TrainMode mode, OptimizerHandoff handoff = OptimizerHandoff::kFresh) {
  TrainConfig c;
  c.mode = mode;
  c.handoff = handoff;
  c.phases = {{6, {0.7, 0.3}, 0.01}, {3, {0.99, 0.01}, 0.001}};
  c.steps_per_epoch = 4;
  c.batch_size = 8;
  c.seq_len = 10;
  c.hidden = 16;
  c.device = "cpu";
  c.seed = 7;
  c.threads = 1;
  c.log_alerts = false;
  return c;
}

/// Keeps every record in memory.
struct CollectingSink : RecordSink {
  std::vector<StepRecord> steps;
  std::vector<EventRecord> events;
  int starts = 0, ends = 0;
  void on_run_start(const RunHeader&) override { ++starts; }
  void on_step(const StepRecord& s) override { steps.push_back(s); }
  void on_event(const EventRecord& e) override { events.push_back(e); }
  void on_run_end(const RunSummary&) override { ++ends; }
  int count(EventKind k) const {
    int n = 0;
    for (const auto& e : events) n += e.kind == k;
    return n;
  }
};

struct Run {
  CollectingSink sink;
  TrainResult result;
};

std::unique_ptr<Run> train(const TrainConfig& c) {
  auto run = std::make_unique<Run>();
  TwoPhaseTrainer trainer(c);
  trainer.add_sink(run->sink);
  run->result = trainer.run();
  return run;
}

double mean_loss(const std::vector<StepRecord>& steps, size_t from, size_t to) {
  double s = 0;
  for (size_t i = from; i < to; ++i) s += steps[i].loss;
  return s / static_cast<double>(to - from);
}

}  // namespace

TEST_CASE("a run writes header, one line per step, events and summary; the loss falls") {
  test::TempDir dir;
  const std::string path = dir.file("run.jsonl");
  TrainConfig c = small_config(TrainMode::kRecompile);
  {
    TwoPhaseTrainer trainer(c);
    RunFileSink file(path);
    trainer.add_sink(file);
    trainer.run();
  }
  RunFile f = read_run_file(path);
  CHECK(f.header.mode == "recompile");
  CHECK(f.header.device_used == "cpu");
  CHECK(f.header.config["phases"].size() == 2);
  REQUIRE(f.steps.size() == static_cast<size_t>(c.total_steps()));
  for (size_t i = 0; i < f.steps.size(); ++i) CHECK(f.steps[i].step == static_cast<int64_t>(i));
  CHECK(f.steps[24].phase == 2);
  CHECK(f.steps[24].step_in_phase == 0);
  CHECK(f.steps[24].loss_weights == std::vector<double>{0.99, 0.01});
  CHECK(f.steps[24].lr == doctest::Approx(0.001));
  REQUIRE(f.summary);
  CHECK(f.summary->steps == c.total_steps());
  CHECK(f.skipped.empty());
  // Phase 1: the last epoch's mean loss is well below the first's.
  CHECK(mean_loss(f.steps, 20, 24) < 0.8 * mean_loss(f.steps, 0, 4));

  int phase_starts = 0;
  for (const auto& e : f.events) phase_starts += e.kind == EventKind::kPhaseStart;
  CHECK(phase_starts == 2);
}

TEST_CASE("compiles: recompile twice with reasons, mutable once") {
  auto rec = train(small_config(TrainMode::kRecompile));
  auto mut = train(small_config(TrainMode::kMutable));
  CHECK(rec->result.compiles == 2);
  CHECK(mut->result.compiles == 1);
  REQUIRE(rec->sink.count(EventKind::kCompile) == 2);
  CHECK(mut->sink.count(EventKind::kCompile) == 1);
  std::vector<std::string> reasons;
  for (const auto& e : rec->sink.events)
    if (e.kind == EventKind::kCompile) reasons.push_back(e.reason);
  CHECK(reasons[0] == "initial");
  CHECK(reasons[1] == "phase 2: loss weights [0.7,0.3] -> [0.99,0.01], lr 0.01 -> 0.001");
  CHECK(mut->sink.count(EventKind::kLossWeightsChange) == 1);
  CHECK(rec->sink.count(EventKind::kOptimizerRebuild) == 1);
  CHECK(mut->sink.count(EventKind::kOptimizerRebuild) == 0);
}

TEST_CASE("same seed: phase 1 is the same in both modes") {
  // Phase 1 differs only in where the weights live (a literal 0.7 versus a float tensor holding
  // 0.7f); both round to the same float, so only the graph executor's op order could differ.
  auto rec = train(small_config(TrainMode::kRecompile));
  auto mut = train(small_config(TrainMode::kMutable));
  REQUIRE(rec->sink.steps.size() == mut->sink.steps.size());
  for (size_t i = 0; i < 24; ++i) {
    CHECK(rec->sink.steps[i].loss == doctest::Approx(mut->sink.steps[i].loss).epsilon(1e-5));
  }
  // Final parameters after phase 1 only.
  TrainConfig a = small_config(TrainMode::kRecompile);
  TrainConfig b = small_config(TrainMode::kMutable);
  a.phases.resize(1);
  b.phases.resize(1);
  auto ra = train(a);
  auto rb = train(b);
  const auto& pa = ra->result.final_parameters;
  const auto& pb = rb->result.final_parameters;
  REQUIRE(pa.size() == pb.size());
  double worst = 0;
  for (size_t i = 0; i < pa.size(); ++i) {
    worst = std::max(worst, std::abs(pa[i] - pb[i]) / std::max(1e-3, std::abs(double(pa[i]))));
  }
  CHECK(worst < 1e-5);
}

TEST_CASE("phase 2: migrate follows mutable, fresh restarts Adam") {
  auto mut = train(small_config(TrainMode::kMutable));
  auto mig = train(small_config(TrainMode::kRecompile, OptimizerHandoff::kMigrate));
  auto fresh = train(small_config(TrainMode::kRecompile, OptimizerHandoff::kFresh));
  const int64_t phase1 = 24, total = 36;
  // Adam's step counter: carried over by mutable and migrate, restarted by fresh.
  CHECK(mut->result.adam_step_at_phase_end == std::vector<int64_t>{phase1, total});
  CHECK(mig->result.adam_step_at_phase_end == std::vector<int64_t>{phase1, total});
  CHECK(fresh->result.adam_step_at_phase_end == std::vector<int64_t>{phase1, total - phase1});

  double mig_gap = 0, fresh_gap = 0;
  for (size_t i = phase1; i < static_cast<size_t>(total); ++i) {
    mig_gap = std::max(mig_gap, std::abs(mig->sink.steps[i].loss - mut->sink.steps[i].loss));
    fresh_gap = std::max(fresh_gap, std::abs(fresh->sink.steps[i].loss - mut->sink.steps[i].loss));
  }
  CHECK(mig_gap < 1e-4);
  // A fresh Adam's first steps are full-size (bias correction on empty moments): it leaves the
  // path the continuous state takes.
  CHECK(fresh_gap > 10 * mig_gap);
  CHECK(fresh_gap > 1e-4);
}

TEST_CASE("gradient clipping and zero-weight time steps") {
  TrainConfig c = small_config(TrainMode::kMutable);
  torch::manual_seed(3);
  SeqModel model(c.input_size, c.hidden, c.num_classes, c.rnn);
  auto params = model->step_parameters();
  auto batches = make_synthetic_batches(c, torch::kCPU);
  StepSpec spec;
  spec.hidden = c.hidden;
  CompiledStep step(spec);
  torch::Tensor weights = torch::tensor({0.7, 0.3}, torch::kFloat);

  SUBCASE("every gradient element is within the clip value") {
    // Blow the loss up so raw gradients exceed the clip value, then clip.
    StepLosses l = step.run(batches[0], params, &weights);
    (l.loss * 1000).backward();
    double raw_max = 0;
    for (auto& p : params) raw_max = std::max(raw_max, p.grad().abs().max().item<double>());
    REQUIRE(raw_max > c.clip_value);
    clip_gradients(params, c.clip_value);
    // In float32, the clip bound is float(0.1).
    for (auto& p : params)
      CHECK(p.grad().abs().max().item<float>() <= static_cast<float>(c.clip_value));
  }

  SUBCASE("targets under weight 0 do not change the loss") {
    Batch b = batches[0];
    torch::Tensor padding = b.sample_weight.eq(0);
    REQUIRE(padding.any().item<bool>());
    Batch changed = b;
    changed.y_cat = torch::where(padding, (b.y_cat + 1) % c.num_classes, b.y_cat);
    changed.y_bin = torch::where(padding, 1 - b.y_bin, b.y_bin);
    StepLosses before = step.run(b, params, &weights);
    StepLosses after = step.run(changed, params, &weights);
    CHECK(before.loss.item<double>() == after.loss.item<double>());
    // ...while changing a weighted target does change it.
    Batch weighted = b;
    weighted.y_bin = torch::where(padding, b.y_bin, 1 - b.y_bin);
    CHECK(step.run(weighted, params, &weights).loss.item<double>() != before.loss.item<double>());
  }
}

TEST_CASE("the compiled step source bakes weights only in recompile mode") {
  StepSpec baked;
  baked.constant_loss_weights = std::vector<double>{0.99, 0.01};
  std::string src = step_source(baked);
  CHECK(src.find("loss = 0.98999999999999999 * cat_loss + 0.01 * bin_loss") != std::string::npos);
  CHECK(src.find("loss_weights: Tensor") == std::string::npos);
  StepSpec mutable_spec;
  CHECK(step_source(mutable_spec).find("loss_weights[0] * cat_loss") != std::string::npos);
}

TEST_CASE("ReduceLROnPlateau follows Keras") {
  PlateauOptions o;
  o.patience = 2;
  o.cooldown = 1;
  o.min_lr = 0.0005;
  ReduceLrOnPlateau p(o);
  CHECK_FALSE(p.on_epoch_end(1.0, 0.01));   // best
  CHECK_FALSE(p.on_epoch_end(1.0, 0.01));   // wait 1
  auto lr = p.on_epoch_end(0.99995, 0.01);  // below min_delta: wait 2 -> reduce
  REQUIRE(lr);
  CHECK(*lr == doctest::Approx(0.001));
  CHECK_FALSE(p.on_epoch_end(1.0, 0.001));  // cooldown ends, wait 1
  lr = p.on_epoch_end(1.0, 0.001);          // wait 2 -> reduce, clamped at min_lr
  REQUIRE(lr);
  CHECK(*lr == doctest::Approx(0.0005));
  CHECK_FALSE(p.on_epoch_end(0.5, 0.0005));  // improvement
  p.reset();
  CHECK_FALSE(p.on_epoch_end(5.0, 0.0005));  // history forgotten: 5.0 is the new best
}

TEST_CASE("PlateauOptions::validate names the fields as the caller spells them") {
  PlateauOptions o;
  o.factor = 1.0;
  CHECK_THROWS_WITH_AS(o.validate("--plateau-"), "--plateau-factor must be in (0, 1)", InputError);
  CHECK_THROWS_WITH_AS(ReduceLrOnPlateau{o}, "factor must be in (0, 1)", InputError);
  o = PlateauOptions{};
  o.min_delta = -1e-3;
  CHECK_THROWS_WITH_AS(o.validate("--plateau-"),
                       "--plateau-min-lr and --plateau-min-delta must be >= 0", InputError);
  o = PlateauOptions{};
  o.patience = -1;
  CHECK_THROWS_WITH_AS(o.validate(), "patience and cooldown must be >= 0", InputError);
  CHECK_NOTHROW(PlateauOptions{}.validate());
}

TEST_CASE(
    "the monitor sees the recompile: JIT compiles at start and switch, Adam reset with fresh") {
  auto rec = train(small_config(TrainMode::kRecompile, OptimizerHandoff::kFresh));
  auto mig = train(small_config(TrainMode::kRecompile, OptimizerHandoff::kMigrate));
  auto mut = train(small_config(TrainMode::kMutable));
  auto compile_steps = [](const Run& r) {
    std::vector<int64_t> at;
    for (const auto& s : r.sink.steps) {
      REQUIRE(s.jit);
      if (s.jit->compiles > 0) at.push_back(s.step);
    }
    return at;
  };
  CHECK(compile_steps(*rec) == std::vector<int64_t>{0, 24});
  CHECK(compile_steps(*mig) == std::vector<int64_t>{0, 24});
  CHECK(compile_steps(*mut) == std::vector<int64_t>{0});

  auto reset_steps = [](const Run& r) {
    std::vector<int64_t> at;
    for (const auto& s : r.sink.steps) {
      REQUIRE(s.optimizer);
      if (s.optimizer->state_reset) at.push_back(s.step);
    }
    return at;
  };
  CHECK(reset_steps(*rec) == std::vector<int64_t>{24});
  CHECK(reset_steps(*mig).empty());
  CHECK(reset_steps(*mut).empty());

  auto has_alert = [](const Run& r, int64_t step, const std::string& rule) {
    for (const auto& a : r.sink.steps[static_cast<size_t>(step)].alerts)
      if (a == rule) return true;
    return false;
  };
  CHECK(has_alert(*rec, 24, "optimizer_state_reset"));
  CHECK_FALSE(has_alert(*mig, 24, "optimizer_state_reset"));
  CHECK(has_alert(*rec, 24, "compile_after_warmup"));
  CHECK_FALSE(has_alert(*mut, 24, "compile_after_warmup"));
  // The lr in effect matches the requested one in every mode: no lr trap here.
  for (const auto* r : {rec.get(), mig.get(), mut.get()}) {
    for (const auto& s : r->sink.steps) CHECK(s.optimizer->lr_effective == doctest::Approx(s.lr));
  }
}

TEST_CASE("progress goes to the sink: one report per epoch, its loss the mean of its steps") {
  struct CollectingProgress : trainer::ProgressSink {
    std::vector<trainer::EpochProgress> epochs;
    void on_epoch_end(const trainer::EpochProgress& p) override { epochs.push_back(p); }
  } progress;
  TrainConfig c = small_config(TrainMode::kMutable);
  CollectingSink sink;
  TwoPhaseTrainer trainer(c);
  trainer.add_sink(sink);
  trainer.set_progress(&progress);
  trainer.run();
  REQUIRE(progress.epochs.size() == 9);
  const trainer::EpochProgress& last_of_phase1 = progress.epochs[5];
  CHECK(last_of_phase1.phase == 1);
  CHECK(last_of_phase1.epoch == 5);
  CHECK(last_of_phase1.epochs == 6);
  CHECK(last_of_phase1.steps_done == 24);
  CHECK(last_of_phase1.loss == doctest::Approx(mean_loss(sink.steps, 20, 24)));
  CHECK(progress.epochs[6].phase == 2);
  CHECK(progress.epochs[6].lr == doctest::Approx(0.001));
  CHECK(std::string(progress.epochs[8].mode) == "mutable");
}

TEST_CASE("the c10d backend: gloo anywhere, nccl only where this build has it and on CUDA") {
  runner::DistributedOptions o;
  o.world_size = 2;
  CHECK_NOTHROW(o.validate());
  CHECK_NOTHROW(check_backend(o, "cpu"));
  o.backend = "mpi";
  CHECK_THROWS_WITH_AS(o.validate(), "--dist-backend must be gloo or nccl, got 'mpi'", InputError);
  o.backend = "nccl";
  CHECK_NOTHROW(o.validate());
  // On the host NCCL never runs: the message says why (this build's reason first).
  const std::string why =
      nccl_available() ? "--dist-backend nccl needs the ranks on CUDA (--device cuda), not cpu"
                       : "--dist-backend nccl: unavailable: " + why_no_nccl();
  CHECK_THROWS_WITH_AS(check_backend(o, "cpu"), why.c_str(), InputError);
  CHECK(why_no_nccl().empty() == nccl_available());
  if (nccl_available()) CHECK_NOTHROW(check_backend(o, "cuda:0"));
}
