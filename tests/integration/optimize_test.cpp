// `vinci optimize` end to end on this machine's CPU, against a scripted OpenAI-compatible server
// that plays every agent role: selection picks a seed skill, the policy writes a slow kernel and
// then a fast one (the null scheme first answers without code), the summary proposes one sound skill
// and one that bypasses the kernel, and the verifier's greedy reruns reproduce the speedup. The
// evaluator is the real one, so every speedup below was measured; the fixture task's shape (its
// docstring) puts each margin far past its bar (~50x over eager and ~30x over the slow kernel against
// bars of 1.2x and 2x), so no busy CPU changes what is admitted.
// The answers are tests/support/agent_script.h's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agents/episode.h"
#include "core/files.h"
#include "core/process.h"
#include "skills/skill_jsonl.h"
#include "skills/store.h"
#include "support/agent_script.h"
#include "support/cpu_eval_config.h"
#include "support/jsonl.h"
#include "support/scripted_server.h"
#include "support/test_cache.h"
#include "support/vinci_cli.h"

namespace optimize_test {

using vinci::test::read_jsonl;
using vinci::test::run_vinci;

namespace fs = std::filesystem;
using nlohmann::json;
using vinci::test::RecordedRequest;
using vinci::test::ScriptedReply;
using vinci::test::ScriptedServer;

const fs::path kRoot = VINCI_SOURCE_ROOT;

using vinci::test::kFastKernel;
using vinci::test::kSlowKernel;
using vinci::test::test_cache;

// What the fake model said in each reply, so the episode can be checked token for token.
struct Sent {
  std::vector<int32_t> prompt_ids, token_ids;
  std::vector<float> logprobs;
};

class FakeModel {
 public:
  ScriptedReply answer(const RecordedRequest& request) {
    const json body = json::parse(request.body);
    const int n = body.value("n", 1);
    std::vector<std::string> texts;
    for (int i = 0; i < n; ++i)
      texts.push_back(
          vinci::test::scripted_answer(body.at("messages"), body.at("temperature").get<double>(), ++replies_));
    return {200, completion(texts)};
  }

  std::map<std::string, Sent> sent;  // by reply text

 private:
  // vLLM's chat completion with return_token_ids and tokens as token_id:N.
  std::string completion(const std::vector<std::string>& texts) {
    const int call = ++calls_;
    const std::vector<int32_t> prompt_ids = {900000 + call, 11, 22, 33};
    json choices = json::array();
    for (size_t i = 0; i < texts.size(); ++i) {
      Sent s{prompt_ids, {}, {}};
      json content = json::array();
      for (int k = 0; k < 3; ++k) {
        s.token_ids.push_back(call * 100 + static_cast<int>(i) * 10 + k);
        s.logprobs.push_back(-0.125f * static_cast<float>(k + 1));
        content.push_back({{"token", fmt::format("token_id:{}", s.token_ids.back())}, {"logprob", s.logprobs.back()}});
      }
      choices.push_back({{"index", i},
                         {"message", {{"role", "assistant"}, {"content", texts[i]}}},
                         {"logprobs", {{"content", content}}},
                         {"finish_reason", "stop"},
                         {"token_ids", s.token_ids}});
      sent[texts[i]] = s;
    }
    return json{{"id", fmt::format("c{}", call)},
                {"object", "chat.completion"},
                {"model", "tiny"},
                {"prompt_token_ids", prompt_ids},
                {"choices", choices}}
        .dump();
  }

