// The SVG charts: well-formed XML, one curve per level, escaped text, histogram bins read back from data-* attributes.
#include "eval/report_svg.h"
#include "core/svg.h"

#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/hand_suite.h"

namespace vinci::eval {
namespace report_svg_test {

using vinci::test::make_result;

// A minimal XML checker: balanced and properly nested tags, quoted attributes, no raw '<' or bare '&' in text or
// attribute values, a single root. Counts the elements opened by name.
struct XmlCheck {
  bool ok = true;
  std::string error;
  std::map<std::string, int> opened;
  std::map<std::string, int> closed;  // explicit closing tags and self-closing elements
};

bool valid_entity_at(const std::string& s, size_t amp) {
  for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
    if (s.compare(amp, std::char_traits<char>::length(e), e) == 0) return true;
  return false;
}

XmlCheck check_xml(const std::string& s) {
  XmlCheck r;
  auto fail = [&](const std::string& why, size_t at) {
    if (r.ok) r.error = why + " at offset " + std::to_string(at) + ": " + s.substr(at, 60);
    r.ok = false;
  };
  std::vector<std::string> stack;
  int roots = 0;
  size_t i = 0;
  while (i < s.size() && r.ok) {
    if (s[i] == '&') {
      if (!valid_entity_at(s, i)) fail("bare &", i);
      ++i;
      continue;
    }
    if (s[i] == '>') {
      fail("raw > in text", i);
      break;
    }
    if (s[i] != '<') {
      if (stack.empty() && !std::isspace(static_cast<unsigned char>(s[i]))) fail("text outside the root", i);
      ++i;
      continue;
    }
    if (s.compare(i, 4, "<!--") == 0) {
      const size_t end = s.find("-->", i);
      if (end == std::string::npos) fail("unterminated comment", i);
      i = end + 3;
      continue;
    }
    if (s.compare(i, 2, "</") == 0) {
      const size_t end = s.find('>', i);
      if (end == std::string::npos) {
        fail("unterminated closing tag", i);
        break;
      }
      const std::string name = s.substr(i + 2, end - i - 2);
      if (stack.empty() || stack.back() != name) {
        fail("mismatched </" + name + ">", i);
        break;
      }
      stack.pop_back();
      ++r.closed[name];
      i = end + 1;
      continue;
    }
    // An opening tag: name, then attributes name="value", then > or />.
    size_t j = i + 1;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '-' || s[j] == ':')) ++j;
    const std::string name = s.substr(i + 1, j - i - 1);
    if (name.empty()) {
      fail("empty tag name", i);
      break;
    }
    if (stack.empty() && ++roots > 1) fail("second root element", i);
    bool self_closing = false;
    while (r.ok) {
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      if (j >= s.size()) {
        fail("unterminated tag", i);
        break;
      }
      if (s[j] == '>') {
        ++j;
        break;
      }
      if (s.compare(j, 2, "/>") == 0) {
        self_closing = true;
        j += 2;
        break;
      }
      const size_t attr = j;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '-' || s[j] == ':')) ++j;
      if (j == attr || j + 1 >= s.size() || s[j] != '=' || (s[j + 1] != '"' && s[j + 1] != '\'')) {
        fail("bad attribute", attr);
        break;
      }
      const char quote = s[j + 1];
      const size_t end = s.find(quote, j + 2);
      if (end == std::string::npos) {
        fail("unterminated attribute value", attr);
        break;
      }
      for (size_t k = j + 2; k < end; ++k) {
        if (s[k] == '<') fail("< in attribute value", k);
        if (s[k] == '&' && !valid_entity_at(s, k)) fail("bare & in attribute value", k);
      }
      j = end + 1;
    }
    ++r.opened[name];
    if (self_closing)
      ++r.closed[name];
    else
      stack.push_back(name);
    i = j;
  }
  if (r.ok && !stack.empty()) fail("unclosed <" + stack.back() + ">", s.size() - 1);
  if (r.ok && roots != 1) fail("no root element", 0);
  return r;
}

// All values of attribute `attr` on elements carrying `marker` (e.g. class="curve"), in document order.
std::vector<std::string> attr_values(const std::string& svg, const std::string& marker, const std::string& attr) {
  std::vector<std::string> out;
  for (size_t pos = svg.find(marker); pos != std::string::npos; pos = svg.find(marker, pos + 1)) {
    const size_t tag_start = svg.rfind('<', pos);
    const size_t tag_end = svg.find('>', pos);
    const std::string tag = svg.substr(tag_start, tag_end - tag_start);
    const size_t a = tag.find(" " + attr + "=\"");
    if (a == std::string::npos) {
      out.push_back("");
      continue;
    }
    const size_t v = a + attr.size() + 3;
    out.push_back(tag.substr(v, tag.find('"', v) - v));
  }
  return out;
}

