// SVG primitives of the HTML report. See detail/svg.h.
#include "detail/svg.h"

#include <algorithm>
#include <cmath>

#include "detail/format.h"

namespace recompdiag::reports::detail {

std::string num(double v) { return detail::printf_string("%.1f", v); }

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

}  // namespace recompdiag::reports::detail
