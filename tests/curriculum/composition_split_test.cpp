// The held-out split by composition (curriculum/composition_split.h): a pair's fate depends on the
// seed and the pair alone, the share of held-out pairs is what was asked, and a composition trains
// exactly when none of its adjacent pairs is held out.
#include "curriculum/composition_split.h"

#include <gtest/gtest.h>

#include "core/setup_error.h"

namespace composition_split_test {
using vinci::curriculum::CompositionSplit;

TEST(CompositionSplit, PairsAreHeldOutAtTheShareAskedFor) {
  const CompositionSplit split(7, 0.2);
  int held = 0, total = 0;
  for (int a = 0; a < 100; ++a)
    for (int b = 0; b < 100; ++b, ++total)
      held += split.held_out_pair("op" + std::to_string(a), "op" + std::to_string(b));
  // 10000 pairs: a binomial share of 0.2 has a standard deviation of 0.004.
  EXPECT_NEAR(static_cast<double>(held) / total, 0.2, 0.02);
}

TEST(CompositionSplit, APairsFateDependsOnTheSeedAndThePairAlone) {
  const CompositionSplit a(7, 0.5), b(7, 0.5), other(8, 0.5);
  int differ = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string x = "x" + std::to_string(i), y = "y" + std::to_string(i);
    EXPECT_EQ(a.held_out_pair(x, y), b.held_out_pair(x, y));
    differ += a.held_out_pair(x, y) != other.held_out_pair(x, y);
  }
  EXPECT_GT(differ, 50) << "another seed draws another split";
  // Order matters: (x, y) and (y, x) are different compositions.
  int asymmetric = 0;
  for (int i = 0; i < 200; ++i)
    asymmetric += a.held_out_pair("p" + std::to_string(i), "q") != a.held_out_pair("q", "p" + std::to_string(i));
  EXPECT_GT(asymmetric, 50);
}

TEST(CompositionSplit, ACompositionTrainsWhenNoAdjacentPairIsHeldOut) {
  const CompositionSplit split(3, 0.3);
  // Find one held-out pair and one training pair among a few tokens.
  const std::vector<std::string> ops{"relu", "gelu", "tanh", "scale", "shift", "abs"};
  std::pair<std::string, std::string> held, kept;
  for (const auto& x : ops)
    for (const auto& y : ops) (split.held_out_pair(x, y) ? held : kept) = {x, y};
  ASSERT_FALSE(held.first.empty());
  ASSERT_FALSE(kept.first.empty());
  EXPECT_TRUE(split.trains({kept.first, kept.second}));
  EXPECT_TRUE(split.trains({"relu"})) << "a single op has no pair";
  EXPECT_FALSE(split.trains({held.first, held.second}));
  const std::vector<std::string> longer{kept.first, kept.second, held.first, held.second};
  const auto pairs = split.held_out_pairs(longer);
  ASSERT_FALSE(pairs.empty());
  EXPECT_NE(std::find(pairs.begin(), pairs.end(), held), pairs.end());
  EXPECT_THROW(CompositionSplit(1, 0.0), std::invalid_argument);
  EXPECT_THROW(CompositionSplit(1, 1.0), std::invalid_argument);
}

}  // namespace composition_split_test
