// An episode's calls as SFT records (rl/episode_sft.h): which calls become targets, what each record
// carries, and that the SFT reader (rl/sft_data.h) accepts every one. First on a hand-built episode,
// then on the procedural teacher run through the agents (tests/support/teacher_run.h).
#include "rl/episode_sft.h"

#include <gtest/gtest.h>

#include <map>

#include "agents/selection_agent.h"
#include "rl/sft_data.h"
#include "support/teacher_run.h"

namespace episode_sft_test {

using namespace vinci;
using nlohmann::ordered_json;

agents::AgentCall call(agents::Role role, const std::string& answer, std::optional<eval::Verdict> verdict = {},
                       const std::string& parse_failure = "") {
  agents::AgentCall c;
  c.role = role;
  c.messages = {{"system", "sys"}, {"user", "task"}};
  c.response_text = answer;
  c.parse_failure = parse_failure;
  if (verdict) {
    c.result = eval::Result{};
    c.result->verdict = *verdict;
  }
  return c;
}

TEST(EpisodeSft, CorrectAnswersAndParsedToolCallsBecomeTargets) {
  agents::Episode e;
  e.task = "level12/3_Thing";
  e.calls = {call(agents::Role::selection, "<tool_call>pick</tool_call>"),
             call(agents::Role::selection, "garbled", {}, "no_tool_call"),
             call(agents::Role::policy, "wrong kernel", eval::Verdict::incorrect),
             call(agents::Role::policy, "fast kernel", eval::Verdict::correct),
             call(agents::Role::policy, "no code", {}, "no_code"),
             call(agents::Role::verify, "rerun", eval::Verdict::correct),
             call(agents::Role::summary, "<tool_call>skills</tool_call>")};
  const auto records = rl::sft_records(e);
  ASSERT_EQ(records.size(), 4u);
  std::vector<std::string> answers, roles;
  for (const auto& r : records) {
    ASSERT_EQ(r["messages"].size(), 3u) << "the prompt as sent, then the answer";
    EXPECT_EQ(r["messages"][2]["role"], "assistant");
    answers.push_back(r["messages"][2]["content"]);
    roles.push_back(r["meta"]["role"]);
    EXPECT_EQ(r["meta"]["task"], "level12/3_Thing");
    EXPECT_EQ(r["meta"]["level"], 12);
  }
  EXPECT_EQ(answers, (std::vector<std::string>{"<tool_call>pick</tool_call>", "fast kernel", "rerun",
                                               "<tool_call>skills</tool_call>"}));
  EXPECT_EQ(roles, (std::vector<std::string>{"selection", "policy", "policy", "summary"}))
      << "a verifier's rerun is a policy answer";
  EXPECT_EQ(records[0]["tools"], ordered_json::array({agents::select_skills_tool()}));
  EXPECT_FALSE(records[1].contains("tools"));
  e.task = "custom_task";
  EXPECT_EQ(rl::sft_records(e)[0]["meta"]["level"], 0) << "no level prefix";
}

TEST(EpisodeSft, TheTeachersEpisodesPassTheSftReader) {
  test::TeacherRun run;
  const auto out = run.optimize(0, {.follow_skill = 0.0, .wrong_first = 0.5, .seed = 5}, 9, run.teacher_skills);
  const auto records = rl::sft_records(out.episode);
  std::map<std::string, size_t> roles;
  size_t correct_policy_calls = 0, summaries = 0;
  for (const auto& c : out.episode.calls) {
    correct_policy_calls +=
        (c.role == agents::Role::policy || c.role == agents::Role::verify) && c.result && c.result->correct();
    summaries += c.role == agents::Role::summary;
  }
  for (size_t i = 0; i < records.size(); ++i) {
    const auto c = rl::parse_sft_conversation(records[i], i + 1);
    ++roles[c.role];
    EXPECT_EQ(c.task, "level1/1_ReluScale");
    EXPECT_EQ(c.level, 1);
    EXPECT_EQ(c.tools.is_null(), c.role == "policy") << c.role;
  }
  EXPECT_GT(correct_policy_calls, 0u);
  EXPECT_EQ(roles["policy"], correct_policy_calls) << "every correct policy answer, and no other";
  EXPECT_EQ(roles["selection"], 2u) << "two sampled schemes";
  EXPECT_EQ(roles["summary"], summaries);
}

}  // namespace episode_sft_test
