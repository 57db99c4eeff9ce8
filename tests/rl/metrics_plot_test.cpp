// vinci plot's charts (src/rl/metrics_plot): the plotted values read back from the SVG, gaps for
// missing or non-numeric fields, escaping, and errors that name the line.
#include <gtest/gtest.h>

#include <unistd.h>
#include <fstream>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "rl/metrics_plot.h"

namespace metrics_plot_test {

using nlohmann::json;

std::map<std::string, std::string> series_of(const std::string& svg) {
  std::map<std::string, std::string> out;
  const std::regex re("class=\"series\" data-key=\"([^\"]*)\" data-points=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = (*it)[2];
  return out;
}

TEST(MetricsPlot, PlotsEveryNumericFieldAgainstStep) {
  const std::vector<json> rows = {json::parse(R"({"step":1,"epoch":1,"loss":3.5,"lr":0.001,"note":"warm"})"),
                                  json::parse(R"({"step":2,"epoch":1,"loss":2,"lr":0.002})"),
                                  json::parse(R"({"step":3,"epoch":2,"loss":null,"lr":0.002,"reward":0.5})")};
  const std::string svg = vinci::rl::metrics_svg(rows, {}, "run <a&b>");
  const auto series = series_of(svg);
  ASSERT_EQ(series.size(), 3u);               // loss, lr, reward; not step, epoch or the text field
  EXPECT_EQ(series.at("loss"), "1,3.5 2,2");  // the null of step 3 is a gap
  EXPECT_EQ(series.at("lr"), "1,0.001 2,0.002 3,0.002");
  EXPECT_EQ(series.at("reward"), "3,0.5");
  EXPECT_NE(svg.find("<title>run &lt;a&amp;b&gt;</title>"), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

TEST(MetricsPlot, ChosenKeysInOrderAndMissingOnesSayso) {
  const std::vector<json> rows = {json::parse(R"({"step":5,"loss":1})")};
  const std::string svg = vinci::rl::metrics_svg(rows, {"grad_norm", "loss"}, "t");
  EXPECT_EQ(series_of(svg).size(), 1u);
  EXPECT_NE(svg.find("no values"), std::string::npos);
  EXPECT_LT(svg.find(">grad_norm<"), svg.find(">loss<"));
}

TEST(MetricsPlot, BadLinesAreNamed) {
  const auto path = std::filesystem::temp_directory_path() / fmt::format("vinci_metrics_{}.jsonl", ::getpid());
  std::ofstream(path) << "{\"step\":1}\n\n[1,2]\n";
  try {
    vinci::rl::read_metrics_jsonl(path);
    FAIL() << "an array line was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ":3: not a JSON object");
  }
  std::filesystem::remove(path);
}

}  // namespace metrics_plot_test
