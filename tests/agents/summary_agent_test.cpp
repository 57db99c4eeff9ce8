// When a rollout earns a summary (agents/summary_agent.h): a correct first turn and a clear gain,
// by the settings' two bars, against turns built by hand.
#include "agents/summary_agent.h"

#include <gtest/gtest.h>

namespace summary_agent_test {
using namespace vinci::agents;
using vinci::eval::Result;
using vinci::eval::Verdict;

Rollout rollout_with(std::vector<std::pair<bool, double>> turns) {
  Rollout r;
  for (auto [correct, speedup] : turns) {
    PolicyTurn t;
    t.turn = static_cast<int>(r.turns.size());
    Result res;
    res.verdict = correct ? Verdict::correct : Verdict::incorrect;
    if (correct) res.speedup_eager = speedup;
    t.result = res;
    r.turns.push_back(t);
  }
  return r;
}

TEST(Summary, TriggerNeedsACorrectFirstTurnAndAClearGain) {
  const SummarySettings s;  // 1.2x turn 1 and 1.2x absolute
  EXPECT_TRUE(summary_triggered(rollout_with({{true, 1.0}, {true, 1.2}}), s));
  EXPECT_FALSE(summary_triggered(rollout_with({{true, 1.0}, {true, 1.19}}), s));
  EXPECT_FALSE(summary_triggered(rollout_with({{true, 0.5}, {true, 1.1}}), s));  // under 1.2 absolute
  EXPECT_FALSE(summary_triggered(rollout_with({{false, 0}, {true, 3.0}}), s));   // turn 1 wrong
  EXPECT_TRUE(summary_triggered(rollout_with({{true, 2.0}, {false, 0}, {true, 2.4}}), s));
}

}  // namespace summary_agent_test