  int replies_ = 0, calls_ = 0;
};

TEST(Optimize, SelectionPolicySummaryVerifierEndToEndOnCpu) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("vinci-optimize-test-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path db = dir / "skills.db";
  {
    vinci::skills::SkillStore store(db);
    store.import(vinci::skills::read_skills_jsonl(kRoot / "skills/seed.jsonl"), false);
  }
  ScriptedServer server;
  FakeModel model;
  server.respond_with([&](const RecordedRequest& r) { return model.answer(r); });

  const fs::path out = dir / "out";
  const std::vector<std::string> args = {(kRoot / "tests/fixtures/agents/level1/1_RowwiseRelu.py").string(),
                                         "--llm",
                                         server.base_url(),
                                         "--model-name",
                                         "tiny",
                                         "--skills",
                                         db.string(),
                                         "--schemes",
                                         "1",
                                         "--samples",
                                         "1",
                                         "--turns",
                                         "2",
                                         "--seed",
                                         "5",
                                         "--device",
                                         "cpu",
                                         "--no-compile-baseline",
                                         "--torch-ops",
                                         vinci::test::kAgentTestsTorchOps,
                                         "--trials",
                                         "20",
                                         "--time-budget",
                                         "3",
                                         "--run-timeout",
                                         "300",
                                         "--cache-dir",
                                         test_cache().string(),
                                         "--out",
                                         out.string()};
  const auto run = run_vinci("optimize", args, dir / "stderr.log", std::chrono::minutes(40));
  const std::string log = vinci::core::try_read_file(dir / "stderr.log").value_or("");
  ASSERT_TRUE(run.status.exited && run.status.code == 0) << run.status.describe() << "\n" << run.out << "\n" << log;
  EXPECT_NE(run.out.find("1 admitted (single_launch_elementwise)"), std::string::npos) << run.out;

  // Attempts: scheme 0 slow then fast; the null scheme no code then fast; two fresh verifier reruns.
  const auto attempts = read_jsonl(out / "attempts.jsonl");
  ASSERT_EQ(attempts.size(), 6u) << log;
  std::map<std::string, json> by_label;
  for (const auto& a : attempts)
    by_label[fmt::format("{}_t{}", a["label"].get<std::string>(), a["turn"].get<int>())] = a;
  const json& slow = by_label.at("s0_r0_t0");
  ASSERT_EQ(slow["result"]["class"], "correct") << slow.dump();
  const double base = slow["speedup"];
  EXPECT_EQ(by_label.at("s1_r0_t0")["parse_failure"], "no_code");
  for (const char* label : {"s0_r0_t1", "s1_r0_t1"}) {
    ASSERT_EQ(by_label.at(label)["result"]["class"], "correct") << label;
    EXPECT_GT(by_label.at(label)["speedup"].get<double>(), 2 * base) << label;  // 1 launch against 32
  }
  int verify = 0;
  for (const auto& a : attempts)
    if (a["role"] == "verify") {
      ++verify;
      EXPECT_FALSE(a["result"]["cached"].get<bool>()) << "verifier repeats are measured afresh";
      EXPECT_EQ(a["skills"].size(), 2u) << "the scheme's skill plus the proposed one";
    }
  EXPECT_EQ(verify, 2);
  EXPECT_EQ(vinci::core::read_file(out / "best_kernel.py"), kFastKernel);

  // The conversation the model saw: turn 2 shows turn 1's code and result, not its reasoning, and
  // the memory of what was tried; the null scheme's turn 2 explains the missing code.
  bool saw_refinement = false, saw_no_code_feedback = false;
  for (const auto& r : server.requests()) {
    const json body = json::parse(r.body);
    const json& m = body["messages"];
    if (m.size() != 4) continue;
    const std::string answer = m[2]["content"], feedback = m[3]["content"];
    EXPECT_EQ(answer.find("draft"), std::string::npos) << "reasoning must be dropped: " << answer;
    if (answer.find("call the kernel repeatedly") != std::string::npos) {
      saw_refinement = true;
      EXPECT_NE(answer.find("for _ in range(31)"), std::string::npos);
      EXPECT_NE(feedback.find("Speedup over eager"), std::string::npos) << feedback;
      EXPECT_NE(feedback.find("Strategies already tried"), std::string::npos) << feedback;
    } else {
      saw_no_code_feedback = feedback.find("Your answer had no code block") != std::string::npos;
    }
  }
  EXPECT_TRUE(saw_refinement);
  EXPECT_TRUE(saw_no_code_feedback);

  // The episode: every call with exactly the ids and logprobs the server sent.
  const auto episodes = vinci::agents::load_episodes(out / "episodes.jsonl");
  ASSERT_EQ(episodes.size(), 1u);
  std::map<std::string, int> roles;
  for (const auto& c : episodes[0].calls) {
    ++roles[std::string(vinci::agents::to_string(c.role))];
    const auto it = model.sent.find(c.response_text);
    ASSERT_NE(it, model.sent.end()) << "a recorded response the server never sent: " << c.response_text.substr(0, 200);
    EXPECT_EQ(c.prompt_ids, it->second.prompt_ids);
    EXPECT_EQ(c.response_ids, it->second.token_ids);
    EXPECT_EQ(c.logprobs, it->second.logprobs);
    EXPECT_EQ(c.loss_mask, std::vector<uint8_t>(3, 1));
    EXPECT_TRUE(c.trainable);
  }
  EXPECT_EQ(roles, (std::map<std::string, int>{{"selection", 1}, {"policy", 4}, {"summary", 1}, {"verify", 2}}));
  const auto& selection = std::get<vinci::agents::SelectionInputs>(episodes[0].calls.front().reward_inputs);
  ASSERT_EQ(selection.dropped.size(), 1u);
  EXPECT_EQ(selection.dropped[0], "made_up_skill (not in the list)");

  // The library: the sound skill admitted with its verification, the bypass refused.
  {
    vinci::skills::SkillStore store(db);
    const auto admitted = store.find("single_launch_elementwise");
    ASSERT_TRUE(admitted.has_value());
    EXPECT_EQ(admitted->status, vinci::skills::Status::admitted);
    ASSERT_EQ(admitted->verifications.size(), 1u);
    const auto& v = admitted->verifications[0];
    EXPECT_TRUE(v.correct);
    EXPECT_EQ(v.repeats, 2);
    EXPECT_DOUBLE_EQ(v.base_speedup, base);
    EXPECT_GE(v.skill_speedup, std::max(1.2, 1.2 * base));
    // The summary call carries what its reward needs: the skills it got admitted, at their verified speedup.
    const auto summary = std::find_if(episodes[0].calls.begin(), episodes[0].calls.end(),
                                      [](const auto& c) { return c.role == vinci::agents::Role::summary; });
    const auto& admitted_by_summary = std::get<vinci::agents::SummaryInputs>(summary->reward_inputs).admitted;
    ASSERT_EQ(admitted_by_summary.size(), 1u);
    EXPECT_EQ(admitted_by_summary[0].skill, "single_launch_elementwise");
    EXPECT_DOUBLE_EQ(admitted_by_summary[0].speedup, v.skill_speedup);
    EXPECT_FALSE(store.find("use_torch_relu").has_value());
    const std::string selected = selection.skills.at(0);
    EXPECT_EQ(store.find(selected)->usage.selected, 1);
    EXPECT_EQ(store.find(selected)->usage.injected, 1);
  }
  EXPECT_NE(vinci::core::read_file(out / "report.md").find("refused: bypasses the kernel"), std::string::npos);

  // A second run into the same folder must be asked to resume; resumed, every call is answered from
  // the journal: the server hears nothing and the results are the same.
  const size_t requests_before = server.requests().size();
  const auto again = run_vinci("optimize", args, dir / "stderr2.log", std::chrono::minutes(40));
  EXPECT_EQ(again.status.code, 1);
  EXPECT_NE(vinci::core::read_file(dir / "stderr2.log").find("--resume"), std::string::npos);
  std::vector<std::string> resume = args;
  resume.push_back("--resume");
  resume.push_back("--no-admit");
  const auto resumed = run_vinci("optimize", resume, dir / "stderr3.log", std::chrono::minutes(40));
  ASSERT_EQ(resumed.status.code, 0) << vinci::core::read_file(dir / "stderr3.log");
  EXPECT_EQ(server.requests().size(), requests_before);
  EXPECT_EQ(read_jsonl(out / "attempts.jsonl"), attempts);
  fs::remove_all(dir);
}

}  // namespace optimize_test
