#pragma once
/// \file
/// Where and when a record was made: this host's name and the time now, as run headers,
/// calibration files and stored runs write them.
///
///     header.host = this_host_name();     // "ci-runner-7"
///     header.start_time = utc_now_iso();  // "2026-12-06T06:15:52Z"

#include <string>

namespace recompdiag {

/// gethostname(), or "unknown" when it fails.
std::string this_host_name();

/// The time now, UTC, ISO 8601 to the second: "2026-12-06T06:15:52Z".
std::string utc_now_iso();

}  // namespace recompdiag
