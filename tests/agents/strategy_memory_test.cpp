// Short-term memory of strategies: how the strategy line is found and clipped, and the rendered list.
#include "agents/strategy_memory.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace strategy_memory_test {
using namespace vinci::agents;

TEST(StrategyMemory, TheStrategyLineIsFoundWhateverItsMarkup) {
  EXPECT_EQ(stated_strategy("Intro.\n## Strategy: fuse loops"), "fuse loops");
  EXPECT_EQ(stated_strategy("- **STRATEGY**: vectorize loads"), "vectorize loads");
  // A bulleted strategy line wins over prose before it.
  EXPECT_EQ(stated_strategy("I will start simple.\n- **Strategy:** tile by 32"), "tile by 32");
  EXPECT_EQ(stated_strategy("  strategy :  padded tiles  \n"), "padded tiles");
  // A "Strategy:" heading alone: what follows it is the first prose.
  EXPECT_EQ(stated_strategy("Strategy:\nuse warps"), "use warps");
}

TEST(StrategyMemory, WithoutAStrategyLineTheFirstProseLineIsUsed) {
  EXPECT_EQ(stated_strategy("\n\n  # Plan  \nsecond line"), "Plan");
  EXPECT_EQ(stated_strategy(""), "");
  // Code blocks are skipped, an unclosed one to the end.
  EXPECT_EQ(stated_strategy("```cpp\nint x;\n"), "");
}

TEST(StrategyMemory, LongStrategiesAreClippedWithAnEllipsis) {
  EXPECT_EQ(stated_strategy("Strategy: " + std::string(30, 'a'), 10), "aaaaaaa...");
  EXPECT_EQ(stated_strategy("Strategy: " + std::string(10, 'a'), 10), std::string(10, 'a'));
}

TEST(StrategyMemory, EntriesAreKeptInOrder) {
  StrategyMemory memory;
  memory.add("tile", "incorrect");
  memory.add("", "timeout");
  ASSERT_EQ(memory.entries().size(), 2u);
  EXPECT_EQ(memory.entries()[0].strategy, "tile");
  EXPECT_EQ(memory.entries()[1].strategy, "(no strategy stated)");
  EXPECT_EQ(memory.render(),
            "## Strategies already tried on this task\nDo not repeat one that failed or was slow; build on the best.\n"
            "- tile -> incorrect\n- (no strategy stated) -> timeout\n");
  // Exactly max_entries: nothing is hidden, so no note about earlier attempts.
  EXPECT_EQ(memory.render(2).find("earlier attempts"), std::string::npos);
  EXPECT_NE(memory.render(1).find("(1 earlier attempts not shown)\n- (no strategy stated) -> timeout\n"),
            std::string::npos);
}
TEST(StrategyMemory, StatedStrategyAndRendering) {
  EXPECT_EQ(stated_strategy("<think>Strategy: hidden</think>\n**Strategy:** tile in shared memory\n```python\nx\n```"),
            "tile in shared memory");
  EXPECT_EQ(stated_strategy("I fuse the two loops.\n```python\n# Strategy: not this\n```"), "I fuse the two loops.");
  EXPECT_EQ(stated_strategy("```python\nx\n```"), "");
  StrategyMemory memory;
  EXPECT_EQ(memory.render(), "");
  for (int i = 0; i < 4; ++i) memory.add(fmt::format("idea {}", i), "incorrect");
  memory.add("", "correct, 1.50x eager");
  const std::string text = memory.render(3);
  EXPECT_NE(text.find("(2 earlier attempts not shown)"), std::string::npos);
  EXPECT_EQ(text.find("idea 1"), std::string::npos);
  EXPECT_NE(text.find("- idea 3 -> incorrect\n- (no strategy stated) -> correct, 1.50x eager\n"), std::string::npos);
}

}  // namespace strategy_memory_test
