#include "recompdiag/reports/trace_writer.h"

#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "recompdiag/reports/words.h"

namespace recompdiag::reports {

namespace {

// Events are formatted by hand: a million-step run is a million slices, and this keeps the
// writer at a few hundred nanoseconds per event.
class TraceOut {
 public:
  explicit TraceOut(std::ostream& out) : out_(out) { buf_.reserve(1 << 16); }
  ~TraceOut() { flush(); }
  TraceOut(const TraceOut&) = delete;
  TraceOut& operator=(const TraceOut&) = delete;

  void begin_event() {
    buf_ += first_ ? "\n" : ",\n";
    first_ = false;
  }
  void raw(const char* s) { buf_ += s; }
  void str(const std::string& s) {
    buf_ += nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  void num(int64_t v) {
    char b[24];
    buf_.append(b, std::to_chars(b, b + sizeof b, v).ptr);
  }
  void num(double v) {
    char b[32];
    buf_.append(b, std::to_chars(b, b + sizeof b, v, std::chars_format::fixed, 3).ptr);
  }
  void maybe_flush() {
    if (buf_.size() > (1 << 16)) flush();
  }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  std::ostream& out_;
  std::string buf_;
  bool first_ = true;
};

void metadata(TraceOut& t, int pid, int tid, const char* what, const std::string& name) {
  t.begin_event();
  t.raw("{\"ph\":\"M\",\"pid\":");
  t.num(static_cast<int64_t>(pid));
  t.raw(",\"tid\":");
  t.num(static_cast<int64_t>(tid));
  t.raw(",\"name\":\"");
  t.raw(what);
  t.raw("\",\"args\":{\"name\":");
  t.str(name);
  t.raw("}}");
}

// The fields every event starts with: `{"ph":...` up to the timestamp.
void event_head(TraceOut& t, const char* ph_fields, int pid, int tid, double ts_us) {
  t.begin_event();
  t.raw(ph_fields);
  t.raw(",\"pid\":");
  t.num(static_cast<int64_t>(pid));
  t.raw(",\"tid\":");
  t.num(static_cast<int64_t>(tid));
  t.raw(",\"ts\":");
  t.num(ts_us);
}

// The name, the optional args object, and the closing brace.
void event_tail(TraceOut& t, const std::string& name, const std::string& args_json) {
  t.raw(",\"name\":");
  t.str(name);
  if (!args_json.empty()) {
    t.raw(",\"args\":");
    t.raw(args_json.c_str());
  }
  t.raw("}");
}

void slice(TraceOut& t, int pid, int tid, const std::string& name, double ts_us, double dur_us,
           const std::string& args_json) {
  event_head(t, "{\"ph\":\"X\"", pid, tid, ts_us);
  t.raw(",\"dur\":");
  t.num(dur_us);
  event_tail(t, name, args_json);
}

void instant(TraceOut& t, int pid, int tid, const std::string& name, const char* cat, double ts_us,
             const std::string& args_json) {
  event_head(t, "{\"ph\":\"i\",\"s\":\"t\"", pid, tid, ts_us);
  t.raw(",\"cat\":\"");
  t.raw(cat);
  t.raw("\"");
  event_tail(t, name, args_json);
}

constexpr int kStepsTrack = 1;
constexpr int kPhasesTrack = 2;
constexpr int kEventsTrack = 3;
constexpr int kStretchesTrack = 4;

void write_run(TraceOut& t, int pid, const char* label, const RunFile& run, const RunAnalysis& r) {
  metadata(t, pid, 0, "process_name", std::string(label) + ": " + run.path);
  metadata(t, pid, kStepsTrack, "thread_name", "steps");
  metadata(t, pid, kPhasesTrack, "thread_name", "phases and warm-up");
  metadata(t, pid, kEventsTrack, "thread_name", "compiles, switches, alerts");
  metadata(t, pid, kStretchesTrack, "thread_name", "slow stretches");

  // Start time of each step on the run's own clock: the sum of the step times before it.
  std::map<int64_t, double> start_us;
  double ts = 0.0;
  std::string name;
  std::string args;
  for (const StepRecord& s : run.steps) {
    start_us.emplace_hint(start_us.end(), s.step, ts);
    const double dur = s.wall_ms * 1000.0;
    name = "step ";
    name += std::to_string(s.step);
    args = "{\"phase\":" + std::to_string(s.phase) +
           ",\"step_in_phase\":" + std::to_string(s.step_in_phase) + "}";
    slice(t, pid, kStepsTrack, name, ts, dur, args);
    ts += dur;
    t.maybe_flush();
  }
  const double end_us = ts;
  auto at = [&](int64_t step) {
    auto it = start_us.lower_bound(step);
    return it == start_us.end() ? end_us : it->second;
  };
  auto end_of = [&](int64_t step) {
    auto it = start_us.upper_bound(step);
    return it == start_us.end() ? end_us : it->second;
  };

  for (const PhaseAnalysis& p : r.phases) {
    const double t0 = at(p.first_step);
    slice(t, pid, kPhasesTrack, "phase " + std::to_string(p.phase), t0, end_of(p.last_step) - t0,
          "{\"steps\":" + std::to_string(p.all.n) +
              ",\"steady_median_ms\":" + nlohmann::json(p.steady.median_ms).dump() + "}");
    if (p.warmup_steps > 0) {
      const int64_t last_warm = p.first_step + p.warmup_steps - 1;
      slice(t, pid, kPhasesTrack, "warm-up", t0, end_of(last_warm) - t0,
            "{\"steps\":" + std::to_string(p.warmup_steps) +
                ",\"extra_s\":" + nlohmann::json(p.warmup_extra_s).dump() + "}");
    }
  }
  for (const SwitchCost& s : r.switches) {
    instant(t, pid, kEventsTrack, "switch to phase " + std::to_string(s.to_phase), "phase",
            at(s.switch_step),
            "{\"recompile_tax_s\":" + nlohmann::json(s.tax_s).dump() +
                ",\"recovery_steps\":" + std::to_string(s.recovery_steps) + "}");
  }
  for (const CompileEvent& e : r.compiles) {
    instant(t, pid, kEventsTrack, "compile", "compile", at(e.step),
            "{\"step\":" + std::to_string(e.step) + ",\"reason\":" +
                nlohmann::json(e.reason).dump(-1, ' ', false,
                                              nlohmann::json::error_handler_t::replace) +
                "}");
  }
  for (const AlertInstance& a : r.alerts) {
    instant(t, pid, kEventsTrack, "alert: " + a.rule, "alert", at(a.step),
            "{\"step\":" + std::to_string(a.step) + ",\"message\":" +
                nlohmann::json(a.message).dump(-1, ' ', false,
                                               nlohmann::json::error_handler_t::replace) +
                "}");
    t.maybe_flush();
  }
  for (const SlowStretch& s : r.slow_stretches) {
    const double t0 = at(s.first_step);
    slice(t, pid, kStretchesTrack,
          "slow: " + std::to_string(s.first_step) + "-" + std::to_string(s.last_step), t0,
          end_of(s.last_step) - t0,
          "{\"attribution\":" +
              nlohmann::json(stretch_sentence(s))
                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
              "}");
  }
}

}  // namespace

void write_chrome_trace(const RunFile& a, const RunFile& b, const Comparison& c,
                        std::ostream& out) {
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"recompdiag\",\"verdict\":\""
      << to_string(c.verdict) << "\"},\"traceEvents\":[";
  {
    TraceOut t(out);
    write_run(t, 1, "A", a, c.a);
    write_run(t, 2, "B", b, c.b);
  }
  out << "\n]}\n";
}

}  // namespace recompdiag::reports
