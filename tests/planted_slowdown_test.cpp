// The planted slowdown of `recompdiag calibrate`: its size against the steps it follows, and the
// environment variable that asks for it.
#include "recompdiag/core/planted_slowdown.h"

#include <doctest/doctest.h>

#include <cstdlib>

#include "recompdiag/core/error.h"

using namespace recompdiag;

TEST_CASE("planted slowdown: the environment's percentage, or one line") {
  ::unsetenv(kPlantSlowdownVar);
  CHECK_FALSE(planted_slowdown_from_environment().has_value());
  ::setenv(kPlantSlowdownVar, "10", 1);
  CHECK(planted_slowdown_from_environment() == 10.0);
  for (const char* bad : {"0", "-5", "1000", "ten", "10%"}) {
    CAPTURE(bad);
    ::setenv(kPlantSlowdownVar, bad, 1);
    CHECK_THROWS_WITH_AS(
        planted_slowdown_from_environment(),
        doctest::Contains("RECOMPDIAG_PLANT_SLOWDOWN must be a percentage in (0, 200]"),
        InputError);
  }
  ::unsetenv(kPlantSlowdownVar);
  CHECK_THROWS_AS(PlantedSlowdown(0.0), InputError);
}

TEST_CASE("planted slowdown: sized on the median of the steps' own times, none at first") {
  CHECK(PlantedSlowdown::units_for(25.0, 4.0, 0.001) == 1000);  // 1 ms of 1 us units
  CHECK(PlantedSlowdown::units_for(10.0, 0.7, 0.001) == 70);
  CHECK(PlantedSlowdown::units_for(10.0, 0.0, 0.001) == 0);
  CHECK(PlantedSlowdown::units_for(10.0, 5.0, 0.0) == 0);
  PlantedSlowdown plant(25.0);
  // The first steps (a compile, its warm-up) get none and are not in the median.
  for (int64_t i = 0; i < PlantedSlowdown::kSkipSteps; ++i) CHECK(plant.after_step(800.0) == 0.0);
  CHECK(plant.median_step_ms() == 0.0);
  for (double ms : {4.0, 5.0, 3.0, 4.0, 90.0}) plant.after_step(ms);
  CHECK(plant.median_step_ms() == 4.0);  // one slow step does not move it
  // Only the last kWindow steps count.
  for (size_t i = 0; i < PlantedSlowdown::kWindow; ++i) plant.after_step(2.0);
  CHECK(plant.median_step_ms() == 2.0);
}
