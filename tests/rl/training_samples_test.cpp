// Episodes into training samples (src/rl/training_samples): masks over the model's own tokens only,
// per-turn rewards and returns, TRLOO across schemes, the selection and summary leave-one-out
// advantages, on a two-episode batch whose every number is worked out by hand below.
#include <gtest/gtest.h>

#include "rl/training_samples.h"

namespace training_samples_test {

using vinci::agents::AgentCall;
using vinci::agents::Episode;
using vinci::agents::Role;
using vinci::rl::TrainingSample;

AgentCall call(Role role, int scheme, int sample, int turn, vinci::agents::RewardInputs inputs = {}) {
  AgentCall c;
  c.role = role;
  c.scheme = scheme;
  c.sample = sample;
  c.turn = turn;
  c.prompt_ids = {1, 2, 3};
  c.response_ids = {4, 5, 6};
  c.logprobs = {-0.1f, -0.2f, -0.3f};
  c.loss_mask = {1, 1, 0};
  c.reward_inputs = std::move(inputs);
  return c;
}

// "no_answer": the turn's answer held no kernel, so it has no verdict.
vinci::agents::TurnInputs turn(std::string_view verdict, double speedup = 0, double coverage = 0) {
  vinci::agents::TurnInputs t;
  if (verdict != "no_answer") t.verdict = vinci::eval::verdict_from_string(verdict);
  t.speedup = speedup;
  t.coverage = coverage;
  return t;
}

// Episode 0, task T, daVinci rewards (0.5 + 0.5 min(s, 6) + 0.5 coverage when correct), gamma 1:
//   scheme 0: t0 incorrect 0,         t1 correct 2x cov 1   = 2.0   -> returns 2, 2
//   scheme 1: t0 correct 1x cov 0 = 1.0, t1 compile_error 0          -> returns 1, 0
//   scheme 2 (null, no selection call): t0 no_answer 0 (untrainable), t1 correct 4x cov 0.5 = 2.75
//                                                                     -> returns 2.75, 2.75
//   TRLOO (T,0): 2 - (1 + 2.75)/2 = 0.125, 1 - (2 + 2.75)/2 = -1.375, [2.75 - 1.5 = 1.25, not emitted]
//         (T,1): 2 - (0 + 2.75)/2 = 0.625, 0 - (2 + 2.75)/2 = -2.375, 2.75 - (2 + 0)/2 = 1.75
//   selection: R(scheme 0) = best turn 2.0, R(scheme 1) = 1.0 -> (2 - 1) x 0.3 = 0.3, -0.3
//   summary: R = 2.4 (one admitted skill); episode 1's summary got none, R = 0 -> +-2.4 x 0.5
std::vector<Episode> batch() {
  Episode e0;
  e0.id = "e0";
  e0.task = "T";
  e0.calls = {call(Role::selection, 0, 0, 0),
              call(Role::selection, 1, 0, 0),
              call(Role::policy, 0, 0, 0, turn("incorrect", 3.0, 1.0)),
              call(Role::policy, 1, 0, 0, turn("correct", 1.0, 0.0)),
              call(Role::policy, 2, 0, 0, turn("no_answer")),
              call(Role::policy, 0, 0, 1, turn("correct", 2.0, 1.0)),
              call(Role::policy, 1, 0, 1, turn("compile_error")),
              call(Role::policy, 2, 0, 1, turn("correct", 4.0, 0.5)),
              call(Role::verify, 0, 0, 0, turn("correct", 2.4, 1.0)),
              call(Role::summary, 0, 0, 0, vinci::agents::SummaryInputs{{"k"}, {}, {{"k", 2.4}}})};
  e0.calls[4].trainable = false;
  Episode e1;
  e1.id = "e1";
  e1.task = "T";
  e1.calls = {call(Role::summary, 0, 0, 0, vinci::agents::SummaryInputs{{"k"}, {}, {}})};
  return {e0, e1};
}

const TrainingSample& find(const std::vector<TrainingSample>& samples, size_t episode, size_t call) {
  for (const auto& s : samples)
    if (s.episode == episode && s.call == call) return s;
  throw std::logic_error("no sample for that call");
}

TEST(TrainingSamples, AdvantagesOfEveryAgentOnAHandWorkedBatch) {
  const auto episodes = batch();
  const auto out = vinci::rl::training_samples(episodes, {});
  EXPECT_EQ(out.untrainable, 1u);
  EXPECT_EQ(out.verify_calls, 1u);
  EXPECT_EQ(out.samples.size(), 5u + 2u + 2u);  // 5 trainable policy turns, 2 selection, 2 summary
  const auto& s = out.samples;
  EXPECT_DOUBLE_EQ(find(s, 0, 2).reward, 0.0);
  EXPECT_DOUBLE_EQ(find(s, 0, 5).reward, 2.0);
  EXPECT_DOUBLE_EQ(find(s, 0, 7).reward, 2.75);
  EXPECT_DOUBLE_EQ(find(s, 0, 2).advantage, 0.125);
  EXPECT_DOUBLE_EQ(find(s, 0, 3).advantage, -1.375);
  EXPECT_DOUBLE_EQ(find(s, 0, 5).advantage, 0.625);
  EXPECT_DOUBLE_EQ(find(s, 0, 6).advantage, -2.375);
  EXPECT_DOUBLE_EQ(find(s, 0, 7).advantage, 1.75);
  EXPECT_TRUE(find(s, 0, 7).correct);
  EXPECT_DOUBLE_EQ(find(s, 0, 7).coverage, 0.5);
  EXPECT_NEAR(find(s, 0, 0).advantage, 0.3, 1e-12);
  EXPECT_NEAR(find(s, 0, 1).advantage, -0.3, 1e-12);
  EXPECT_DOUBLE_EQ(find(s, 0, 9).reward, 2.4);
  EXPECT_DOUBLE_EQ(find(s, 0, 9).advantage, 1.2);
  EXPECT_DOUBLE_EQ(find(s, 1, 0).advantage, -1.2);
}

TEST(TrainingSamples, OnlyTheModelsOwnTokensAreTargets) {
  const auto out = vinci::rl::training_samples(batch(), {});
  const auto& s = find(out.samples, 0, 3);
  EXPECT_EQ(s.ids, (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(s.loss_mask,
            (std::vector<uint8_t>{0, 0, 0, 1, 1, 0}));  // prompt never; the call's own mask on the response
  EXPECT_EQ(s.rollout_logprobs, (std::vector<float>{-0.1f, -0.2f}));
  EXPECT_EQ(s.role, Role::policy);
  EXPECT_EQ(s.scheme, 1);
}

TEST(TrainingSamples, AgentsCanBeLeftOutAndBadRecordsAreNamed) {
  vinci::rl::SampleConfig c;
  c.train_selection = c.train_summary = false;
  EXPECT_EQ(vinci::rl::training_samples(batch(), c).samples.size(), 5u);
  auto episodes = batch();
  episodes[0].calls[3].logprobs.pop_back();
  try {
    vinci::rl::training_samples(episodes, {});
    FAIL() << "a call with fewer logprobs than response ids was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "episode e0 (T), call 3: 3 response ids but 2 logprobs and 3 mask entries");
  }
  episodes = batch();
  episodes[0].calls[5].reward_inputs = std::monostate{};
  try {
    vinci::rl::training_samples(episodes, {});
    FAIL() << "a policy call without its turn's inputs was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "episode e0 (T), call 5: a policy call without its turn's reward inputs");
  }
}

}  // namespace training_samples_test
