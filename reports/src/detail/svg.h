#pragma once
// SVG primitives of the HTML report: a plot frame, axes with ticks, number formatting for
// coordinates. Private to recompdiag::reports.

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

namespace recompdiag::reports::detail {

/// A plot area mapping data to SVG coordinates; log-scaled y when asked. Plain data.
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

/// A coordinate with one decimal: short SVG without visible rounding.
std::string num(double v);
/// Axis ticks at 1, 2 or 5 times a power of ten, about `target` of them from lo to hi.
std::vector<double> linear_ticks(double lo, double hi, int target);
/// Log ticks: decades, plus 2x and 5x when the range spans few decades.
std::vector<double> log_ticks(double lo, double hi);
/// A tick's label: 0, 12, 3.5k, 2M.
std::string tick_label(double v);

/// Opens an <svg> element the size of `f`, with `label` as its accessible name.
void open_svg(const Frame& f, const std::string& label, std::ostream& out);
/// The x axis at the bottom of `f`: grid lines, tick labels and `title`.
void x_axis(const Frame& f, const std::string& title, std::ostream& out);
/// The y axis at the left of `f`: a grid line and label per tick, and `title` turned upright.
void y_axis(const Frame& f, const std::vector<double>& ticks, const std::string& title,
            std::ostream& out);

}  // namespace recompdiag::reports::detail
