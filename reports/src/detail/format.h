#pragma once
// Number and text formatting shared by the renderers.

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "recompdiag/core/compare.h"
#include "recompdiag/core/probe_counts.h"

namespace recompdiag::reports::detail {

inline std::string printf_string(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

/// The parts joined by `separator`: "a, b, c".
inline std::string joined(const std::vector<std::string>& parts, const char* separator = ", ") {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? "" : separator) + parts[i];
  return text;
}

/// The line of kProbeCounts whose name, as `name_of` reads it off a line ("jit_compiles" as a key,
/// a gate or a signal kind), is `name`; null when no line is named so (a run or comparison this
/// version did not make: its words then use the name itself).
template <class NameOf>
const ProbeCountField* count_line(const std::string& name, NameOf name_of) {
  for (const ProbeCountField& f : kProbeCounts) {
    const char* n = name_of(f);
    if (n != nullptr && name == n) return &f;
  }
  return nullptr;
}

/// "1 JIT compile", "2 JIT compiles".
inline std::string plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

/// "a, b and c".
inline std::string listed(const std::vector<std::string>& parts) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return text;
}

/// Milliseconds with three significant digits and trailing zeros kept ("5.00", "12.3", "123").
inline std::string ms(double v) {
  if (!std::isfinite(v)) return "n/a";
  const double a = std::fabs(v);
  if (a >= 100) return printf_string("%.0f", v);
  if (a >= 10) return printf_string("%.1f", v);
  if (a >= 1) return printf_string("%.2f", v);
  return printf_string("%.3g", v);
}

/// Seconds, three significant digits.
inline std::string seconds(double v) {
  if (!std::isfinite(v)) return "n/a";
  return printf_string("%.3g", v);
}

/// A fraction as a percentage with one decimal ("12.5%").
inline std::string percent(double fraction) { return printf_string("%.1f%%", fraction * 100.0); }

/// A ratio with three decimals ("1.302").
inline std::string ratio(double v) {
  if (!std::isfinite(v)) return "n/a";
  return printf_string("%.3f", v);
}

/// "+30.2%" / "-4.1%" from a ratio.
inline std::string change(double r) {
  if (!std::isfinite(r)) return "n/a";
  return printf_string("%+.1f%%", (r - 1.0) * 100.0);
}

/// A p-value: "<0.001" or three decimals.
inline std::string p_value(double p) {
  if (!std::isfinite(p)) return "n/a";
  return p < 0.001 ? "<0.001" : printf_string("%.3f", p);
}

/// A loss value, four significant digits.
inline std::string loss(double v) {
  if (!std::isfinite(v)) return "n/a";
  return printf_string("%.4g", v);
}

inline std::string losses(const std::vector<double>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + loss(values[i]);
  return out.empty() ? "n/a" : out;
}

/// Human verdict: "no change", "regression", "improvement".
inline std::string verdict_words(const char* verdict) {
  std::string v = verdict;
  for (auto& c : v) {
    if (c == '_') c = ' ';
  }
  return v;
}

/// A quality measure's verdict cell: "yes" or "no" when tested across pairs; with one pair,
/// "worse, untested" where B is worse beyond the tolerance, else "no".
inline const char* quality_cell(const ConvergenceComparison& q, const QualityMeasure& m) {
  if (q.tested) return m.regression ? "yes" : "no";
  return q.verdict == ConvergenceVerdict::kUntestedDifference && m.change > 0.0 &&
                 m.worse_pairs == q.pairs
             ? "worse, untested"
             : "no";
}

inline std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// A sentence of the words (Markdown's inline code in backticks) as HTML: escaped, each `...`
/// pair as <code>...</code>; an unpaired backtick stays as it is.
inline std::string html_words(const std::string& s) {
  std::string out;
  size_t from = 0;
  for (;;) {
    const size_t open = s.find('`', from);
    const size_t close = open == std::string::npos ? open : s.find('`', open + 1);
    if (close == std::string::npos) break;
    out += html_escape(s.substr(from, open - from)) + "<code>" +
           html_escape(s.substr(open + 1, close - open - 1)) + "</code>";
    from = close + 1;
  }
  return out + html_escape(s.substr(from));
}

/// Escapes a cell of a Markdown table.
inline std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

/// What a comparison's tests took as their unit, for the line under the verdict: "one pair of
/// runs that took turns step by step, ...", "3 pairs of runs, the pair is the unit", ...
inline std::string unit_sentence(const Comparison& c) {
  const bool paired = !c.phases.empty() && c.phases.front().paired;
  switch (c.unit) {
    case ReplicationUnit::kEpochPairs:
      return "one pair of runs that took turns, paired epoch by epoch (the drift both saw "
             "cancels)";
    case ReplicationUnit::kStepPairs: {
      const int64_t every = c.phases.empty() ? 1 : c.phases.front().turn_steps;
      return "one pair of runs that took turns " +
             (every == 1 ? std::string("step by step")
                         : "every " + std::to_string(every) + " steps") +
             ", each turn paired with the other run's beside it (a level the machine held for "
             "both cancels)";
    }
    case ReplicationUnit::kRuns:
      return paired ? std::to_string(c.paths_a.size()) + " pairs of runs, the pair is the unit"
                    : std::to_string(c.paths_a.size()) + " vs " + std::to_string(c.paths_b.size()) +
                          " runs, the run is the unit";
    case ReplicationUnit::kBlocks:
      break;
  }
  if (!c.options.run_noise) {
    return "one run per side, blocks of consecutive steps resampled; the run-to-run spread is "
           "not measured, so no time verdict";
  }
  return "one run per side, blocks of consecutive steps resampled, with a " +
         printf_string("%.1f%%", *c.options.run_noise * 100.0) + " run-to-run spread " +
         (c.options.run_noise_source.empty() ? std::string("given")
                                             : "from " + c.options.run_noise_source);
}

/// A run's path without its directory; in a job's label ("job 65205fc6 (2 ranks:
/// runs/a.rank0.jsonl ...)", job_run()), the label with its first rank file's name.
inline std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return path;
  const std::string ranks = " ranks: ";
  const auto label = path.rfind(ranks, slash);
  const bool job = path.rfind("job ", 0) == 0 && label != std::string::npos;
  return (job ? path.substr(0, label + ranks.size()) : std::string()) + path.substr(slash + 1);
}

}  // namespace recompdiag::reports::detail