std::map<std::string, std::string> attrs_by(const std::string& svg, const std::string& marker, const std::string& key,
                                            const std::string& value) {
  const auto keys = attr_values(svg, marker, key);
  const auto values = attr_values(svg, marker, value);
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < keys.size(); ++i) out[keys[i]] = values[i];
  return out;
}

std::vector<std::pair<double, double>> parse_steps(const std::string& steps) {
  std::vector<std::pair<double, double>> out;
  std::istringstream in(steps);
  std::string pair;
  while (in >> pair) {
    const size_t comma = pair.find(',');
    out.emplace_back(std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1)));
  }
  return out;
}

size_t count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = s.find(needle); pos != std::string::npos; pos = s.find(needle, pos + 1)) ++n;
  return n;
}

const auto& kSuite = vinci::test::kHandSuite;
using vinci::test::hand_suite_results;

TEST(XmlCheck, RejectsMalformedDocuments) {
  EXPECT_TRUE(check_xml("<svg a=\"1\"><g><text>x &amp; y</text></g><line/></svg>").ok);
  EXPECT_FALSE(check_xml("<svg><g></svg>").ok);
  EXPECT_FALSE(check_xml("<svg><g></text></g></svg>").ok);
  EXPECT_FALSE(check_xml("<svg><text>a & b</text></svg>").ok);
  EXPECT_FALSE(check_xml("<svg><text>a < b</text></svg>").ok);
  EXPECT_FALSE(check_xml("<svg t=\"a<b\"></svg>").ok);
  EXPECT_FALSE(check_xml("<svg></svg><svg></svg>").ok);
}

