#include "tools/bench/svg_plot.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

#include "tools/common/plural.h"

namespace bench {
namespace {

constexpr double kWidth = 760, kPanelHeight = 170, kLeft = 70, kRight = 20, kGap = 40;
constexpr size_t kLineChars = 100;  // evidence wrapped to fit 670 px at 11 px type

struct Series {
  const char* label;
  const char* unit;
  const char* color;
  double Round::*field;
};

std::string num(double v, int decimals = 1) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string sustained_svg(const Sustained& s, const std::string& title) {
  const Series series[] = {{"decode", "tokens/s", "#1f77b4", &Round::tokens_per_s},
                           {"hottest thermal zone", "C", "#d62728", &Round::max_temp_c},
                           {"mean worker clock", "MHz", "#2ca02c", &Round::mean_freq_mhz}};
  // "verdict: ..." then the evidence, wrapped at its "; " separators.
  std::vector<std::string> lines{"verdict: " + s.verdict};
  size_t start = 0;
  while (start < s.evidence.size()) {
    size_t end = s.evidence.find("; ", start);
    const std::string part = s.evidence.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? s.evidence.size() : end + 2;
    if (lines.size() > 1 && lines.back().size() + part.size() + 2 <= kLineChars) {
      lines.back() += "; " + part;
    } else {
      lines.push_back(part);
    }
  }
  const double kTop = 40 + 15.0 * static_cast<double>(lines.size());
  const double height = kTop + 3 * kPanelHeight + 2 * kGap + 50;
  const double plot_w = kWidth - kLeft - kRight;
  const size_t n = s.per_round.size();
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height << "\" viewBox=\"0 0 "
    << kWidth << " " << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << kLeft << "\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" << xml_escape(title) << "</text>\n"
    ;
  for (size_t i = 0; i < lines.size(); ++i) {
    o << "<text x=\"" << kLeft << "\" y=\"" << 40 + 15 * i << "\"" << (i ? " font-size=\"11\"" : "") << ">"
      << xml_escape(lines[i]) << "</text>\n";
  }
  auto x_of = [&](size_t i) { return kLeft + (n > 1 ? plot_w * static_cast<double>(i) / static_cast<double>(n - 1) : plot_w / 2); };
  for (int p = 0; p < 3; ++p) {
    const Series& se = series[p];
    const double top = kTop + p * (kPanelHeight + kGap), bottom = top + kPanelHeight;
    o << "<g class=\"panel\" id=\"" << (p == 0 ? "tokens" : p == 1 ? "temperature" : "frequency") << "\">\n"
      << "<rect x=\"" << kLeft << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\"" << kPanelHeight
      << "\" fill=\"none\" stroke=\"#999\"/>\n"
      << "<text x=\"" << kLeft + 6 << "\" y=\"" << top + 16 << "\" fill=\"" << se.color << "\">" << se.label << " ("
      << se.unit << ")</text>\n";
    std::vector<std::pair<size_t, double>> pts;
    for (size_t i = 0; i < n; ++i) {
      const double v = s.per_round[i].*se.field;
      if (known(v)) pts.emplace_back(i, v);
    }
    if (pts.empty()) {
      o << "<text x=\"" << kLeft + plot_w / 2 << "\" y=\"" << (top + bottom) / 2
        << "\" text-anchor=\"middle\" fill=\"#777\">not readable on this device</text>\n</g>\n";
      continue;
    }
    double lo = pts[0].second, hi = pts[0].second;
    for (const auto& [i, v] : pts) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    // Start tokens/s at zero so a 10% drop looks like 10%; pad the others.
    if (p == 0) lo = 0;
    const double pad = (hi - lo) * 0.1 + (hi == lo ? std::max(1.0, hi * 0.05) : 0);
    if (p != 0) lo -= pad;
    hi += pad;
    auto y_of = [&](double v) { return bottom - (v - lo) / (hi - lo) * kPanelHeight; };
    const int dec = p == 2 ? 0 : 1;
    o << "<text x=\"" << kLeft - 6 << "\" y=\"" << top + 12 << "\" text-anchor=\"end\">" << num(hi, dec) << "</text>\n"
      << "<text x=\"" << kLeft - 6 << "\" y=\"" << bottom << "\" text-anchor=\"end\">" << num(lo, dec) << "</text>\n";
    o << "<polyline fill=\"none\" stroke=\"" << se.color << "\" stroke-width=\"2\" points=\"";
    for (const auto& [i, v] : pts) o << num(x_of(i)) << "," << num(y_of(v)) << " ";
    o << "\"/>\n";
    for (const auto& [i, v] : pts) {
      o << "<circle cx=\"" << num(x_of(i)) << "\" cy=\"" << num(y_of(v)) << "\" r=\"3\" fill=\"" << se.color
        << "\"><title>round " << s.per_round[i].index << ": " << num(v, 2) << " " << se.unit << "</title></circle>\n";
    }
    o << "</g>\n";
  }
  const double axis_y = kTop + 3 * kPanelHeight + 2 * kGap + 18;
  for (size_t i = 0; i < n; ++i) {
    if (n > 12 && i % ((n + 11) / 12) != 0 && i + 1 != n) continue;
    o << "<text x=\"" << num(x_of(i)) << "\" y=\"" << axis_y << "\" text-anchor=\"middle\">" << s.per_round[i].index
      << "</text>\n";
  }
  o << "<text x=\"" << kLeft + plot_w / 2 << "\" y=\"" << axis_y + 20 << "\" text-anchor=\"middle\">round ("
    << num(s.interval_s) << " s apart, " << tools::plural(s.n_gen, "token") << " each)</text>\n</svg>\n";
  return o.str();
}

}  // namespace bench
