// tokenizer.json's Oniguruma regexes on PCRE2: Oniguruma's meaning of the escapes, rust-onig's
// iteration, and the constructs refused rather than matched differently.
#include "text/regex.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace regex_test {
using namespace vinci::text;

std::vector<std::pair<size_t, size_t>> spans(const std::string& pattern, std::string_view text) {
  std::vector<std::pair<size_t, size_t>> out;
  for (const auto& m : Regex(pattern).find_all(text)) out.emplace_back(m.begin, m.end);
  return out;
}
using Spans = std::vector<std::pair<size_t, size_t>>;

std::string error_of(const std::string& pattern) {
  try {
    Regex r(pattern);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Regex, MatchesLeftToRight) {
  EXPECT_EQ(spans("a+", "baaab aa"), (Spans{{1, 4}, {6, 8}}));
  EXPECT_EQ(spans("a+", ""), Spans{});
  EXPECT_EQ(spans("x", "abc"), Spans{});
}

TEST(Regex, AnEmptyMatchWherePreviousEndedIsSkipped) {
  // Rust's find_iter on "baa" with a*: 0..0, then 1..3, and no 3..3 (Python's finditer has one).
  EXPECT_EQ(spans("a*", "baa"), (Spans{{0, 0}, {1, 3}}));
  // Empty matches advance by whole characters, never into the middle of é.
  EXPECT_EQ(spans("x*", "\xC3\xA9"), (Spans{{0, 0}, {2, 2}}));
}

TEST(Regex, LineAnchorsMatchAtEveryLine) {
  // Ruby's ^ and $ are always multi-line.
  EXPECT_EQ(spans("^a", "a\na\nba"), (Spans{{0, 1}, {2, 3}}));
  EXPECT_EQ(spans("a$", "a\nba\nab"), (Spans{{0, 1}, {3, 4}}));
}

TEST(Regex, SpaceIsWhiteSpaceExactly) {
  EXPECT_EQ(spans("\\s+",
                  "a \t\xC2\xA0"
                  "b"),
            (Spans{{1, 5}}));                        // NBSP is White_Space
  EXPECT_EQ(spans("\\s", "\xE1\xA0\x8E"), Spans{});  // U+180E is not, since Unicode 6.3
  EXPECT_EQ(spans("\\S+", "a b"), (Spans{{0, 1}, {2, 3}}));
}

TEST(Regex, HIsAHexDigitAsInOniguruma) {
  // PCRE2's \h would be horizontal space.
  EXPECT_EQ(spans("\\h+", "xyz09afG \t"), (Spans{{3, 7}}));
  EXPECT_EQ(spans("\\H+", "09 af"), (Spans{{2, 3}}));
}

TEST(Regex, PropertiesUseUnicode16Tables) {
  // U+116D0 MYANMAR PVO DIGIT ZERO and U+10D70 GARAY SMALL LETTER A were added in Unicode 16.
  const std::string digit = "\xF0\x91\x9B\x90", small = "\xF0\x90\xB5\xB0";
  EXPECT_EQ(spans("\\d", "7" + digit), (Spans{{0, 1}, {1, 5}}));
  EXPECT_EQ(spans("\\D", digit), Spans{});
  EXPECT_EQ(spans("\\p{Ll}", small), (Spans{{0, 4}}));
  EXPECT_EQ(spans("\\p{L}", small), (Spans{{0, 4}}));
  EXPECT_EQ(spans("\\P{L}", small), Spans{});
  EXPECT_EQ(spans("\\p{^L}", small + "1"), (Spans{{4, 5}}));
  EXPECT_EQ(spans("[\\p{N}]+", "a12" + digit), (Spans{{1, 7}}));
}

TEST(Regex, ABracketRightAfterTheOpeningIsLiteral) {
  EXPECT_EQ(spans("[]a]+", "x]a]y"), (Spans{{1, 4}}));
  EXPECT_EQ(spans("[^]a]+", "]]xy]"), (Spans{{2, 4}}));
}

TEST(Regex, EscapedLiteralsMatchOnlyThemselves) {
  const std::string literal = "a.b*c(d)[e]{2}^$|\\+? é";
  const std::string text = "axbbc " + literal + " " + literal;
  EXPECT_EQ(spans(Regex::escape(literal), text),
            (Spans{{6, 6 + literal.size()}, {7 + literal.size(), 7 + 2 * literal.size()}}));
  EXPECT_EQ(Regex::escape("a_Z9"), "a_Z9");
}

TEST(Regex, UnsupportedConstructsAreRefusedByName) {
  // Oniguruma's word characters differ from PCRE2's.
  EXPECT_NE(error_of("\\w+").find("\\w at offset 0 is not supported"), std::string::npos) << error_of("\\w+");
  EXPECT_NE(error_of("a\\b").find("\\b at offset 1"), std::string::npos) << error_of("a\\b");
  EXPECT_NE(error_of("\\p{Greek}").find("\\p{Greek}"), std::string::npos) << error_of("\\p{Greek}");
  // Cn changes meaning with every Unicode version.
  EXPECT_NE(error_of("\\p{Cn}").find("not supported"), std::string::npos);
  EXPECT_NE(error_of("[a[b]]").find("'[' inside a character class"), std::string::npos);
  EXPECT_NE(error_of("[a-z&&[^x]]").find("'&&'"), std::string::npos);
  EXPECT_NE(error_of("\\Qa.b\\E").find("\\Q"), std::string::npos);
  EXPECT_NE(error_of("\\p").find("a \\p without {name}"), std::string::npos);
  EXPECT_NE(error_of("ab\\").find("lone backslash"), std::string::npos);
  // A letter class whose Unicode 16 members PCRE2 lacks cannot be negated inside a class.
  EXPECT_NE(error_of("[\\P{L}]").find("inside a character class"), std::string::npos) << error_of("[\\P{L}]");
}

TEST(Regex, APatternPcre2RejectsNamesThePattern) {
  const std::string e = error_of("(ab");
  EXPECT_NE(e.find("does not compile"), std::string::npos) << e;
  EXPECT_NE(e.find("\"(ab\""), std::string::npos) << e;
}
}  // namespace regex_test
