// The extra-work fault: real computation sized on the run's own steps, that changes the time of
// a step and nothing else.

#include "training/extra_work.h"

#include <doctest/doctest.h>

#include "recompdiag/trainer/trainer.h"

namespace recompdiag::trainer {

TEST_CASE("extra work: the count is P percent of the training over one unit's share") {
  CHECK(detail::extra_work_units(10.0, 0.01) == 10);  // 10 units of 1% each
  CHECK(detail::extra_work_units(20.0, 0.004) == 50);
  CHECK(detail::extra_work_units(5.0, 0.004) == 13);  // 12.5, rounded
  CHECK(detail::extra_work_units(5.0, 0.5) == 1);     // a unit dearer than the target: still one
  CHECK(detail::extra_work_units(5.0, 0.0) >= 1);     // no share measured: large, not a crash
}

TEST_CASE("extra work: a correction moves the count at most 2x either way") {
  CHECK(detail::corrected_extra_work_units(40, 10.0, 0.0025) == 40);  // on target: unchanged
  CHECK(detail::corrected_extra_work_units(40, 10.0, 0.002) == 50);   // the work was cheaper
  CHECK(detail::corrected_extra_work_units(40, 10.0, 0.0001) == 80);  // a spoilt window: 2x
  CHECK(detail::corrected_extra_work_units(40, 10.0, 0.5) == 20);     // and 1/2x the other way
  CHECK(detail::corrected_extra_work_units(1, 10.0, 0.5) == 1);       // never below one unit
  CHECK(detail::corrected_extra_work_units(0, 10.0, 0.001) == 2);     // unsized: from one
}

TEST_CASE("extra work: median_of") {
  CHECK(detail::median_of({}) == 0.0);
  CHECK(detail::median_of({3.0, 1.0, 2.0}) == 2.0);
  CHECK(detail::median_of({4.0, 1.0, 3.0, 2.0}) == 2.5);
}

TEST_CASE("extra work starts at step 3, then is corrected every 5 steps, 2x at most") {
  detail::ExtraWork work(10.0);
  for (int step = 0; step < 3; ++step) {
    work.after_step(20.0);
    CHECK(work.units() == 0);  // the compile and its profiling runs are left alone
  }
  work.after_step(20.0);  // step 3: a first count, and the work from this step on
  int64_t units = work.units();
  CHECK(units >= 1);
  for (int step = 4; step < 60; ++step) {
    work.after_step(step % 7 ? 20.0 : 80.0);
    const int64_t now = work.units();
    CHECK(now >= 1);
    if ((step + 1 - 3) % 5 != 0) {
      CHECK(now == units);  // a fixed amount of work between corrections
    } else {
      CHECK(now <= 2 * units);
      CHECK(now >= units / 2);
    }
    units = now;
  }
}

TEST_CASE("extra-work is injected: the run trains exactly as the healthy one does") {
  TrainConfig c;
  c.mode = TrainMode::kMutable;
  c.phases = {{5, {0.7, 0.3}, 0.01}, {2, {0.99, 0.01}, 0.001}};
  c.steps_per_epoch = 4;
  c.batch_size = 8;
  c.seq_len = 10;
  c.hidden = 16;
  c.device = "cpu";
  c.threads = 1;
  c.log_alerts = false;
  TrainResult healthy = TwoPhaseTrainer(c).run();
  c.faults = parse_faults("extra-work=50");
  TwoPhaseTrainer faulty(c);
  CHECK(faulty.header().config["faults"] == nlohmann::json::array({"extra-work=50"}));
  TrainResult slowed = faulty.run();
  CHECK(slowed.summary.steps == healthy.summary.steps);
  // The work runs beside the model, on its own buffers: same seed, same parameters.
  CHECK(slowed.final_parameters == healthy.final_parameters);
}

}  // namespace recompdiag::trainer
