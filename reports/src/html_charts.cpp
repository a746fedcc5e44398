// The HTML report's charts. See detail/html_charts.h.
#include "detail/html_charts.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "detail/format.h"
#include "detail/svg.h"

namespace recompdiag::reports::detail {
namespace {

constexpr const char* kColorA = "#1f6fb4";
constexpr const char* kColorB = "#e8710a";
constexpr const char* kHeadColors[] = {"#2a9d3a", "#c8283a", "#7b4fb0", "#8c564b", "#d4a017"};

double bucket_x(const ChartBucket& b) {
  return 0.5 * static_cast<double>(b.first_step + b.last_step);
}

int64_t last_step(const ChartRuns& runs) {
  int64_t last = 1;
  for (const RunAnalysis* r : runs) {
    if (!r->chart.empty()) last = std::max(last, r->chart.back().last_step);
  }
  return last;
}

void phase_markers(const Frame& f, const ChartRuns& runs, bool labels, std::ostream& out) {
  std::vector<int64_t> drawn;
  for (const RunAnalysis* r : runs) {
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

}  // namespace

void step_time_chart(const ChartRuns& runs, std::ostream& out) {
  Frame f;
  f.log_y = true;
  f.x_hi = static_cast<double>(last_step(runs));
  double lo = 1e300;
  double hi = 0;
  for (const RunAnalysis* r : runs) {
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
  open_svg(f,
           runs.size() > 1 ? "step time per step, both runs, log scale"
                           : "step time per step, log scale",
           out);

  // Warm-up first, under everything: one band per run and phase.
  const char* colors[] = {kColorA, kColorB};
  int run_index = 0;
  for (const RunAnalysis* r : runs) {
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
  phase_markers(f, runs, true, out);

  run_index = 0;
  for (const RunAnalysis* r : runs) {
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
  out << "<p class=\"legend\">";
  if (runs.size() > 1) {
    out << "<span class=\"sw\" style=\"background:" << kColorA << "\"></span>A "
        << "<span class=\"sw\" style=\"background:" << kColorB << "\"></span>B"
        << "<span class=\"sw\" style=\"background:" << kColorA << ";opacity:.2\"></span>warm-up A"
        << "<span class=\"sw\" style=\"background:" << kColorB << ";opacity:.2\"></span>warm-up B";
  } else {
    out << "<span class=\"sw\" style=\"background:" << kColorA << "\"></span>step time"
        << "<span class=\"sw\" style=\"background:" << kColorA << ";opacity:.2\"></span>warm-up";
  }
  out << "<span class=\"sw\" style=\"border-top:2px dashed #39404d;height:0\"></span>phase switch"
      << "<span class=\"sw\" style=\"border-top:2px dotted #555;height:0\"></span>steady median";
  bool bucketed = false;
  for (const RunAnalysis* r : runs) {
    for (const auto& b : r->chart) bucketed |= b.last_step > b.first_step;
  }
  if (bucketed)
    out << ". Long runs: bold line = mean per bucket of steps, thin line = slowest step, band = "
           "min to max";
  out << ".</p>\n";
}

void events_chart(const ChartRuns& runs, std::ostream& out) {
  Frame f;
  f.height = 230;
  f.x_hi = static_cast<double>(last_step(runs));
  double max_count = 1;
  for (const RunAnalysis* r : runs) {
    for (const auto& b : r->chart) {
      max_count = std::max(max_count, static_cast<double>(b.cache_misses));
    }
  }
  // A above the axis, B mirrored below; one run above it alone.
  const bool two = runs.size() > 1;
  f.y_lo = two ? -max_count * 1.25 : 0.0;
  f.y_hi = max_count * 1.25;
  open_svg(f,
           two ? "compile and cache-miss events per step: A above, B below"
               : "compile and cache-miss events per step",
           out);
  std::vector<double> ticks;
  for (double t : linear_ticks(0, max_count, 3)) {
    ticks.push_back(t);
    if (t > 0 && two) ticks.push_back(-t);
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
  if (two) {
    out << "<text x=\"" << f.width - f.right - 4 << "\" y=\"" << f.top + 12
        << "\" text-anchor=\"end\">A</text><text x=\"" << f.width - f.right - 4 << "\" y=\""
        << f.plot_bottom() - 4 << "\" text-anchor=\"end\">B</text>\n";
  }
  phase_markers(f, runs, false, out);
  const double px_per_step = (f.width - f.left - f.right) / std::max(f.x_hi - f.x_lo, 1.0);
  int sign = 1;
  const char* colors[] = {kColorA, kColorB};
  int run_index = 0;
  for (const RunAnalysis* r : runs) {
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
         "&#9670;</span> compiles, with their count."
      << (two ? " A above the axis, B below." : "") << "</p>\n";
}

void loss_chart(const ChartRuns& runs, std::ostream& out) {
  Frame f;
  f.height = 260;
  f.x_hi = static_cast<double>(last_step(runs));
  double lo = 1e300;
  double hi = -1e300;
  size_t heads = 0;
  for (const RunAnalysis* r : runs) {
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
  open_svg(f, runs.size() > 1 ? "loss per head, both runs" : "loss per head", out);
  y_axis(f, ticks, "loss (unweighted)", out);
  x_axis(f, "step", out);
  phase_markers(f, runs, false, out);
  const char* dashes[] = {"", "6 3"};
  int run_index = 0;
  for (const RunAnalysis* r : runs) {
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
  out << (runs.size() > 1 ? "; solid: A, dashed: B." : ".") << "</p>\n";
}

}  // namespace recompdiag::reports::detail
