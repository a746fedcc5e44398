#include <algorithm>
#include <cmath>
#include <ostream>
#include <sstream>

#include "detail/format.h"
#include "recompdiag/core/version.h"
#include "recompdiag/reports/renderer.h"

namespace recompdiag::reports {

namespace {

using detail::html_escape;

constexpr const char* kColorA = "#1f6fb4";
constexpr const char* kColorB = "#e8710a";
constexpr const char* kHeadColors[] = {"#2a9d3a", "#c8283a", "#7b4fb0", "#8c564b", "#d4a017"};

constexpr const char* kStyle = R"(
body{font:15px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1d2330;margin:0;background:#f5f6f8}
main{max-width:1160px;margin:0 auto;padding:20px 24px 48px}
h1{margin:0 0 6px;font-size:30px}
h2{font-size:19px;margin:30px 0 10px;border-bottom:1px solid #d9dde3;padding-bottom:4px}
h3{font-size:15px;margin:14px 0 6px}
.verdict{border-radius:8px;padding:18px 22px;color:#fff}
.verdict p{margin:4px 0}
.regression{background:#b3261e}.improvement{background:#1e7b34}.no_change{background:#44546a}
.inconclusive{background:#8a6d1e}
.runs{opacity:.92;font-size:14px}
table{border-collapse:collapse;background:#fff;margin:6px 0;font-size:14px}
th,td{border:1px solid #d9dde3;padding:4px 9px;text-align:right;white-space:nowrap}
td.l{white-space:normal}
th{background:#eef0f4;white-space:normal;vertical-align:bottom}
td.l,th.l{text-align:left}
td.v-regression{color:#b3261e;font-weight:600}td.v-improvement{color:#1e7b34;font-weight:600}
.chart{background:#fff;border:1px solid #d9dde3;border-radius:6px;padding:6px;margin:6px 0}
.legend{font-size:13px;color:#4a5363;margin:2px 0 0}
.sw{display:inline-block;width:22px;height:10px;margin:0 5px 0 12px;vertical-align:middle}
ul{margin:4px 0;padding-left:22px}
li{margin:3px 0}
.warn li{color:#7a4b00}
.muted{color:#5b6473}
pre{background:#fff;border:1px solid #d9dde3;padding:10px;overflow:auto;font-size:12px;max-height:420px}
svg text{font:12px -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;fill:#3b4352}
)";

std::string num(double v) { return detail::printf_string("%.1f", v); }

// Axis ticks at 1, 2 or 5 times a power of ten.
std::vector<double> linear_ticks(double lo, double hi, int target) {
  std::vector<double> out;
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push_back(t);
  return out;
}

std::string tick_label(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e6) return detail::printf_string("%gM", v / 1e6);
  if (a >= 1e4) return detail::printf_string("%gk", v / 1e3);
  return detail::printf_string("%g", v);
}

// A plot area mapping data to SVG coordinates; log-scaled y when asked.
struct Frame {
  double width = 1100;
  double height = 320;
  double left = 64;
  double right = 16;
  double top = 14;
  double bottom = 38;
  double x_lo = 0;
  double x_hi = 1;
  double y_lo = 0;
  double y_hi = 1;
  bool log_y = false;

  double x(double v) const { return left + (v - x_lo) / (x_hi - x_lo) * (width - left - right); }
  double y(double v) const {
    double t = log_y ? (std::log10(std::max(v, 1e-12)) - std::log10(y_lo)) /
                           (std::log10(y_hi) - std::log10(y_lo))
                     : (v - y_lo) / (y_hi - y_lo);
    return top + (1.0 - t) * (height - top - bottom);
  }
  double plot_bottom() const { return height - bottom; }
};

void open_svg(const Frame& f, const std::string& label, std::ostream& out) {
  out << "<svg class=\"chart\" role=\"img\" aria-label=\"" << html_escape(label) << "\" width=\""
      << f.width << "\" height=\"" << f.height << "\" viewBox=\"0 0 " << f.width << " " << f.height
      << "\" xmlns=\"http://www.w3.org/2000/svg\">\n";
}

void x_axis(const Frame& f, const std::string& title, std::ostream& out) {
  for (double t : linear_ticks(f.x_lo, f.x_hi, 10)) {
    out << "<line x1=\"" << num(f.x(t)) << "\" x2=\"" << num(f.x(t)) << "\" y1=\"" << f.top
        << "\" y2=\"" << f.plot_bottom() << "\" stroke=\"#edf0f3\"/>"
        << "<text x=\"" << num(f.x(t)) << "\" y=\"" << f.plot_bottom() + 15
        << "\" text-anchor=\"middle\">" << tick_label(t) << "</text>\n";
  }
  out << "<line x1=\"" << f.left << "\" x2=\"" << f.width - f.right << "\" y1=\"" << f.plot_bottom()
      << "\" y2=\"" << f.plot_bottom() << "\" stroke=\"#8a93a3\"/>\n";
  out << "<text x=\"" << (f.left + f.width - f.right) / 2 << "\" y=\"" << f.height - 4
      << "\" text-anchor=\"middle\">" << html_escape(title) << "</text>\n";
}

void y_axis(const Frame& f, const std::vector<double>& ticks, const std::string& title,
            std::ostream& out) {
  for (double t : ticks) {
    out << "<line x1=\"" << f.left << "\" x2=\"" << f.width - f.right << "\" y1=\"" << num(f.y(t))
        << "\" y2=\"" << num(f.y(t)) << "\" stroke=\"#e3e7ec\"/>"
        << "<text x=\"" << f.left - 6 << "\" y=\"" << num(f.y(t) + 4) << "\" text-anchor=\"end\">"
        << tick_label(t) << "</text>\n";
  }
  out << "<line x1=\"" << f.left << "\" x2=\"" << f.left << "\" y1=\"" << f.top << "\" y2=\""
      << f.plot_bottom() << "\" stroke=\"#8a93a3\"/>\n";
  const double mid = (f.top + f.plot_bottom()) / 2;
  out << "<text transform=\"translate(14," << num(mid) << ") rotate(-90)\" text-anchor=\"middle\">"
      << html_escape(title) << "</text>\n";
}

// Log ticks: decades, plus 2x and 5x when the range spans few decades.
std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  const int d0 = static_cast<int>(std::floor(std::log10(lo)));
  const int d1 = static_cast<int>(std::ceil(std::log10(hi)));
  const bool fine = d1 - d0 <= 3;
  for (int d = d0; d <= d1; ++d) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !fine) continue;
      const double v = m * std::pow(10.0, d);
      if (v >= lo * 0.999 && v <= hi * 1.001) out.push_back(v);
    }
  }
  return out;
}

double bucket_x(const ChartBucket& b) {
  return 0.5 * static_cast<double>(b.first_step + b.last_step);
}

int64_t last_step(const Comparison& c) {
  int64_t last = 1;
  for (const auto* r : {&c.a, &c.b}) {
    if (!r->chart.empty()) last = std::max(last, r->chart.back().last_step);
  }
  return last;
}

void phase_markers(const Frame& f, const Comparison& c, bool labels, std::ostream& out) {
  std::vector<int64_t> drawn;
  for (const auto* r : {&c.a, &c.b}) {
    for (const auto& s : r->switches) {
      if (std::find(drawn.begin(), drawn.end(), s.switch_step) != drawn.end()) continue;
      drawn.push_back(s.switch_step);
      const double x = f.x(static_cast<double>(s.switch_step));
      out << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << f.top << "\" y2=\""
          << f.plot_bottom()
          << "\" stroke=\"#39404d\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n";
      if (labels) {
        out << "<text x=\"" << num(x + 5) << "\" y=\"" << f.top + 12 << "\">phase " << s.to_phase
            << " starts (step " << s.switch_step << ")</text>\n";
      }
    }
  }
}

void step_time_chart(const Comparison& c, std::ostream& out) {
  Frame f;
  f.log_y = true;
  f.x_hi = static_cast<double>(last_step(c));
  double lo = 1e300;
  double hi = 0;
  for (const auto* r : {&c.a, &c.b}) {
    for (const auto& b : r->chart) {
      if (b.wall_min_ms > 0) lo = std::min(lo, b.wall_min_ms);
      hi = std::max(hi, b.wall_max_ms);
    }
  }
  if (!(hi > 0) || lo > hi) {
    lo = 1;
    hi = 10;
  }
  f.y_lo = std::pow(10.0, std::floor(std::log10(lo) * 4) / 4);
  f.y_hi = std::pow(10.0, std::ceil(std::log10(hi) * 4) / 4);
  if (f.y_hi <= f.y_lo) f.y_hi = f.y_lo * 10;
  open_svg(f, "step time per step, both runs, log scale", out);

  // Warm-up first, under everything: one band per run and phase.
  const char* colors[] = {kColorA, kColorB};
  int run_index = 0;
  for (const auto* r : {&c.a, &c.b}) {
    for (const auto& p : r->phases) {
      if (p.warmup_steps == 0) continue;
      const double x0 = f.x(static_cast<double>(p.first_step) - 0.5);
      const double x1 = f.x(static_cast<double>(p.first_step + p.warmup_steps) - 0.5);
      out << "<rect x=\"" << num(x0) << "\" y=\"" << f.top << "\" width=\""
          << num(std::max(x1 - x0, 2.0)) << "\" height=\"" << f.plot_bottom() - f.top
          << "\" fill=\"" << colors[run_index] << "\" fill-opacity=\"0.13\"/>\n";
    }
    ++run_index;
  }
  y_axis(f, log_ticks(f.y_lo, f.y_hi), "step time (ms, log)", out);
  x_axis(f, "step", out);
  phase_markers(f, c, true, out);

  run_index = 0;
  for (const auto* r : {&c.a, &c.b}) {
    const char* color = colors[run_index++];
    bool bucketed = false;
    for (const auto& b : r->chart) bucketed |= b.last_step > b.first_step;
    if (bucketed) {  // min-max band behind the mean
      std::ostringstream band;
      for (const auto& b : r->chart)
        band << num(f.x(bucket_x(b))) << "," << num(f.y(b.wall_max_ms)) << " ";
      for (auto it = r->chart.rbegin(); it != r->chart.rend(); ++it) {
        band << num(f.x(bucket_x(*it))) << "," << num(f.y(it->wall_min_ms)) << " ";
      }
      out << "<polygon points=\"" << band.str() << "\" fill=\"" << color
          << "\" fill-opacity=\"0.15\"/>\n";
      // The band of a one-bucket spike is a sliver; its upper edge as a line keeps it visible.
      out << "<polyline fill=\"none\" stroke=\"" << color
          << "\" stroke-opacity=\"0.7\" stroke-width=\"1\" points=\"";
      for (const auto& b : r->chart)
        out << num(f.x(bucket_x(b))) << "," << num(f.y(b.wall_max_ms)) << " ";
      out << "\"/>\n";
    }
    out << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.4\" points=\"";
    for (const auto& b : r->chart)
      out << num(f.x(bucket_x(b))) << "," << num(f.y(b.wall_mean_ms)) << " ";
    out << "\"/>\n";
    // Steady medians as thin dotted lines per phase.
    for (const auto& p : r->phases) {
      out << "<line x1=\"" << num(f.x(static_cast<double>(p.first_step))) << "\" x2=\""
          << num(f.x(static_cast<double>(p.last_step))) << "\" y1=\""
          << num(f.y(p.steady.median_ms)) << "\" y2=\"" << num(f.y(p.steady.median_ms))
          << "\" stroke=\"" << color << "\" stroke-width=\"1\" stroke-dasharray=\"2 3\"/>\n";
    }
  }
  out << "</svg>\n";
  out << "<p class=\"legend\"><span class=\"sw\" style=\"background:" << kColorA << "\"></span>A "
      << "<span class=\"sw\" style=\"background:" << kColorB << "\"></span>B"
      << "<span class=\"sw\" style=\"background:" << kColorA << ";opacity:.2\"></span>warm-up A"
      << "<span class=\"sw\" style=\"background:" << kColorB << ";opacity:.2\"></span>warm-up B"
      << "<span class=\"sw\" style=\"border-top:2px dashed #39404d;height:0\"></span>phase switch"
      << "<span class=\"sw\" style=\"border-top:2px dotted #555;height:0\"></span>steady median";
  bool bucketed = false;
  for (const auto* r : {&c.a, &c.b}) {
    for (const auto& b : r->chart) bucketed |= b.last_step > b.first_step;
  }
  if (bucketed)
    out << ". Long runs: bold line = mean per bucket of steps, thin line = slowest step, band = "
           "min to max";
  out << ".</p>\n";
}

void events_chart(const Comparison& c, std::ostream& out) {
  Frame f;
  f.height = 230;
  f.x_hi = static_cast<double>(last_step(c));
  double max_count = 1;
  for (const auto* r : {&c.a, &c.b}) {
    for (const auto& b : r->chart) {
      max_count = std::max(max_count, static_cast<double>(b.cache_misses));
    }
  }
  // A above the axis, B mirrored below.
  f.y_lo = -max_count * 1.25;
  f.y_hi = max_count * 1.25;
  open_svg(f, "compile and cache-miss events per step: A above, B below", out);
  std::vector<double> ticks;
  for (double t : linear_ticks(0, max_count, 3)) {
    ticks.push_back(t);
    if (t > 0) ticks.push_back(-t);
  }
  // Labels show counts, not signs.
  for (double t : ticks) {
    out << "<line x1=\"" << f.left << "\" x2=\"" << f.width - f.right << "\" y1=\"" << num(f.y(t))
        << "\" y2=\"" << num(f.y(t)) << "\" stroke=\"#e3e7ec\"/><text x=\"" << f.left - 6
        << "\" y=\"" << num(f.y(t) + 4) << "\" text-anchor=\"end\">" << tick_label(std::fabs(t))
        << "</text>\n";
  }
  out << "<line x1=\"" << f.left << "\" x2=\"" << f.left << "\" y1=\"" << f.top << "\" y2=\""
      << f.plot_bottom() << "\" stroke=\"#8a93a3\"/>\n";
  out << "<text transform=\"translate(14," << num((f.top + f.plot_bottom()) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">cache misses</text>\n";
  x_axis(f, "step", out);
  out << "<line x1=\"" << f.left << "\" x2=\"" << f.width - f.right << "\" y1=\"" << num(f.y(0))
      << "\" y2=\"" << num(f.y(0)) << "\" stroke=\"#8a93a3\"/>\n";
  out << "<text x=\"" << f.width - f.right - 4 << "\" y=\"" << f.top + 12
      << "\" text-anchor=\"end\">A</text><text x=\"" << f.width - f.right - 4 << "\" y=\""
      << f.plot_bottom() - 4 << "\" text-anchor=\"end\">B</text>\n";
  phase_markers(f, c, false, out);
  const double px_per_step = (f.width - f.left - f.right) / std::max(f.x_hi - f.x_lo, 1.0);
  int sign = 1;
  const char* colors[] = {kColorA, kColorB};
  int run_index = 0;
  for (const auto* r : {&c.a, &c.b}) {
    const char* color = colors[run_index++];
    for (const auto& b : r->chart) {
      const double w =
          std::max(1.5, px_per_step * static_cast<double>(b.last_step - b.first_step + 1) * 0.8);
      const double x = f.x(bucket_x(b)) - w / 2;
      if (b.cache_misses > 0) {
        const double y0 = f.y(0);
        const double y1 = f.y(sign * static_cast<double>(b.cache_misses));
        out << "<rect x=\"" << num(x) << "\" y=\"" << num(std::min(y0, y1)) << "\" width=\""
            << num(w) << "\" height=\"" << num(std::fabs(y1 - y0)) << "\" fill=\"" << color
            << "\" fill-opacity=\"0.75\"><title>steps " << b.first_step << "-" << b.last_step
            << ": " << b.cache_misses << " cache misses</title></rect>\n";
      }
      if (b.compiles > 0) {
        const double cy = sign > 0 ? f.top + 8 : f.plot_bottom() - 8;
        const double cx = f.x(bucket_x(b));
        out << "<path d=\"M" << num(cx) << "," << num(cy - 6)
            << " l6,6 l-6,6 l-6,-6 z\" fill=\"#b3261e\">"
            << "<title>steps " << b.first_step << "-" << b.last_step << ": " << b.compiles
            << " compiles</title></path><text x=\"" << num(cx + 9) << "\" y=\"" << num(cy + 4)
            << "\" fill=\"#b3261e\">" << b.compiles << "</text>\n";
      }
    }
    sign = -1;
  }
  out << "</svg>\n";
  out << "<p class=\"legend\">Bars: cache misses per step (JIT plan builds, first-seen op "
         "signatures "
         "and kernels, module loads, CUDA graph instantiations); <span style=\"color:#b3261e\">"
         "&#9670;</span> compiles, with their count. A above the axis, B below.</p>\n";
}

void loss_chart(const Comparison& c, std::ostream& out) {
  Frame f;
  f.height = 260;
  f.x_hi = static_cast<double>(last_step(c));
  double lo = 1e300;
  double hi = -1e300;
  size_t heads = 0;
  for (const auto* r : {&c.a, &c.b}) {
    for (const auto& b : r->chart) {
      heads = std::max(heads, b.head_losses.size());
      for (double v : b.head_losses) {
        if (std::isfinite(v)) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
    }
  }
  if (heads == 0 || !(hi >= lo)) {
    out << "<p class=\"muted\">No per-head losses in these runs.</p>\n";
    return;
  }
  if (hi == lo) hi = lo + 1;
  // Extend the axis to whole tick steps so both ends are labelled.
  auto ticks = linear_ticks(lo, hi, 5);
  const double step = ticks.size() >= 2 ? ticks[1] - ticks[0] : (hi - lo);
  f.y_lo = std::floor(lo / step) * step;
  f.y_hi = std::ceil(hi / step) * step;
  ticks = linear_ticks(f.y_lo, f.y_hi, 5);
  open_svg(f, "loss per head, both runs", out);
  y_axis(f, ticks, "loss (unweighted)", out);
  x_axis(f, "step", out);
  phase_markers(f, c, false, out);
  const char* dashes[] = {"", "6 3"};
  int run_index = 0;
  for (const auto* r : {&c.a, &c.b}) {
    for (size_t h = 0; h < heads; ++h) {
      out << "<polyline fill=\"none\" stroke=\"" << kHeadColors[h % 5] << "\" stroke-width=\"1.4\"";
      if (*dashes[run_index]) out << " stroke-dasharray=\"" << dashes[run_index] << "\"";
      out << " points=\"";
      for (const auto& b : r->chart) {
        if (h < b.head_losses.size() && std::isfinite(b.head_losses[h])) {
          out << num(f.x(bucket_x(b))) << "," << num(f.y(b.head_losses[h])) << " ";
        }
      }
      out << "\"/>\n";
    }
    ++run_index;
  }
  out << "</svg>\n<p class=\"legend\">";
  for (size_t h = 0; h < heads; ++h) {
    out << "<span class=\"sw\" style=\"background:" << kHeadColors[h % 5] << "\"></span>head " << h;
  }
  out << "; solid: A, dashed: B.</p>\n";
}

std::string counts_cell(bool present, int64_t v) { return present ? std::to_string(v) : "&ndash;"; }

void counts_table(const Comparison& c, std::ostream& out) {
  struct Column {
    std::string title;
    const ProbeCounts* counts;
  };
  std::vector<Column> cols;
  for (const auto* r : {&c.a, &c.b}) {
    const std::string name = r == &c.a ? "A" : "B";
    for (const auto& p : r->phases)
      cols.push_back({name + " phase " + std::to_string(p.phase), &p.counts});
    for (const auto& s : r->switches) {
      cols.push_back({name + " around switch to " + std::to_string(s.to_phase), &s.around});
    }
  }
  struct Row {
    const char* name;
    bool (*present)(const ProbeCounts&);
    int64_t (*value)(const ProbeCounts&);
  };
  const Row rows[] = {
      {"steps", [](const ProbeCounts&) { return true; },
       [](const ProbeCounts& p) { return p.steps; }},
      {"compile events", [](const ProbeCounts&) { return true; },
       [](const ProbeCounts& p) { return p.compile_events; }},
      {"JIT compiles", [](const ProbeCounts& p) { return p.has_jit; },
       [](const ProbeCounts& p) { return p.jit_compiles; }},
      {"JIT plan builds", [](const ProbeCounts& p) { return p.has_jit; },
       [](const ProbeCounts& p) { return p.jit_plan_builds; }},
      {"JIT profiling runs", [](const ProbeCounts& p) { return p.has_jit; },
       [](const ProbeCounts& p) { return p.jit_profiling_runs; }},
      {"first-seen op signatures", [](const ProbeCounts& p) { return p.has_dispatch; },
       [](const ProbeCounts& p) { return p.new_signatures; }},
      {"host ops", [](const ProbeCounts& p) { return p.has_dispatch; },
       [](const ProbeCounts& p) { return p.host_ops; }},
      {"cross-device copies", [](const ProbeCounts& p) { return p.has_dispatch; },
       [](const ProbeCounts& p) { return p.copies; }},
      {"copied bytes", [](const ProbeCounts& p) { return p.has_dispatch; },
       [](const ProbeCounts& p) { return p.copy_bytes; }},
      {"host syncs", [](const ProbeCounts& p) { return p.has_dispatch; },
       [](const ProbeCounts& p) { return p.syncs; }},
      {"first-seen kernels", [](const ProbeCounts& p) { return p.has_cupti; },
       [](const ProbeCounts& p) { return p.new_kernels; }},
      {"module loads", [](const ProbeCounts& p) { return p.has_cupti; },
       [](const ProbeCounts& p) { return p.module_loads; }},
      {"CUDA graph instantiations", [](const ProbeCounts& p) { return p.has_cupti; },
       [](const ProbeCounts& p) { return p.graph_instantiations; }},
      {"optimizer state resets", [](const ProbeCounts& p) { return p.has_optimizer; },
       [](const ProbeCounts& p) { return p.optimizer_resets; }},
      {"optimizer state off device (max)", [](const ProbeCounts& p) { return p.has_optimizer; },
       [](const ProbeCounts& p) { return p.optimizer_state_off_device; }},
      {"optimizer state missing (max)", [](const ProbeCounts& p) { return p.has_optimizer; },
       [](const ProbeCounts& p) { return p.optimizer_state_missing; }},
      {"alerts", [](const ProbeCounts&) { return true; },
       [](const ProbeCounts& p) { return p.alerts; }},
  };
  out << "<table><tr><th class=\"l\">signal</th>";
  for (const auto& col : cols) out << "<th>" << html_escape(col.title) << "</th>";
  out << "</tr>\n";
  for (const Row& row : rows) {
    out << "<tr><td class=\"l\">" << row.name << "</td>";
    for (const auto& col : cols)
      out << "<td>" << counts_cell(row.present(*col.counts), row.value(*col.counts)) << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n<p class=\"legend\">&ndash;: probe not available in that run (not zero).</p>\n";
}

void stretches(const RunAnalysis& r, const std::string& name, double slow_factor,
               std::ostream& out) {
  out << "<h3>" << name << ": " << r.slow_stretch_count << " slow stretch"
      << (r.slow_stretch_count == 1 ? "" : "es");
  if (static_cast<size_t>(r.slow_stretch_count) > r.slow_stretches.size()) {
    out << " (the " << r.slow_stretches.size() << " costliest shown)";
  }
  out << "</h3>\n";
  if (r.slow_stretches.empty()) {
    out << "<p class=\"muted\">No step ran over " << detail::printf_string("%g", slow_factor)
        << "x its phase's steady median.</p>\n";
    return;
  }
  out << "<ul>\n";
  for (const auto& s : r.slow_stretches) out << "<li>" << html_escape(s.sentence) << "</li>\n";
  out << "</ul>\n";
}

std::string run_line(const RunAnalysis& r) {
  std::string s = "<code>" + html_escape(r.path) + "</code>";
  if (!r.header.mode.empty()) s += " (" + html_escape(r.header.mode) + ")";
  s += ", " + std::to_string(r.steps) + " steps";
  return s;
}

}  // namespace

void HtmlRenderer::render(const Comparison& c, std::ostream& out) const {
  const std::string verdict = to_string(c.verdict);
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>recompdiag: " << detail::verdict_words(verdict.c_str()) << "</title>\n<style>"
      << kStyle << "</style></head><body><main>\n";

  out << "<header class=\"verdict " << verdict << "\"><h1>"
      << (c.verdict == Verdict::kRegression     ? "Regression"
          : c.verdict == Verdict::kImprovement  ? "Improvement"
          : c.verdict == Verdict::kInconclusive ? "Inconclusive"
                                                : "No change")
      << "</h1>\n<p>" << html_escape(c.summary)
      << "</p>\n<p class=\"runs\">A (baseline): " << run_line(c.a)
      << " &middot; B: " << run_line(c.b) << " &middot; threshold "
      << detail::printf_string("%.1f%%", c.options.threshold * 100.0) << ", alpha "
      << detail::printf_string("%g", c.options.alpha) << "</p></header>\n";

  if (!c.warnings.empty()) {
    out << "<h2>Warnings</h2><ul class=\"warn\">\n";
    for (const auto& w : c.warnings) out << "<li>" << html_escape(w) << "</li>\n";
    out << "</ul>\n";
  }

  out << "<h2>Steady-state step time per phase</h2>\n<table><tr><th>phase</th><th>A steps "
         "(warm-up)</th><th>B steps (warm-up)</th><th>A median ms</th><th>B median ms</th>"
         "<th>B/A</th><th>"
      << detail::printf_string("%g%% CI", c.options.bootstrap.confidence * 100.0)
      << "</th><th>p (Holm)</th><th>detectable</th><th>A p95 ms</th><th>B p95 ms</th>"
         "<th>A MAD ms</th><th>B MAD ms</th><th class=\"l\">verdict</th></tr>\n";
  for (const auto& p : c.phases) {
    const PhaseAnalysis* pa = nullptr;
    const PhaseAnalysis* pb = nullptr;
    for (const auto& x : c.a.phases) {
      if (x.phase == p.phase) pa = &x;
    }
    for (const auto& x : c.b.phases) {
      if (x.phase == p.phase) pb = &x;
    }
    out << "<tr><td>" << p.phase << "</td><td>" << (pa ? pa->all.n : 0) << " ("
        << (pa ? pa->warmup_steps : 0) << ")</td><td>" << (pb ? pb->all.n : 0) << " ("
        << (pb ? pb->warmup_steps : 0) << ")</td><td>" << detail::ms(p.median_a_ms) << "</td><td>"
        << detail::ms(p.median_b_ms) << "</td><td>" << detail::ratio(p.ratio.ratio) << " ("
        << detail::change(p.ratio.ratio) << ")</td><td>" << detail::ratio(p.ratio.low) << "&ndash;"
        << detail::ratio(p.ratio.high) << "</td><td>" << detail::p_value(p.p_holm) << "</td><td>"
        << detail::printf_string("%.1f%%", p.test.mde * 100.0) << "</td><td>"
        << detail::ms(p.p95_a_ms) << "</td><td>" << detail::ms(p.p95_b_ms) << "</td><td>"
        << (pa ? detail::ms(pa->steady.mad_ms) : "") << "</td><td>"
        << (pb ? detail::ms(pb->steady.mad_ms) : "") << "</td><td class=\"l v-"
        << to_string(p.verdict) << "\">" << detail::verdict_words(to_string(p.verdict))
        << "</td></tr>\n";
  }
  out << "</table>\n";
  if (!c.count_changes.empty()) {
    out << "<h2>Counts compared exactly</h2>\n<ul>\n";
    for (const auto& cc : c.count_changes) {
      out << "<li>" << html_escape(cc.text) << (cc.fails ? " (fails the gate: --fail-on)" : "")
          << "</li>\n";
    }
    out << "</ul>\n";
  }

  if (!c.switches.empty()) {
    out << "<h2>Phase switch: the recompile tax</h2>\n<table><tr><th>switch to phase</th>"
           "<th>A tax s</th><th>A slow steps s</th><th>A compile s</th><th>A steps to recover</th>"
           "<th>B tax s</th><th>B slow steps s</th><th>B compile s</th><th>B steps to recover</th>"
           "<th>B &minus; A s</th></tr>\n";
    for (const auto& s : c.switches) {
      out << "<tr><td>" << s.to_phase << "</td><td><b>" << detail::seconds(s.tax_s_a)
          << "</b></td><td>" << detail::seconds(s.extra_s_a) << "</td><td>"
          << detail::seconds(s.compile_s_a) << "</td><td>" << s.recovery_steps_a << "</td><td><b>"
          << detail::seconds(s.tax_s_b) << "</b></td><td>" << detail::seconds(s.extra_s_b)
          << "</td><td>" << detail::seconds(s.compile_s_b) << "</td><td>" << s.recovery_steps_b
          << "</td><td>" << detail::printf_string("%+.3g", s.tax_s_difference) << "</td></tr>\n";
    }
    out << "</table>\n<p class=\"legend\">Slow steps: what the steps after the switch spent over "
           "the new phase's steady median until they were back at steady state. Compile: time the "
           "run's compile events at the switch report, spent between steps.</p>\n";
  }

  out << "<h2>Step time</h2>\n";
  step_time_chart(c, out);
  out << "<h2>Compiles and cache misses per step</h2>\n";
  events_chart(c, out);

  out << "<h2>Slow stretches and their causes</h2>\n";
  stretches(c.a, "A", c.options.analysis.slow_factor, out);
  stretches(c.b, "B", c.options.analysis.slow_factor, out);

  out << "<h2>Probe signals per phase and around each switch</h2>\n";
  counts_table(c, out);

  out << "<h2>Training outcome</h2>\n";
  loss_chart(c, out);
  out << "<table><tr><th class=\"l\">run</th><th class=\"l\">finished</th><th>final loss</th>"
         "<th class=\"l\">final loss per head</th><th class=\"l\">loss jump per head at each "
         "switch</th></tr>\n";
  for (const auto* r : {&c.a, &c.b}) {
    out << "<tr><td class=\"l\">" << (r == &c.a ? "A" : "B") << "</td><td class=\"l\">"
        << (r->outcome.finished ? "yes" : "no") << "</td><td>"
        << detail::loss(r->outcome.final_loss) << "</td><td class=\"l\">"
        << detail::losses(r->outcome.final_head_losses) << "</td><td class=\"l\">";
    for (const auto& s : r->switches) {
      out << "phase " << s.to_phase << ": ";
      for (size_t h = 0; h < s.loss.head_jump.size(); ++h) {
        out << (h ? ", " : "") << detail::printf_string("%+.4g", s.loss.head_jump[h]);
      }
      out << " ";
    }
    out << "</td></tr>\n";
  }
  out << "</table>\n";

  out << "<h2>Alerts</h2>\n";
  for (const auto* r : {&c.a, &c.b}) {
    out << "<h3>" << (r == &c.a ? "A" : "B") << ": " << r->alerts.size() << " alert"
        << (r->alerts.size() == 1 ? "" : "s") << "</h3>\n";
    if (r->alerts.empty()) continue;
    out << "<ul>\n";
    size_t shown = 0;
    for (const auto& a : r->alerts) {
      if (++shown > 30) {
        out << "<li>&hellip; " << r->alerts.size() - 30 << " more in the JSON report</li>\n";
        break;
      }
      out << "<li>step " << a.step << " (phase " << a.phase << "): <b>" << html_escape(a.rule)
          << "</b>" << (a.message.empty() ? "" : " &ndash; " + html_escape(a.message)) << "</li>\n";
    }
    out << "</ul>\n";
  }

  if (!c.config_differences.empty()) {
    out << "<h2>Configuration differences</h2>\n<table><tr><th class=\"l\">key</th><th "
           "class=\"l\">A</th><th class=\"l\">B</th></tr>\n";
    for (const auto& d : c.config_differences) {
      out << "<tr><td class=\"l\"><code>" << html_escape(d.key) << "</code></td><td class=\"l\">"
          << html_escape(d.a) << "</td><td class=\"l\">" << html_escape(d.b) << "</td></tr>\n";
    }
    out << "</table>\n";
  }

  out << "<h2>Runs</h2>\n";
  for (const auto* r : {&c.a, &c.b}) {
    const auto& h = r->header;
    out << "<details><summary>" << (r == &c.a ? "A" : "B") << ": " << run_line(*r) << ", device "
        << html_escape(h.device_used) << ", torch " << html_escape(h.torch_version)
        << ", step timing: " << html_escape(h.step_timing) << "</summary><pre>"
        << html_escape(h.config.dump(2, ' ', false, nlohmann::json::error_handler_t::replace))
        << "</pre></details>\n";
  }
  out << "<p class=\"muted\">recompdiag " << kToolVersion << " (" << html_escape(kBuildInfo)
      << "), report schema " << kReportSchemaVersion << ".</p>\n";
  out << "</main></body></html>\n";
}

}  // namespace recompdiag::reports
