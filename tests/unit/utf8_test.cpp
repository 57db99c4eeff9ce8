// Byte cuts that keep UTF-8 whole (core/utf8.h), on hand-encoded strings.
#include <gtest/gtest.h>

#include "agents/feedback.h"
#include "agents/strategy_memory.h"
#include "core/utf8.h"

namespace utf8_test {

using vinci::core::utf8_prefix;
using vinci::core::utf8_suffix;

const std::string kEuro = "\xE2\x82\xAC";  // U+20AC, three bytes
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

// The agents cut model answers and build logs (gcc quotes names in U+2018/U+2019): what they keep
// must stay valid, or the episode cannot be written as JSON.
TEST(Utf8Cut, AgentsCutsStayValid) {
  // 13 bytes clipped to 12: 9 before "...", which would end inside the first euro sign.
  const std::string strategy = vinci::agents::stated_strategy("Strategy: " + std::string(7, 'x') + kEuro + kEuro, 12);
  EXPECT_EQ(strategy, std::string(7, 'x') + "...");
  std::string log;
  for (int i = 0; i < 50; ++i) log += "note: in \xE2\x80\x98" "f" "\xE2\x80\x99\n";  // no error line: the tail is kept
  for (size_t max = 20; max < 40; ++max)
    EXPECT_NO_THROW(nlohmann::json(vinci::agents::trim_build_log(log, max)).dump()) << max;
}

}  // namespace utf8_test
