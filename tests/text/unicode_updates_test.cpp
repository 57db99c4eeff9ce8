// The generated table of general categories that changed between PCRE2's Unicode (14.0) and
// Oniguruma's (16.0). Regex relies on it being ordered, disjoint and made of real changes.
#include <gtest/gtest.h>

#include <string_view>

#include "text/unicode.h"

namespace unicode_updates_test {
using namespace vinci::text;

bool is_category(std::string_view c) {
  static constexpr std::string_view kAll[] = {"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl",
                                              "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc",
                                              "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"};
  for (const auto a : kAll)
    if (a == c) return true;
  return false;
}

TEST(UnicodeUpdates, RunsAreOrderedDisjointAndRealChanges) {
  const auto updates = unicode_updates();
  ASSERT_FALSE(updates.empty());
  char32_t previous_last = 0;
  for (size_t i = 0; i < updates.size(); ++i) {
    const UnicodeUpdate& u = updates[i];
    EXPECT_LE(u.first, u.last) << i;
    EXPECT_LE(u.last, U'\U0010FFFF') << i;
    if (i > 0) {
      EXPECT_GT(u.first, previous_last) << i;
    }
    previous_last = u.last;
    EXPECT_TRUE(is_category(u.pcre2_category)) << i << ": " << u.pcre2_category;
    EXPECT_TRUE(is_category(u.category)) << i << ": " << u.category;
    EXPECT_NE(std::string_view(u.pcre2_category), std::string_view(u.category)) << i;
    // Nothing is unassigned again in a later version.
    EXPECT_NE(std::string_view(u.category), "Cn") << i;
  }
}

TEST(UnicodeUpdates, KnownUnicode16Additions) {
  // From Unicode 16.0's UnicodeData.txt: U+1C89 CYRILLIC CAPITAL LETTER TJE (Lu), U+116D0 MYANMAR
  // PVO DIGIT ZERO (Nd); both unassigned (Cn) in Unicode 14.
  const auto category_of = [](char32_t cp) -> std::string {
    for (const UnicodeUpdate& u : unicode_updates())
      if (u.first <= cp && cp <= u.last) return std::string(u.pcre2_category) + ">" + u.category;
    return "";
  };
  EXPECT_EQ(category_of(U'\u1C89'), "Cn>Lu");
  EXPECT_EQ(category_of(U'\U000116D0'), "Cn>Nd");
  EXPECT_EQ(category_of(U'a'), "");
}
}  // namespace unicode_updates_test
