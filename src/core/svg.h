// The pieces every SVG chart of vinci is made of: escaping, the document head, text and lines, and
// axis ticks. Charts are self-contained: no scripts, no external fonts or stylesheets.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace vinci::core {

// Escapes & < > " ' for XML text and attribute values, and drops control characters XML 1.0 does not allow.
std::string xml_escape(std::string_view s);

// <svg ...> with a white background and the title (as <title> and as a heading); close with "</svg>\n".
std::string svg_open(int width, int height, std::string_view title);
std::string svg_text(double x, double y, std::string_view s, std::string_view anchor = "start",
                     std::string_view extra = {});
std::string svg_line(double x1, double y1, double x2, double y2, std::string_view stroke, std::string_view extra = {});

// A "nice" tick step (1, 2 or 5 times a power of ten) giving at most about `ticks` intervals up to max_value.
double nice_step(double max_value, int ticks);

inline constexpr std::array<const char*, 8> kSvgPalette{"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                                        "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

}  // namespace vinci::core
