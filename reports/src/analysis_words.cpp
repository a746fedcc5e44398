// A run's analysis in sentences: its probe signals, its slow stretches and a job's stragglers.
#include "detail/format.h"
#include "recompdiag/reports/words.h"

namespace recompdiag::reports {

namespace {

using detail::joined;
using detail::plural;
using detail::printf_string;

std::string shortened(const std::string& s, size_t max_len) {
  return s.size() <= max_len ? s : s.substr(0, max_len - 3) + "...";
}

std::string bytes_words(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) return printf_string("%.1f GB", b / 1e9);
  if (b >= 1e6) return printf_string("%.1f MB", b / 1e6);
  if (b >= 1e3) return printf_string("%.1f kB", b / 1e3);
  return std::to_string(bytes) + " B";
}

// Milliseconds: "45", "2.5".
std::string ms_words(double ms) { return printf_string(ms >= 10 ? "%.0f" : "%.1f", ms); }

std::string steps_words(int64_t first, int64_t last) {
  return first == last ? "step " + std::to_string(first)
                       : "steps " + std::to_string(first) + "-" + std::to_string(last);
}

std::string context_words(const Signal& s) {
  switch (s.event) {
    case EventKind::kPhaseStart:
      return "phase " + std::to_string(s.phase) + " start";
    case EventKind::kLrChange:
      return "lr change";
    case EventKind::kLossWeightsChange:
      return "loss-weight change";
    default:
      return to_string(s.event);
  }
}

}  // namespace

std::string signal_words(const Signal& s) {
  if (s.kind == "context") return context_words(s);
  using Form = CountSignal::Form;
  const ProbeCountField* f =
      detail::count_line(s.kind, [](const ProbeCountField& l) { return l.signal.kind; });
  if (f == nullptr) return std::to_string(s.count) + " " + s.kind;
  const char* one = f->signal.one != nullptr ? f->signal.one : f->one;
  const char* many = f->signal.many != nullptr ? f->signal.many : f->many;
  const std::string counted = plural(s.count, one, many);
  switch (f->signal.form) {
    case Form::kCount:
    case Form::kExtra:
    case Form::kAlerts:
      break;
    case Form::kCopies:
      return counted + " (" + bytes_words(s.bytes) + ")";
    case Form::kCompiles:
      return s.reasons.empty()
                 ? counted
                 : counted + " (reason: " + shortened(joined(s.reasons, "; "), 100) + ")";
    case Form::kOptimizerReset:
      return s.optimizer + " state reset" +
             (s.reasons.empty() ? std::string() : " (" + shortened(s.reasons.front(), 60) + ")");
    case Form::kLr:
      return "lr " + printf_string("%g", s.lr_requested) + " requested but " +
             printf_string("%g", s.lr_effective) + " in effect (" + counted + ")";
    case Form::kMemoryGrowth:
      return "resident memory grew steadily (" + std::string(s.bytes >= 0 ? "+" : "-") +
             bytes_words(s.bytes >= 0 ? s.bytes : -s.bytes) + " over " +
             plural(s.steps, "step", "steps") + ", " + counted + ")";
  }
  return counted;
}

std::string stretch_sentence(const SlowStretch& s) {
  std::string text = steps_words(s.first_step, s.last_step);
  const double r = s.mean_ratio;
  if (s.extra_s > 0.0) {
    text += " ran " + printf_string(r >= 10 ? "%.0fx" : "%.1fx", r) + " the steady median (+" +
            printf_string("%.3g s", s.extra_s) + ")";
  } else {
    // A switch is always listed; one that cost nothing says so instead of calling itself slow.
    text += " ran no slower than the steady median (" + printf_string("%.1fx", r) + ")";
  }
  if (s.signals.empty()) return text + "; no probe signal coincides";
  std::vector<std::string> strongest;
  for (size_t i = 0; i < s.signals.size() && i < 4; ++i) {
    strongest.push_back(signal_words(s.signals[i]));
  }
  return text + "; " + joined(strongest);
}

std::string straggler_cause(const StragglerFinding& f) {
  std::string text;
  switch (f.cause_kind) {
    case StragglerCause::kNone:
      return "";
    case StragglerCause::kCompiled:
      text = "recompiled (reason \"" + f.cause_reason + "\"" +
             (f.compile_ms ? ", " + ms_words(*f.compile_ms) + " ms" : std::string()) + ")";
      break;
    case StragglerCause::kPlanBuilds:
      text = "built " + std::to_string(f.cause_count) + " JIT plan(s)";
      break;
    case StragglerCause::kProfilingRuns:
      text = "ran " + std::to_string(f.cause_count) + " JIT profiling run(s)";
      break;
    case StragglerCause::kOptimizerRebuild:
      text = "rebuilt its optimizer (" + f.cause_reason + ")";
      break;
    case StragglerCause::kAlert:
      text = "raised " + f.cause_reason;
      break;
    case StragglerCause::kComputedLonger:
      text = "computed longer (no probe signal of its own)";
      break;
  }
  return f.every_rank_compiled ? text + " as every rank did, and arrived last" : text;
}

std::string straggler_sentence(const StragglerFinding& f) {
  const std::string steps = steps_words(f.first_step, f.last_step);
  if (f.straggler < 0) {
    return steps + ": every rank was slow alike (their all-reduce waits differ by " +
           ms_words(f.wait_max_ms) + " ms at most): no straggler";
  }
  std::string wait = ms_words(f.wait_min_ms);
  if (ms_words(f.wait_max_ms) != wait) wait += "-" + ms_words(f.wait_max_ms);
  std::vector<std::string> ranks;
  for (const int r : f.waiters) ranks.push_back(std::to_string(r));
  return steps + ": rank " + std::to_string(f.straggler) + " " + straggler_cause(f) + "; " +
         (f.waiters.size() == 1 ? "rank " : "ranks ") + joined(ranks) + " waited " + wait +
         " ms in all-reduce";
}

}  // namespace recompdiag::reports
