// What the agents cut (agents/feedback.h, agents/strategy_memory.h) keeps UTF-8 whole, on
// hand-encoded strings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agents/feedback.h"
#include "agents/strategy_memory.h"

namespace utf8_cuts_test {

const std::string kEuro = "\xE2\x82\xAC";  // U+20AC, three bytes

// The agents cut model answers and build logs (gcc quotes names in U+2018/U+2019): what they keep
// must stay valid, or the episode cannot be written as JSON.
TEST(Utf8Cut, AgentsCutsStayValid) {
  // 13 bytes clipped to 12: 9 before "...", which would end inside the first euro sign.
  const std::string strategy = vinci::agents::stated_strategy("Strategy: " + std::string(7, 'x') + kEuro + kEuro, 12);
  EXPECT_EQ(strategy, std::string(7, 'x') + "...");
  std::string log;
  for (int i = 0; i < 50; ++i)
    log +=
        "note: in \xE2\x80\x98"
        "f"
        "\xE2\x80\x99\n";  // no error line: the tail is kept
  for (size_t max = 20; max < 40; ++max)
    EXPECT_NO_THROW(nlohmann::json(vinci::agents::trim_build_log(log, max)).dump()) << max;
}

}  // namespace utf8_cuts_test