TEST(XmlEscape, EscapesMarkupAndDropsControlCharacters) {
  EXPECT_EQ(vinci::core::xml_escape("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&apos;f");
  EXPECT_EQ(vinci::core::xml_escape(std::string("x\x01y\tz", 5)), "xy\tz");
  EXPECT_EQ(vinci::core::xml_escape("level1/1_Matmul"), "level1/1_Matmul");
}

TEST(FastPCurveSvg, WellFormedWithOneCurvePerLevel) {
  const std::string svg = fast_p_curve_svg(hand_suite_results(), kSuite, Baseline::eager);
  ASSERT_EQ(svg.rfind("<svg", 0), 0u) << svg.substr(0, 80);
  const XmlCheck x = check_xml(svg);
  ASSERT_TRUE(x.ok) << x.error;
  EXPECT_EQ(x.opened.at("g"), x.closed.at("g"));
  EXPECT_EQ(x.opened.at("text"), x.closed.at("text"));
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("@import"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);
  // Levels 1 and 2 have tasks, level 3 has none (listed in the legend only), plus the overall curve.
  EXPECT_EQ(count(svg, "class=\"curve\""), 3u);
  EXPECT_EQ(x.opened.at("polyline"), 3);
  EXPECT_EQ(attr_values(svg, "class=\"curve\"", "data-level"), (std::vector<std::string>{"1", "2", "overall"}));
  EXPECT_NE(svg.find("level 3: no tasks"), std::string::npos);
  EXPECT_NE(svg.find("fast_p (speedup vs eager)"), std::string::npos);
}

TEST(FastPCurveSvg, StepsMatchTheHandComputedCurve) {
  const std::string svg = fast_p_curve_svg(hand_suite_results(), kSuite, Baseline::eager);
  const auto steps = attrs_by(svg, "class=\"curve\"", "data-level", "data-steps");
  const auto n = attrs_by(svg, "class=\"curve\"", "data-level", "data-n");
  EXPECT_EQ(n.at("1"), "5");
  EXPECT_EQ(n.at("2"), "3");
  EXPECT_EQ(n.at("overall"), "8");
  // Level 1 (N=5): correct 4 at p=0; speedups 0.4, 0.8, 1.0, 2.5 each drop the curve by 1/5 at that p.
  const std::vector<std::pair<double, double>> l1{{0, 0.8},   {0.4, 0.8}, {0.4, 0.6}, {0.8, 0.6}, {0.8, 0.4},
                                                  {1.0, 0.4}, {1.0, 0.2}, {2.5, 0.2}, {2.5, 0.0}, {3.0, 0.0}};
  const auto got1 = parse_steps(steps.at("1"));
  ASSERT_EQ(got1.size(), l1.size()) << steps.at("1");
  for (size_t i = 0; i < l1.size(); ++i) {
    EXPECT_DOUBLE_EQ(got1[i].first, l1[i].first) << i;
    EXPECT_DOUBLE_EQ(got1[i].second, l1[i].second) << i;
  }
  // Level 2 (N=3): fast_0 = 2/3 at p=0, then 1/3 just above 0 (Z has no speedup), X 1.6 drops it to 0.
  const std::vector<std::pair<double, double>> l2{{0, 2.0 / 3}, {0, 1.0 / 3}, {1.6, 1.0 / 3}, {1.6, 0.0}, {3.0, 0.0}};
  const auto got2 = parse_steps(steps.at("2"));
  ASSERT_EQ(got2.size(), l2.size()) << steps.at("2");
  for (size_t i = 0; i < l2.size(); ++i) {
    EXPECT_DOUBLE_EQ(got2[i].first, l2[i].first) << i;
    EXPECT_DOUBLE_EQ(got2[i].second, l2[i].second) << i;
  }
  // Overall (N=8): 6/8 at 0, 5/8 just above 0, then one drop at each of 0.4, 0.8, 1.0, 1.6, 2.5.
  const auto got = parse_steps(steps.at("overall"));
  ASSERT_FALSE(got.empty());
  EXPECT_DOUBLE_EQ(got.front().second, 6.0 / 8);
  EXPECT_DOUBLE_EQ(got[1].second, 5.0 / 8);
  EXPECT_DOUBLE_EQ(got.back().first, 3.0);
  EXPECT_DOUBLE_EQ(got.back().second, 0.0);
}

TEST(FastPCurveSvg, SpeedupsBeyondTheAxisKeepTheTailUp) {
  std::map<int, std::vector<std::string>> suite{{1, {"a", "b"}}};
  const std::string svg = fast_p_curve_svg(
      {make_result("a", 1, Verdict::correct, 4.0), make_result("b", 1, Verdict::correct, 2.0)}, suite, Baseline::eager);
  ASSERT_TRUE(check_xml(svg).ok);
  const auto got = parse_steps(attrs_by(svg, "class=\"curve\"", "data-level", "data-steps").at("1"));
  ASSERT_EQ(got.size(), 4u);  // (0,1) (2,1) (2,0.5) (3,0.5)
  EXPECT_DOUBLE_EQ(got.back().first, 3.0);
  EXPECT_DOUBLE_EQ(got.back().second, 0.5);
}

TEST(FastPCurveSvg, EscapesTitleAndCompileBaseline) {
  const std::string svg = fast_p_curve_svg(hand_suite_results(), kSuite, Baseline::compile, "R&D <run 1>");
  const XmlCheck x = check_xml(svg);
  ASSERT_TRUE(x.ok) << x.error;
  EXPECT_NE(svg.find("R&amp;D &lt;run 1&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("R&D"), std::string::npos);
  EXPECT_NE(svg.find("vs compile"), std::string::npos);
}

TEST(FastPCurveSvg, EmptyInputStillValid) {
  const std::string svg = fast_p_curve_svg({}, {}, Baseline::eager);
  const XmlCheck x = check_xml(svg);
  ASSERT_TRUE(x.ok) << x.error;
  // Only the overall curve, with no tasks: it has no vertices.
  EXPECT_EQ(count(svg, "class=\"curve\""), 1u);
}

TEST(SpeedupHistogramSvg, BinCountsByHand) {
  // Speedups 1.0, 1.1, 2.0, 0.7:
  //   log2(1.0) = 0       -> bin floor(0 · 4) = 0, [1, 2^0.25 = 1.189)
  //   log2(1.1) = 0.1375  -> bin floor(0.55) = 0
  //   log2(2.0) = 1       -> bin 4, [2, 2.378)
  //   log2(0.7) = -0.5146 -> bin floor(-2.058) = -3, [0.595, 0.707)
  // plus non-correct results: 1 incorrect, 2 compile_error, 1 timeout; and one correct result with no speedup.
  std::vector<Result> rs{make_result("t&1", 1, Verdict::correct, 1.0),  make_result("t<2>", 1, Verdict::correct, 1.1),
                         make_result("t3", 1, Verdict::correct, 2.0),   make_result("t4", 1, Verdict::correct, 0.7),
                         make_result("t5", 1, Verdict::incorrect, 3.0), make_result("t6", 1, Verdict::compile_error),
                         make_result("t7", 2, Verdict::compile_error),  make_result("t8", 2, Verdict::timeout),
                         make_result("t9", 2, Verdict::correct)};
  const std::string svg = speedup_histogram_svg(rs, Baseline::eager);
  ASSERT_EQ(svg.rfind("<svg", 0), 0u);
  const XmlCheck x = check_xml(svg);
  ASSERT_TRUE(x.ok) << x.error;
  EXPECT_EQ(x.opened.at("g"), x.closed.at("g"));
  EXPECT_EQ(x.opened.at("text"), x.closed.at("text"));

  const auto bins = attrs_by(svg, "class=\"bin\"", "data-bin", "data-count");
  EXPECT_EQ(bins.at("0"), "2");
  EXPECT_EQ(bins.at("4"), "1");
  EXPECT_EQ(bins.at("-3"), "1");
  int total = 0;
  for (const auto& [k, c] : bins) total += std::stoi(c);
  EXPECT_EQ(total, 4);  // the incorrect result's 3.0 is not plotted
  // Default range: whole octaves covering [0.5, 2) and the data: bins -4 .. 7.
  EXPECT_EQ(bins.size(), 12u);
  EXPECT_TRUE(bins.count("-4"));
  EXPECT_TRUE(bins.count("7"));
  EXPECT_FALSE(bins.count("8"));
  const auto lo = attrs_by(svg, "class=\"bin\"", "data-bin", "data-lo");
  EXPECT_DOUBLE_EQ(std::stod(lo.at("4")), 2.0);
  EXPECT_DOUBLE_EQ(std::stod(lo.at("0")), 1.0);

  const auto classes = attrs_by(svg, "class=\"class-count\"", "data-class", "data-count");
  EXPECT_EQ(classes.at("correct"), "4");
  EXPECT_EQ(classes.at("correct_no_speedup"), "1");
  EXPECT_EQ(classes.at("incorrect"), "1");
  EXPECT_EQ(classes.at("compile_error"), "2");
  EXPECT_EQ(classes.at("timeout"), "1");
  EXPECT_EQ(classes.at("rejected"), "0");
  EXPECT_EQ(classes.at("runtime_error"), "0");

  // Task names are escaped in the bins' tooltips, and the 1x marker is there.
  EXPECT_NE(svg.find("t&amp;1"), std::string::npos);
  EXPECT_NE(svg.find("t&lt;2&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("t&1"), std::string::npos);
  EXPECT_NE(svg.find("class=\"marker\""), std::string::npos);
  EXPECT_NE(svg.find("1× (baseline)"), std::string::npos);
}

TEST(SpeedupHistogramSvg, CompileBaselineAndExtremes) {
  std::vector<Result> rs{make_result("a", 1, Verdict::correct, 1.0, 1e6),
                         make_result("b", 1, Verdict::correct, 1.0, 1e-9),
                         make_result("c", 1, Verdict::correct, 1.0, 1.5)};
  const std::string svg = speedup_histogram_svg(rs, Baseline::compile);
  const XmlCheck x = check_xml(svg);
  ASSERT_TRUE(x.ok) << x.error;
  const auto bins = attrs_by(svg, "class=\"bin\"", "data-bin", "data-count");
  // 1e6 and 1e-9 are beyond 2^±10: clamped into the edge bins 39 and -40. 1.5: log2 = 0.585 -> bin 2.
  EXPECT_EQ(bins.at("39"), "1");
  EXPECT_EQ(bins.at("-40"), "1");
  EXPECT_EQ(bins.at("2"), "1");
  EXPECT_EQ(bins.size(), 80u);
  EXPECT_NE(svg.find("vs compile"), std::string::npos);
}

TEST(SpeedupHistogramSvg, NoCorrectResults) {
  const std::string svg = speedup_histogram_svg({make_result("a", 1, Verdict::runtime_error)}, Baseline::eager);
  const XmlCheck x = check_xml(svg);
  ASSERT_TRUE(x.ok) << x.error;
  const auto bins = attrs_by(svg, "class=\"bin\"", "data-bin", "data-count");
  EXPECT_EQ(bins.size(), 8u);  // [0.5, 2): bins -4 .. 3
  for (const auto& [k, c] : bins) EXPECT_EQ(c, "0") << k;
  EXPECT_EQ(attrs_by(svg, "class=\"class-count\"", "data-class", "data-count").at("runtime_error"), "1");
}

}  // namespace report_svg_test
}  // namespace vinci::eval
