// The episode record: what training reads must come back exactly as written, and a damaged file must
// say which line and which field.
#include "agents/episode.h"

#include <filesystem>
#include <fstream>

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
  e.meta = {{"strategy", "serial"}, {"snapshot", 3}};
  AgentCall select;
  select.role = Role::selection;
  select.scheme = 0;
  select.prompt_ids = {1, 2, 3};
  select.response_ids = {7, 8};
  select.logprobs = {-0.5f, -0.25f};
  select.loss_mask = {1, 1};
  select.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "pick skills"}}});
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
  policy.reward_inputs = {{"correct", true}, {"speedup", 1.25}, {"coverage", 0.5}};
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
  EXPECT_THROW(role_from_name("critic"), std::invalid_argument);
}

}  // namespace episode_test
