// The SVG building blocks: escaping that keeps a chart well-formed XML whatever a task or skill is
// called, and tick steps of 1, 2 or 5 times a power of ten.
#include "core/svg.h"

#include <gtest/gtest.h>

namespace svg_test {
using namespace vinci::core;

TEST(Svg, EscapesMarkupAndDropsControlCharacters) {
  EXPECT_EQ(xml_escape(R"(a<b>&"c'd)"), "a&lt;b&gt;&amp;&quot;c&apos;d");
  // XML 1.0 allows tab, newline and carriage return among the C0 controls, and nothing else.
  EXPECT_EQ(xml_escape(std::string("x\x01y\tz\n\r\x1f", 9)), "xy\tz\n\r");
  EXPECT_EQ(xml_escape(std::string_view("a\0b", 3)), "ab");
  EXPECT_EQ(xml_escape("h\xC3\xA9"), "h\xC3\xA9");  // UTF-8 passes through
  EXPECT_EQ(xml_escape(""), "");
}

TEST(Svg, TheHeadCarriesSizeAndEscapedTitle) {
  const std::string head = svg_open(640, 480, "a<b");
  EXPECT_EQ(
      head.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"480\" viewBox=\"0 0 640 480\"", 0),
      0u)
      << head;
  EXPECT_NE(head.find("<title>a&lt;b</title>"), std::string::npos) << head;
  EXPECT_NE(head.find("x=\"320.00\""), std::string::npos) << head;  // the heading is centred
  EXPECT_EQ(head.find("a<b"), std::string::npos) << head;
}

TEST(Svg, TextAndLinesWithAndWithoutExtraAttributes) {
  EXPECT_EQ(svg_text(1, 2.5, "R&D"), "<text x=\"1.00\" y=\"2.50\" text-anchor=\"start\">R&amp;D</text>\n");
  EXPECT_EQ(svg_text(0, 0, "t", "end", "fill=\"red\""),
            "<text x=\"0.00\" y=\"0.00\" text-anchor=\"end\" fill=\"red\">t</text>\n");
  EXPECT_EQ(svg_line(0, 1, 2, 3.333, "#000"),
            "<line x1=\"0.00\" y1=\"1.00\" x2=\"2.00\" y2=\"3.33\" stroke=\"#000\"/>\n");
  EXPECT_EQ(svg_line(0, 0, 1, 1, "#000", "stroke-dasharray=\"2\""),
            "<line x1=\"0.00\" y1=\"0.00\" x2=\"1.00\" y2=\"1.00\" stroke=\"#000\" stroke-dasharray=\"2\"/>\n");
}

TEST(Svg, NiceStepsAreOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_DOUBLE_EQ(nice_step(100, 5), 20);   // raw 20
  EXPECT_DOUBLE_EQ(nice_step(7, 5), 2);      // raw 1.4 rounds up to 2
  EXPECT_DOUBLE_EQ(nice_step(12, 4), 5);     // raw 3 rounds up to 5
  EXPECT_DOUBLE_EQ(nice_step(70, 10), 10);   // raw 7 rounds up to 10
  EXPECT_DOUBLE_EQ(nice_step(0.3, 4), 0.1);  // raw 0.075
  EXPECT_DOUBLE_EQ(nice_step(3000, 6), 500);
  // Nothing to scale: a unit step rather than a zero or negative one.
  EXPECT_DOUBLE_EQ(nice_step(0, 5), 1);
  EXPECT_DOUBLE_EQ(nice_step(-4, 5), 1);
}
}  // namespace svg_test
