#include "core/svg.h"

#include <cmath>

#include <fmt/format.h>

namespace vinci::core {

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') break;  // not allowed in XML
        out += c;
    }
  }
  return out;
}

std::string svg_open(int width, int height, std::string_view title) {
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n",
      width, height);
  out += fmt::format("<title>{}</title>\n", xml_escape(title));
  out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", width, height);
  out += fmt::format(
      "<text class=\"title\" x=\"{:.2f}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" "
      "font-weight=\"bold\">{}</text>\n",
      width / 2.0, xml_escape(title));
  return out;
}

std::string svg_text(double x, double y, std::string_view s, std::string_view anchor, std::string_view extra) {
  return fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"{}\"{}{}>{}</text>\n", x, y, anchor,
                     extra.empty() ? "" : " ", extra, xml_escape(s));
}

std::string svg_line(double x1, double y1, double x2, double y2, std::string_view stroke, std::string_view extra) {
  return fmt::format("<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"{}\"{}{}/>\n", x1, y1, x2,
                     y2, stroke, extra.empty() ? "" : " ", extra);
}

double nice_step(double max_value, int ticks) {
  if (max_value <= 0) return 1;
  const double raw = max_value / ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

}  // namespace vinci::core
