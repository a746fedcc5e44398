// The command line's train flags become the job every rank runs: `train --world-size` and `ab
// --world-size` pass the same timeouts and c10d backend (job_of_world_size()).

#include "cli/train_flags.h"

#include <doctest/doctest.h>

#include <cstdlib>

#include "input_error.h"

using namespace recompdiag;
using namespace recompdiag::trainer::cli;

TEST_CASE("--world-size's job carries the flags' backend and timeouts") {
  TrainFlags f;
  CHECK_FALSE(job_of_world_size(f).has_value());  // one process: no job
  f.world_size = 2;
  f.dist_backend = "nccl";
  f.rendezvous_timeout_s = 7.0;
  f.collective_timeout_s = 9.0;
  const std::optional<runner::DistributedOptions> job = job_of_world_size(f);
  REQUIRE(job.has_value());
  CHECK(job->world_size == 2);
  CHECK(job->backend == "nccl");
  CHECK(job->rendezvous_timeout_s == 7.0);
  CHECK(job->collective_timeout_s == 9.0);
}

TEST_CASE("to_config checks the job's backend: nccl on a CPU device is refused, naming the flag") {
  REQUIRE(std::getenv("RANK") == nullptr);  // this process is no launcher's rank
  TrainFlags f;
  f.world_size = 2;
  CHECK_NOTHROW(to_config(f));  // gloo runs anywhere
  f.dist_backend = "nccl";
  f.config.device = "cpu";
  CHECK(test::input_error([&] { to_config(f); }).rfind("--dist-backend nccl", 0) == 0);
}
