#include "rl/metrics_plot.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/files.h"
#include "core/svg.h"

namespace vinci::rl {

namespace {

std::optional<double> number_at(const nlohmann::json& row, const std::string& key) {
  const auto it = row.find(key);
  if (it == row.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  return std::isfinite(v) ? std::optional(v) : std::nullopt;
}

}  // namespace

std::string metrics_svg(const std::vector<nlohmann::json>& rows, const std::vector<std::string>& wanted,
                        std::string_view title) {
  std::vector<std::string> keys = wanted;
  if (keys.empty()) {
    std::set<std::string> found;
    for (const auto& row : rows)
      for (const auto& [key, value] : row.items())
        if (value.is_number() && key != "step" && key != "epoch") found.insert(key);
    keys.assign(found.begin(), found.end());
  }
  constexpr int kColumns = 3, kChartW = 300, kChartH = 180, kTop = 40;
  const int rows_of_charts = std::max<int>(1, static_cast<int>((keys.size() + kColumns - 1) / kColumns));
  const int width = kColumns * kChartW + 20, height = kTop + rows_of_charts * kChartH + 10;
  std::string svg = core::svg_open(width, height, title);
  for (size_t k = 0; k < keys.size(); ++k) {
    std::vector<std::pair<double, double>> points;
    for (size_t i = 0; i < rows.size(); ++i)
      if (const auto v = number_at(rows[i], keys[k]))
        points.emplace_back(number_at(rows[i], "step").value_or(double(i + 1)), *v);
    const double x0 = 10.0 + (k % kColumns) * kChartW + 50, y0 = kTop + (k / kColumns) * kChartH + 20;
    const double w = kChartW - 70, h = kChartH - 50;
    svg += core::svg_text(x0 + w / 2, y0 - 6, keys[k], "middle", "font-weight=\"bold\"");
    svg += core::svg_line(x0, y0 + h, x0 + w, y0 + h, "#000000");
    svg += core::svg_line(x0, y0, x0, y0 + h, "#000000");
    if (points.empty()) {
      svg += core::svg_text(x0 + w / 2, y0 + h / 2, "no values", "middle", "fill=\"#777777\"");
      continue;
    }
    auto [xmin, xmax] = std::minmax_element(points.begin(), points.end());
    double lo = points[0].second, hi = points[0].second;
    for (const auto& [_, v] : points) lo = std::min(lo, v), hi = std::max(hi, v);
    const double x_lo = xmin->first, x_span = std::max(xmax->first - x_lo, 1e-12);
    const double y_span = hi > lo ? hi - lo : std::max(std::abs(hi), 1.0);
    const double y_lo = hi > lo ? lo : lo - y_span / 2;
    const auto px = [&](double x) { return x0 + (x - x_lo) / x_span * w; };
    const auto py = [&](double v) { return y0 + h - (v - y_lo) / y_span * h; };
    svg += core::svg_text(x0 - 4, py(hi) + 4, fmt::format("{:.3g}", hi), "end");
    if (hi > lo) svg += core::svg_text(x0 - 4, py(lo) + 4, fmt::format("{:.3g}", lo), "end");
    svg += core::svg_text(x0, y0 + h + 14, fmt::format("{:g}", x_lo), "middle");
    svg += core::svg_text(x0 + w, y0 + h + 14, fmt::format("{:g}", xmax->first), "middle");
    std::string coords, data;
    for (const auto& [x, v] : points) {
      coords += fmt::format("{:.2f},{:.2f} ", px(x), py(v));
      data += fmt::format("{:g},{:g} ", x, v);
    }
    coords.pop_back();
    data.pop_back();
    svg += fmt::format(
        "<polyline class=\"series\" data-key=\"{}\" data-points=\"{}\" points=\"{}\" fill=\"none\" "
        "stroke=\"{}\" stroke-width=\"1.5\"/>\n",
        core::xml_escape(keys[k]), data, coords, core::kSvgPalette[k % core::kSvgPalette.size()]);
  }
  return svg + "</svg>\n";
}

std::vector<nlohmann::json> read_metrics_jsonl(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path))
    throw std::runtime_error(fmt::format("{}: cannot read the metrics file", path.string()));
  std::vector<nlohmann::json> rows;
  // A run killed mid-write leaves a torn last line: skipped with a warning, the steps before it plotted.
  for (const auto& line : core::read_jsonl_lines(path)) {
    try {
      rows.push_back(nlohmann::json::parse(line.text));
    } catch (const nlohmann::json::parse_error& e) {
      throw std::runtime_error(fmt::format("{}:{}: not JSON: {}", path.string(), line.number, e.what()));
    }
    if (!rows.back().is_object())
      throw std::runtime_error(fmt::format("{}:{}: not a JSON object", path.string(), line.number));
  }
  return rows;
}

}  // namespace vinci::rl
