#pragma once
// The fast path of the run-file reader: step lines as RunWriter writes them, read in one pass
// without a JSON DOM. Anything outside the narrow shape it knows is handed back to simdjson.

#include <cstddef>

#include "recompdiag/core/record.h"

namespace recompdiag::detail {

/// Reads one step line into `out`, reusing its vectors' storage. The line must start with the key
/// "type" set to "step" and hold only what RunWriter writes: keys and strings without escapes or
/// non-ASCII bytes, integers of at most 18 digits where an integer is expected, numbers or null
/// where a number is, flat probe-section objects, arrays of numbers and of alert names, and
/// unknown keys with scalar values. Returns false for any other line (a syntax error, an escape,
/// `3.0` for an integer, a nested unknown value), leaving `out` unspecified: the caller then reads
/// the line with simdjson, which accepts or refuses it. Whatever this function accepts is valid
/// JSON and reads to the same record as the simdjson path. Does not validate the record (times,
/// a missing wall_ms): `*has_wall` says whether wall_ms was present.
bool parse_step_line(const char* data, size_t len, StepRecord& out, bool* has_wall);

}  // namespace recompdiag::detail
