// The extra-work fault: real computation sized on the run's own steps, that changes the time of
// a step and nothing else.

#include "detail/extra_work.h"

#include <doctest/doctest.h>

#include "recompdiag/trainer/trainer.h"

namespace recompdiag::trainer {

TEST_CASE("extra work calibrates on steps 5-24, then adds the same work to every step") {
  detail::ExtraWork work(10.0);
  for (int step = 0; step < 14; ++step) {
    work.after_step(20.0);
    CHECK(work.units() == 0);  // skipped, then timed without extra work
  }
  work.after_step(20.0);
  CHECK(work.units() >= 1);
  for (int step = 15; step < 25; ++step) work.after_step(20.0);  // corrected once, in place
  const int64_t units = work.units();
  CHECK(units >= 1);
  for (int step = 0; step < 5; ++step) work.after_step(step % 2 ? 5.0 : 80.0);
  CHECK(work.units() == units);  // a fixed amount of work, whatever later steps take
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
