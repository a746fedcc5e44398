// The column cache: a run read from it is the run its file holds, step for step; a changed run
// file, a damaged or foreign cache file, and an unfinished run are read from the run file.
#include "recompdiag/core/column_cache.h"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "recompdiag/core/run_io.h"
#include "recompdiag/core/synthetic_run.h"
#include "test_util.h"

using namespace recompdiag;

namespace {

// Every line of `run` as the run file's writer would write it, steps included.
std::string lines_of(const RunFile& run) {
  std::string text = to_json_line(run.header) + "\n";
  for (const StepRecord& s : run.steps) text += to_json_line(s) + "\n";
  for (const EventRecord& e : run.events) text += to_json_line(e) + "\n";
  if (run.summary) text += to_json_line(*run.summary) + "\n";
  return text;
}

void check_same_run(const ColumnarRun& cached, const std::string& path) {
  const RunFile file = read_run_file(path);
  CHECK(cached.path == path);
  CHECK(cached.steps.size() == file.steps.size());
  CHECK(lines_of(to_run_file(cached)) == lines_of(file));
}

ColumnCacheOptions options_in(const test::TempDir& dir) {
  ColumnCacheOptions o;
  o.dir = dir.file("cache");
  o.min_steps = 0;
  return o;
}

size_t cache_files(const test::TempDir& dir) {
  size_t n = 0;
  if (!std::filesystem::exists(dir.file("cache"))) return 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("cache")))
    n += e.is_regular_file();
  return n;
}

}  // namespace

TEST_CASE("column cache: a run read again comes from the cache, step for step the same") {
  test::TempDir dir;
  const std::string path = dir.file("run.jsonl");
  SyntheticRunOptions shape;
  shape.phase_steps = {700, 500};
  write_synthetic_run(path, shape);
  ColumnCacheOptions o = options_in(dir);
  const ColumnarRun first = read_columnar_run_cached(path, o);
  CHECK_FALSE(o.hit);
  CHECK(o.written);
  check_same_run(first, path);
  const ColumnarRun again = read_columnar_run_cached(path, o);
  CHECK(o.hit);
  CHECK_FALSE(o.written);
  check_same_run(again, path);
  CHECK(cache_files(dir) == 1);
  // A run file of the fixtures (every probe section a real run writes), through the same cache.
  const std::string fixture = dir.file("fixture.jsonl");
  std::filesystem::copy_file(std::string(RECOMPDIAG_FIXTURES_DIR) + "/compare_baseline.jsonl",
                             fixture);
  read_columnar_run_cached(fixture, o);
  CHECK(o.written);
  check_same_run(read_columnar_run_cached(fixture, o), fixture);
  CHECK(o.hit);
}

TEST_CASE("column cache: a changed run file or a damaged cache is read from the run file") {
  test::TempDir dir;
  const std::string path = dir.file("run.jsonl");
  SyntheticRunOptions shape;
  shape.phase_steps = {300, 300};
  write_synthetic_run(path, shape);
  ColumnCacheOptions o = options_in(dir);
  read_columnar_run_cached(path, o);
  REQUIRE(o.written);
  // Rewritten with other steps: the same path, another run.
  shape.seed = 2;
  shape.phase_steps = {300, 200};
  write_synthetic_run(path, shape);
  const ColumnarRun rewritten = read_columnar_run_cached(path, o);
  CHECK_FALSE(o.hit);
  CHECK(rewritten.steps.size() == 500);
  check_same_run(rewritten, path);
  // The cache file cut in half, then one byte of it flipped: neither is read.
  const std::string cache = std::filesystem::directory_iterator(dir.file("cache"))->path().string();
  const std::string whole = test::read_text(cache);
  test::write_text(cache, whole.substr(0, whole.size() / 2));
  check_same_run(read_columnar_run_cached(path, o), path);
  CHECK_FALSE(o.hit);
  CHECK(o.written);  // and written again
  std::string flipped = test::read_text(cache);
  flipped[flipped.size() - 3] ^= 0x5a;  // inside the end marker
  test::write_text(cache, flipped);
  read_columnar_run_cached(path, o);
  CHECK_FALSE(o.hit);
  test::write_text(cache, "not a cache file");
  check_same_run(read_columnar_run_cached(path, o), path);
  CHECK_FALSE(o.hit);
}

TEST_CASE("column cache: unfinished, short or uncached runs are not written") {
  test::TempDir dir;
  const std::string path = dir.file("run.jsonl");
  SyntheticRunOptions shape;
  shape.phase_steps = {200, 100};
  shape.finished = false;  // killed: it may still grow
  write_synthetic_run(path, shape);
  ColumnCacheOptions o = options_in(dir);
  check_same_run(read_columnar_run_cached(path, o), path);
  CHECK_FALSE(o.written);
  shape.finished = true;
  write_synthetic_run(path, shape);
  o.min_steps = 301;  // shorter than the threshold
  read_columnar_run_cached(path, o);
  CHECK_FALSE(o.written);
  o.min_steps = 0;
  o.dir.clear();  // no cache
  read_columnar_run_cached(path, o);
  CHECK_FALSE(o.written);
  CHECK(cache_files(dir) == 0);
  // A run file that is not one fails as read_columnar_run() fails.
  test::write_text(dir.file("bad.jsonl"), "{\"foo\": 1}\n");
  o.dir = dir.file("cache");
  CHECK_THROWS_AS(read_columnar_run_cached(dir.file("bad.jsonl"), o), RunFileError);
}

TEST_CASE("column cache: it keeps within its bound, the run read least recently leaving first") {
  test::TempDir dir;
  ColumnCacheOptions o = options_in(dir);
  SyntheticRunOptions shape;
  shape.phase_steps = {200, 200};
  for (const char* name : {"a.jsonl", "b.jsonl", "c.jsonl"})
    write_synthetic_run(dir.file(name), shape);
  read_columnar_run_cached(dir.file("a.jsonl"), o);
  const uint64_t one =
      std::filesystem::file_size(std::filesystem::directory_iterator(dir.file("cache"))->path());
  o.max_bytes = 2 * one + one / 2;  // room for two
  read_columnar_run_cached(dir.file("b.jsonl"), o);
  // Back-date both files, b's the older, then use a: b is the least recently read.
  const auto now = std::filesystem::file_time_type::clock::now();
  for (const auto& e : std::filesystem::directory_iterator(dir.file("cache"))) {
    std::filesystem::last_write_time(e.path(), now - std::chrono::hours(2));
  }
  ColumnCacheOptions probe = o;
  read_columnar_run_cached(dir.file("a.jsonl"), probe);
  REQUIRE(probe.hit);
  read_columnar_run_cached(dir.file("c.jsonl"), o);
  CHECK(o.written);
  CHECK(cache_files(dir) == 2);
  read_columnar_run_cached(dir.file("a.jsonl"), o);
  CHECK(o.hit);
  read_columnar_run_cached(dir.file("c.jsonl"), o);
  CHECK(o.hit);
  o.max_bytes = uint64_t{2} << 30;
  read_columnar_run_cached(dir.file("b.jsonl"), o);
  CHECK_FALSE(o.hit);  // it was the one removed
}
