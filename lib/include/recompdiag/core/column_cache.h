#pragma once
/// \file
/// A run file's columns kept in a cache, so that reading a long run a second time (the `compare`
/// after `ab`, `history add` after the gate) costs the columns' bytes, a few per step, instead of
/// parsing the run file's several hundred. The first read of a finished run of at least
/// `min_steps` steps writes its columns bit for bit, with its header, events and summary, to
/// `dir` (never beside the run file); a later read takes them while the run file's path, size,
/// modification time and inode are the same. Anything else (another version of recompdiag, a
/// damaged or foreign cache file, a cache that cannot be written) falls back to the run file.
/// The cache keeps at most `max_bytes` (2 GiB), the runs read least recently leaving first.
///
///     ColumnarRun run = read_columnar_run_cached("long.jsonl");  // parses, caches
///     ColumnarRun again = read_columnar_run_cached("long.jsonl");  // the cache: ~30x faster

#include <cstdint>
#include <string>

#include "recompdiag/core/step_columns.h"

namespace recompdiag {

/// Where and when columns are cached. Plain data.
struct ColumnCacheOptions {
  /// The cache directory; empty: no cache. Default: column_cache_dir().
  std::string dir;
  /// Runs shorter than this are read from their file: they parse fast anyway.
  int64_t min_steps = 100000;
  /// The cache's size bound: after a write, the files read least recently are removed until the
  /// rest fit (a read from the cache counts as a use).
  uint64_t max_bytes = uint64_t{2} << 30;
  /// Set by read_columnar_run_cached(): whether the run came from the cache, and whether its
  /// columns were written to it.
  bool hit = false;
  bool written = false;

  /// Throws InputError naming the field for a negative `min_steps` or a `max_bytes` of 0.
  /// read_columnar_run_cached() calls it.
  void validate() const;
};

/// The default cache directory: $RECOMPDIAG_COLUMN_CACHE ("off" or empty: none), else
/// $XDG_CACHE_HOME/recompdiag/columns, else ~/.cache/recompdiag/columns.
std::string column_cache_dir();

/// read_columnar_run() through the cache (see above): the same run, the same errors.
ColumnarRun read_columnar_run_cached(const std::string& path);
ColumnarRun read_columnar_run_cached(const std::string& path, ColumnCacheOptions& options);

}  // namespace recompdiag
