// The SFT cold start's data (rl/sft_data.h): each role's line read as the header describes, the
// solution near-duplicate detection compares, and every malformed line refused as
// "<file>:<line>: <field>: <what>", with a torn last line skipped.
#include "rl/sft_data.h"

#include <gtest/gtest.h>

#include <string>

#include "core/files.h"
#include "support/temp_dir.h"

namespace sft_data_test {
using namespace vinci::rl;
using nlohmann::ordered_json;

const std::string kPolicyLine =
    R"({"messages": [{"role": "user", "content": "Write ModelNew."},)"
    R"( {"role": "assistant", "content": "Strategy: fuse.\n```python\nclass ModelNew:\n    pass\n```\n"}],)"
    R"( "meta": {"task": "level1/4_Softmax", "level": 1, "role": "policy", "skills": ["warp_reduce"]}})";
const std::string kSelectionLine =
    R"({"messages": [{"role": "user", "content": "Pick skills."}, {"role": "assistant", "content": "",)"
    R"( "tool_calls": [{"type": "function", "function": {"name": "select_skills", "arguments": "{}"}}]}],)"
    R"( "tools": [{"type": "function", "function": {"name": "select_skills"}}],)"
    R"( "meta": {"task": "level2/1_GemmBiasReLU", "level": 2, "role": "selection"}})";

// The message of the error a lone line raises when loaded from a file of its own.
std::string error_of(const std::string& line) {
  vinci::test::TempDir dir("vinci-sft-data-test");
  const auto file = dir.path() / "sft.jsonl";
  vinci::core::write_file_atomic(file, kPolicyLine + "\n" + line + "\n");
  try {
    load_sft_conversations(file);
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    const std::string prefix = file.string() + ":2: ";
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    return what.substr(std::min(what.size(), prefix.size()));
  }
  ADD_FAILURE() << "no error for " << line;
  return "";
}

TEST(SftData, EachRoleIsReadAsTheHeaderDescribes) {
  vinci::test::TempDir dir("vinci-sft-data-test");
  const auto file = dir.path() / "sft.jsonl";
  // The third line is torn (a killed writer): skipped, the two before it kept.
  vinci::core::write_file_atomic(file, kPolicyLine + "\n" + kSelectionLine + "\n{\"messages\": [");
  const auto all = load_sft_conversations(file);
  ASSERT_EQ(all.size(), 2u);

  const SftConversation& policy = all[0];
  EXPECT_EQ(policy.line, 1u);
  EXPECT_EQ(policy.task, "level1/4_Softmax");
  EXPECT_EQ(policy.level, 1);
  EXPECT_EQ(policy.role, "policy");
  EXPECT_EQ(policy.skills, std::vector<std::string>{"warp_reduce"});
  EXPECT_TRUE(policy.tools.is_null());
  EXPECT_EQ(policy.messages.size(), 2u);
  // A policy answer is compared by its kernel file alone, not its prose.
  EXPECT_EQ(policy.solution.find("Strategy"), std::string::npos) << policy.solution;
  EXPECT_EQ(policy.solution.rfind("class ModelNew:", 0), 0u) << policy.solution;

  const SftConversation& selection = all[1];
  EXPECT_EQ(selection.line, 2u);
  EXPECT_EQ(selection.role, "selection");
  EXPECT_EQ(selection.level, 2);
  EXPECT_TRUE(selection.skills.empty());
  ASSERT_TRUE(selection.tools.is_array());
  EXPECT_EQ(selection.tools.size(), 1u);
  // Other roles: the answer's text, then its tool calls as JSON.
  const auto calls = ordered_json::parse(kSelectionLine)["messages"][1]["tool_calls"];
  EXPECT_EQ(selection.solution, "\n" + calls.dump());
}

TEST(SftData, EveryMalformedLineNamesItsField) {
  EXPECT_EQ(error_of("[1, 2]"), "(line): a JSON object with 'messages' and 'meta' is required");
  EXPECT_EQ(error_of(R"({"meta": {}})"), "messages: a non-empty array of OpenAI messages is required");
  EXPECT_EQ(error_of(R"({"messages": [{"content": "x"}], "meta": {}})"),
            "messages[0]: an object with a string 'role' is required");
  EXPECT_EQ(error_of(R"({"messages": [{"role": "assistant", "content": "a"}, {"role": "user", "content": "q"}]})"),
            "messages[1].role: the last message must be the assistant's (what is trained)");
  const std::string answer = R"({"messages": [{"role": "assistant", "content": "a"}], )";
  EXPECT_EQ(error_of(answer + R"("tools": {}, "meta": {}})"),
            "tools: an array of tool schemas is required when present");
  EXPECT_EQ(error_of(answer + R"("meta": [1]})"), "meta: an object with task, level and role is required");
  EXPECT_EQ(error_of(answer + R"("meta": {"task": "", "level": 1, "role": "summary"}})"),
            "meta.task: a non-empty string is required");
  EXPECT_EQ(error_of(answer + R"("meta": {"task": "t", "level": 1, "role": "critic"}})"),
            "meta.role: 'critic' is not one of policy, selection, summary");
  EXPECT_EQ(error_of(answer + R"("meta": {"task": "t", "level": "1", "role": "summary"}})"),
            "meta.level: an integer is required");
  EXPECT_EQ(error_of(answer + R"("meta": {"task": "t", "level": 1, "role": "summary", "skills": ["a", 3]}})"),
            "meta.skills: 3 is not a skill name");
  // A policy answer without the kernel file teaches nothing about kernels.
  const std::string no_kernel = error_of(answer + R"("meta": {"task": "t", "level": 1, "role": "policy"}})");
  EXPECT_EQ(no_kernel.rfind("messages[0].content: a policy answer must hold the ModelNew file (", 0), 0u) << no_kernel;
  EXPECT_EQ(error_of("{\"messages\": oops}").rfind("not JSON: ", 0), 0u);
}

TEST(SftData, BlankLinesCountInTheLineNumbers) {
  vinci::test::TempDir dir("vinci-sft-data-test");
  const auto file = dir.path() / "sft.jsonl";
  vinci::core::write_file_atomic(file, kPolicyLine + "\n\n" + kSelectionLine + "\n\n[1]\n" + kPolicyLine + "\n");
  try {
    load_sft_conversations(file);
    ADD_FAILURE() << "the array on line 5 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(file.string() + ":5: ", 0), 0u) << e.what();
  }
  vinci::core::write_file_atomic(file, kPolicyLine + "\n\n" + kSelectionLine + "\n");
  const auto both = load_sft_conversations(file);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[1].line, 3u);
}

}  // namespace sft_data_test
