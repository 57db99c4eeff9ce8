// The episode record: what training reads must come back exactly as written, and a damaged file must
// say which line and which field.
#include "agents/episode.h"

#include <filesystem>
#include <fstream>
#include <variant>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/files.h"

namespace episode_test {

using namespace vinci::agents;
namespace fs = std::filesystem;
using nlohmann::json;

Episode sample_episode() {
  Episode e;
  e.id = "ep-1";
  e.task = "level1/4_Softmax";
  e.model = "tiny";
  e.meta.protocol = "optimize";
  e.meta.strategy = "serial";
  e.meta.turns = 3;
  e.meta.samples = 2;
  e.meta.schemes = 1;
  e.meta.seed = 7;
  e.meta.skills_shown = {"tiling"};
  e.meta.library_size = 4;
  AgentCall select;
  select.role = Role::selection;
  select.scheme = 0;
  select.prompt_ids = {1, 2, 3};
  select.response_ids = {7, 8};
  select.logprobs = {-0.5f, -0.25f};
  select.loss_mask = {1, 1};
  select.messages = {{"user", "pick skills"}};
  select.response_text = "{\"think\": \"\", \"selected_skills\": []}";
  AgentCall policy;
  policy.role = Role::policy;
  policy.scheme = 0;
  policy.sample = 1;
  policy.turn = 2;
  policy.prompt_ids = {1, 2, 3, 9};
  policy.response_ids = {10, 11, 12};
  policy.logprobs = {-1.0f, -0.125f, -3.5f};
  policy.loss_mask = {1, 0, 1};
  vinci::eval::Result r;
  r.task = e.task;
  r.level = 1;
  r.verdict = vinci::eval::Verdict::correct;
  r.speedup_eager = 1.25;
  r.coverage = 0.5;
  policy.result = r;
  policy.reward_inputs = TurnInputs{vinci::eval::Verdict::correct, 1.25, 0.5, std::nullopt};
  AgentCall text_only;  // through a server that returned no ids
  text_only.role = Role::summary;
  text_only.trainable = false;
  text_only.response_text = "no ids here";
  text_only.parse_failure = "no_tool_call";
  e.calls = {select, policy, text_only};
  return e;
}

TEST(Episode, JsonRoundTripKeepsEveryTokenAndResult) {
  const Episode e = sample_episode();
  const json j = to_json(e);
  const Episode back = episode_from_json(json::parse(j.dump()));
  EXPECT_EQ(to_json(back), j);
  ASSERT_EQ(back.calls.size(), 3u);
  EXPECT_EQ(back.calls[1].role, Role::policy);
  EXPECT_EQ(back.calls[1].turn, 2);
  EXPECT_EQ(back.calls[1].loss_mask, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(back.calls[1].logprobs, (std::vector<float>{-1.0f, -0.125f, -3.5f}));
  ASSERT_TRUE(back.calls[1].result);
  EXPECT_EQ(back.calls[1].result->speedup_eager, 1.25);
  EXPECT_FALSE(back.calls[2].trainable);
  EXPECT_EQ(back.calls[2].parse_failure, "no_tool_call");
  EXPECT_EQ(back.calls[0].messages, (std::vector<vinci::llm::ChatMessage>{{"user", "pick skills"}}));
  EXPECT_EQ(back.meta, e.meta);
}

// The meta and message forms on disk, written out by hand; a kernelbench episode has no schemes.
TEST(Episode, MetaAndMessagesKeepTheirJsonForm) {
  Episode e = sample_episode();
  json j = to_json(e);
  EXPECT_EQ(j["meta"], json::parse(R"({"protocol": "optimize", "turns": 3, "samples": 2, "seed": 7,
      "strategy": "serial", "schemes": 1, "skills_shown": ["tiling"], "library_size": 4})"));
  EXPECT_EQ(j["calls"][0]["messages"], json::parse(R"([{"role": "user", "content": "pick skills"}])"));
  e.meta = {};
  e.meta.protocol = "kernelbench";
  e.meta.turns = 1;
  e.meta.samples = 4;
  e.meta.temperature = 0.5;
  e.meta.max_new_tokens = 64;
  j = to_json(e);
  EXPECT_EQ(j["meta"], json::parse(R"({"protocol": "kernelbench", "turns": 1, "samples": 4, "seed": 0,
      "temperature": 0.5, "max_new_tokens": 64})"));
  EXPECT_EQ(episode_from_json(j).meta, e.meta);

  j["meta"] = json::parse(R"({"strategy": "beam", "turns": 2})");  // an older file: no protocol
  EXPECT_EQ(episode_from_json(j).meta.strategy, "beam");
  j["meta"]["turns"] = "two";
  EXPECT_THAT([&] { episode_from_json(j); },
              testing::ThrowsMessage<std::invalid_argument>(testing::HasSubstr("meta.turns is malformed")));
  j["meta"]["turns"] = 2;
  j["calls"][0]["messages"] = json::parse(R"([{"role": "user", "content": [{"type": "text"}]}])");
  EXPECT_THAT([&] { episode_from_json(j); }, testing::ThrowsMessage<std::invalid_argument>(testing::HasSubstr(
                                                 "call 0: messages[0]: 'content' must be a string")));
  j["calls"][0]["messages"] = json::parse(R"([{"role": "assistant", "content": "", "tool_calls": []}])");
  EXPECT_THAT([&] { episode_from_json(j); },
              testing::ThrowsMessage<std::invalid_argument>(testing::HasSubstr("field 'tool_calls' is not kept")));
}

// Each role's record in the JSON form episode files have always had, written out by hand.
TEST(Episode, RewardInputsOfEveryRoleKeepTheirJsonForm) {
  Episode e = sample_episode();
  AgentCall no_kernel = e.calls[1];
  no_kernel.turn = 0;
  no_kernel.result.reset();
  no_kernel.reward_inputs = TurnInputs{};
  AgentCall faster_than_compile = e.calls[1];
  faster_than_compile.reward_inputs = TurnInputs{vinci::eval::Verdict::correct, 3.0, 0.75, 1.5};
  AgentCall rerun = e.calls[1];
  rerun.role = Role::verify;
  rerun.reward_inputs = TurnInputs{vinci::eval::Verdict::incorrect, 0.0, 0.25, std::nullopt};
  AgentCall selection = e.calls[0];
  selection.reward_inputs = SelectionInputs{{"tiling", "fusion"}, {"made_up (not in the list)"}};
  AgentCall summary = e.calls[2];
  summary.reward_inputs = SummaryInputs{{"fused_softmax", "online_max"}, {"use_torch_relu"}, {{"fused_softmax", 2.5}}};
  e.calls = {no_kernel, faster_than_compile, rerun, selection, summary, e.calls[2]};

  const json j = to_json(e);
  EXPECT_EQ(j["calls"][0]["reward_inputs"],
            json::parse(R"({"correct": false, "verdict": "no_answer", "speedup": 0.0, "coverage": 0.0})"));
  EXPECT_EQ(
      j["calls"][1]["reward_inputs"],
      json::parse(
          R"({"correct": true, "verdict": "correct", "speedup": 3.0, "coverage": 0.75, "speedup_compile": 1.5})"));
  EXPECT_EQ(j["calls"][2]["reward_inputs"],
            json::parse(R"({"correct": false, "verdict": "incorrect", "speedup": 0.0, "coverage": 0.25})"));
  EXPECT_EQ(j["calls"][3]["reward_inputs"],
            json::parse(R"j({"skills": ["tiling", "fusion"], "dropped": ["made_up (not in the list)"]})j"));
  EXPECT_EQ(j["calls"][4]["reward_inputs"],
            json::parse(R"({"proposed": ["fused_softmax", "online_max"], "refused": ["use_torch_relu"],
                            "admitted": [{"skill": "fused_softmax", "speedup": 2.5}]})"));
  EXPECT_EQ(j["calls"][5]["reward_inputs"], json::object());

  const Episode back = episode_from_json(json::parse(j.dump()));
  EXPECT_EQ(to_json(back), j);
  const auto& none = std::get<TurnInputs>(back.calls[0].reward_inputs);
  EXPECT_FALSE(none.verdict.has_value());
  EXPECT_FALSE(none.correct());
  const auto& fast = std::get<TurnInputs>(back.calls[1].reward_inputs);
  EXPECT_EQ(fast.verdict, vinci::eval::Verdict::correct);
  EXPECT_EQ(fast.speedup, 3.0);
  EXPECT_EQ(fast.coverage, 0.75);
  EXPECT_EQ(fast.speedup_compile, 1.5);
  EXPECT_EQ(std::get<TurnInputs>(back.calls[2].reward_inputs).verdict, vinci::eval::Verdict::incorrect);
  EXPECT_EQ(std::get<SelectionInputs>(back.calls[3].reward_inputs).skills,
            (std::vector<std::string>{"tiling", "fusion"}));
  const auto& proposals = std::get<SummaryInputs>(back.calls[4].reward_inputs);
  EXPECT_EQ(proposals.refused, (std::vector<std::string>{"use_torch_relu"}));
  ASSERT_EQ(proposals.admitted.size(), 1u);
  EXPECT_EQ(proposals.admitted[0].skill, "fused_softmax");
  EXPECT_EQ(proposals.admitted[0].speedup, 2.5);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(back.calls[5].reward_inputs));
}

// Forms older files hold: a turn without "verdict" (its result has one), a summary from before
// verification (no "admitted"); and what is not readable is named.
TEST(Episode, RewardInputsReadOlderFormsAndNameWhatIsWrong) {
  json j = to_json(sample_episode());
  j["calls"][1]["reward_inputs"] = json::parse(R"({"correct": true, "speedup": 1.25, "coverage": 0.5})");
  j["calls"][2]["reward_inputs"] = json::parse(R"({"proposed": ["a"], "refused": []})");
  const Episode e = episode_from_json(j);
  const auto& turn = std::get<TurnInputs>(e.calls[1].reward_inputs);
  EXPECT_EQ(turn.verdict, vinci::eval::Verdict::correct);  // the result's class
  EXPECT_EQ(turn.speedup, 1.25);
  EXPECT_EQ(turn.coverage, 0.5);
  EXPECT_FALSE(turn.speedup_compile.has_value());
  const auto& summary = std::get<SummaryInputs>(e.calls[2].reward_inputs);
  EXPECT_EQ(summary.proposed, (std::vector<std::string>{"a"}));
  EXPECT_TRUE(summary.admitted.empty());

  const auto error = [](const json& bad) {
    try {
      episode_from_json(bad);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  json unknown = to_json(sample_episode());
  unknown["calls"][1]["reward_inputs"]["verdict"] = "great";
  EXPECT_NE(error(unknown).find("episode ep-1, call 1: reward_inputs.verdict:"), std::string::npos) << error(unknown);
  json no_verdict = to_json(sample_episode());
  no_verdict["calls"][1]["reward_inputs"].erase("verdict");
  no_verdict["calls"][1]["result"] = nullptr;
  EXPECT_EQ(error(no_verdict),
            "episode ep-1, call 1: reward_inputs has no 'verdict' and the call no result to take it from");
  json words = to_json(sample_episode());
  words["calls"][1]["reward_inputs"]["speedup"] = "fast";
  EXPECT_EQ(error(words), "episode ep-1, call 1: reward_inputs.speedup must be a number, got \"fast\"");
  json admitted = to_json(sample_episode());
  admitted["calls"][2]["reward_inputs"] =
      json::parse(R"({"proposed": [], "refused": [], "admitted": [{"skill": "a"}]})");
  EXPECT_NE(error(admitted).find("episode ep-1, call 2: reward_inputs.admitted entries need"), std::string::npos)
      << error(admitted);
  json selection = to_json(sample_episode());
  selection["calls"][0]["reward_inputs"] = json::parse(R"({"skills": [1]})");
  EXPECT_EQ(error(selection), "episode ep-1, call 0: reward_inputs.skills holds 1, not a name");
}

TEST(Episode, DamagedFilesNameTheLineAndField) {
  const fs::path path = fs::temp_directory_path() / ("vinci-episodes-" + std::to_string(::getpid()) + ".jsonl");
  json bad = to_json(sample_episode());
  bad["calls"][1]["logprobs"] = json::array({-1.0});  // 3 response ids, 1 logprob
  json missing = to_json(sample_episode());
  missing["calls"][0].erase("role");
  vinci::core::write_file_atomic(path, to_json(sample_episode()).dump() + "\n\n" + bad.dump() + "\n");
  try {
    load_episodes(path);
    FAIL() << "a trainable call with too few logprobs was accepted";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path.string() + ":3:"), std::string::npos) << what;
    EXPECT_NE(what.find("call 1"), std::string::npos) << what;
    EXPECT_NE(what.find("1 logprobs"), std::string::npos) << what;
  }
  vinci::core::write_file_atomic(path, missing.dump() + "\n");
  try {
    load_episodes(path);
    FAIL() << "a call without a role was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing field 'role'"), std::string::npos) << e.what();
  }
  vinci::core::write_file_atomic(path, to_json(sample_episode()).dump() + "\n");
  EXPECT_EQ(load_episodes(path).size(), 1u);
  fs::remove(path);
  EXPECT_THROW(role_from_string("critic"), std::invalid_argument);
}

}  // namespace episode_test
