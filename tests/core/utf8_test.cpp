// Byte cuts that keep UTF-8 whole (core/utf8.h), on hand-encoded strings.
#include <gtest/gtest.h>

#include "core/utf8.h"

namespace utf8_test {

using vinci::core::utf8_prefix;
using vinci::core::utf8_suffix;

const std::string kEuro = "\xE2\x82\xAC";     // U+20AC, three bytes
const std::string kText = "a" + kEuro + "b";  // 5 bytes: a | E2 82 AC | b

TEST(Utf8Cut, PrefixEndsBeforeASplitCharacter) {
  EXPECT_EQ(utf8_prefix(kText, 5), kText);
  EXPECT_EQ(utf8_prefix(kText, 4), "a" + kEuro);
  EXPECT_EQ(utf8_prefix(kText, 3), "a");
  EXPECT_EQ(utf8_prefix(kText, 2), "a");
  EXPECT_EQ(utf8_prefix(kText, 1), "a");
  EXPECT_EQ(utf8_prefix(kText, 0), "");
}

TEST(Utf8Cut, SuffixStartsAfterASplitCharacter) {
  EXPECT_EQ(utf8_suffix(kText, 5), kText);
  EXPECT_EQ(utf8_suffix(kText, 4), kEuro + "b");
  EXPECT_EQ(utf8_suffix(kText, 3), "b");
  EXPECT_EQ(utf8_suffix(kText, 2), "b");
  EXPECT_EQ(utf8_suffix(kText, 1), "b");
  EXPECT_EQ(utf8_suffix(kText, 0), "");
}

}  // namespace utf8_test
