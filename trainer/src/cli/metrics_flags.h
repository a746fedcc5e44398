#pragma once
/// \file
/// The live-metrics flags of a CLI11 subcommand (`recompdiag train`, `recompdiag ab`). They live
/// with the CLI, not in the installed recompdiag::prometheus headers, so that CLI11 stays out of
/// that library's link interface: a package user linking the exporter needs no CLI11.

#include <CLI/CLI.hpp>

#include "recompdiag/reports/prometheus_exporter.h"

namespace recompdiag::trainer::cli {

/// Adds --metrics-addr, --pushgateway and --metrics-hold to `cmd`, bound to `options` (which must
/// outlive parsing). Values are checked by `validate` / `make_metrics_sink`, which throw
/// `InputError`, not by CLI11, so a bad address exits 2 like every other bad input.
inline void add_metrics_flags(CLI::App& cmd, reports::MetricsOptions& options) {
  cmd.add_option("--metrics-addr", options.listen_addr,
                 "Serve Prometheus metrics at HOST[:PORT]/metrics while training (off by "
                 "default; port " +
                     std::to_string(reports::kDefaultMetricsPort) + " when omitted, 0 = any free)")
      ->group("Live metrics");
  cmd.add_option("--pushgateway", options.pushgateway_url,
                 "Push all metrics to this Pushgateway URL (http://HOST[:PORT]) at run end; an "
                 "unreachable gateway only warns")
      ->group("Live metrics");
  cmd.add_option("--metrics-hold", options.hold_seconds,
                 "Keep serving metrics this many seconds after the run ends, so a scraper gets "
                 "the final values")
      ->group("Live metrics");
}

}  // namespace recompdiag::trainer::cli
