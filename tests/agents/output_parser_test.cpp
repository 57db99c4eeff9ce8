// What real models emit, and what the agents read out of it: the kernel file of a policy answer and
// the tool call of a selection or summary answer, with each malformed case classified.
#include "agents/output_parser.h"

#include <string>

#include <gtest/gtest.h>

namespace output_parser_test {

using namespace vinci::agents;
using nlohmann::ordered_json;

const std::string kModel = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n";

TEST(KernelCode, FencedWithOrWithoutALanguageTag) {
  for (const std::string open : {"```python", "```", "```py", "  ```Python  "}) {
    const auto e = extract_kernel_code("Here it is:\n" + open + "\n" + kModel + "```\nDone.");
    ASSERT_TRUE(e.code) << open;
    EXPECT_EQ(*e.code, kModel) << open;
    EXPECT_EQ(e.failure, ParseFailure::none);
  }
}

TEST(KernelCode, OfSeveralBlocksTheLastDefiningModelNewIsTheAnswer) {
  const std::string draft = "class ModelNew:\n    draft = True\n";
  const std::string text = "First the CUDA source:\n```cpp\n__global__ void k() {}\n```\nA first try:\n```python\n" +
                           draft + "```\nBetter:\n```python\n" + kModel +
                           "```\nUsage:\n```python\nm = ModelNew()\n```\n";
  const auto e = extract_kernel_code(text);
  ASSERT_TRUE(e.code);
  EXPECT_EQ(*e.code, kModel);
}

TEST(KernelCode, ReasoningDraftsDoNotCountWhenAnAnswerFollows) {
  const std::string text =
      "<think>maybe\n```python\nclass ModelNew:\n    bad = 1\n```\n</think>\nFinal:\n```python\n" + kModel + "```";
  EXPECT_EQ(*extract_kernel_code(text).code, kModel);
  // The template opened <think> in the prompt: the answer starts inside it and closes it alone.
  EXPECT_EQ(
      *extract_kernel_code("plan...\n```python\nclass ModelNew: pass\n```\n</think>\n```python\n" + kModel + "```")
           .code,
      kModel);
  // Code only inside the reasoning (the model never closed it) is still found.
  EXPECT_EQ(*extract_kernel_code("<think>\n```python\n" + kModel + "```\n").code, kModel);
}

TEST(KernelCode, BareSourceWithoutFencesIsTaken) {
  const auto e = extract_kernel_code(kModel);
  ASSERT_TRUE(e.code);
  EXPECT_EQ(*e.code, kModel);
}

TEST(KernelCode, LongerFencesHoldInnerFences) {
  const std::string inner = "doc = '''\n```\nnot a fence end\n```\n'''\n" + kModel;
  const auto e = extract_kernel_code("````python\n" + inner + "````\n");
  ASSERT_TRUE(e.code);
  EXPECT_EQ(*e.code, inner);
}

TEST(KernelCode, FailuresAreClassifiedWithFeedback) {
  struct Case {
    std::string text;
    ParseFailure failure;
    std::string in_feedback;
  };
  const std::vector<Case> cases = {
      {"", ParseFailure::empty, "empty"},
      {"  \n\t", ParseFailure::empty, "empty"},
      {"<think>long thoughts, then the token budget ran out", ParseFailure::empty, "only reasoning"},
      {"I would fuse the two loops.", ParseFailure::no_code, "no code block"},
      {"```python\nimport torch\ndef helper(): pass\n```", ParseFailure::no_model_new, "ModelNew"},
      {"```python\n" + kModel + "    def forward(self, x):\n        return x +", ParseFailure::unterminated_code,
       "cut off"},
      {std::string(500'001, 'x'), ParseFailure::too_long, "500001 characters"},
  };
  for (const auto& c : cases) {
    const auto e = extract_kernel_code(c.text);
    EXPECT_FALSE(e.code) << c.text.substr(0, 40);
    EXPECT_EQ(e.failure, c.failure) << c.text.substr(0, 40) << " gave " << parse_failure_name(e.failure);
    EXPECT_NE(e.feedback.find(c.in_feedback), std::string::npos) << e.feedback;
  }
}

const std::vector<std::string> kSelectKeys = {"think", "selected_skills"};

TEST(ToolCall, ServerParsedCallsComeFirstAndTheirStringArgumentsAreDecoded) {
  const ordered_json calls = ordered_json::parse(R"([{"id": "c1", "type": "function", "function": {
      "name": "select_skills", "arguments": "{\"think\": \"t\", \"selected_skills\": [{\"name\": \"a\", \"reason\": \"r\"}]}"}}])");
  const auto e = extract_tool_call("text with {\"think\": \"other\", \"selected_skills\": []}", calls, "select_skills",
                                   kSelectKeys);
  ASSERT_TRUE(e.call);
  EXPECT_EQ(e.call->name, "select_skills");
  EXPECT_EQ(e.call->arguments["think"], "t");
  EXPECT_EQ(e.call->arguments["selected_skills"][0]["name"], "a");
}

TEST(ToolCall, FoundInTagsFencesBareJsonAndReasoning) {
  const std::string args = R"({"think": "x", "selected_skills": [{"name": "tiling", "reason": "big matmul"}]})";
  const std::vector<std::string> texts = {
      "<tool_call>\n{\"name\": \"select_skills\", \"arguments\": " + args + "}\n</tool_call>",
      "```json\n" + args + "\n```",
      "I pick: " + args + " and that is all.",
      "<think>I will call it now: <tool_call>{\"name\": \"select_skills\", \"arguments\": " + args + "}</tool_call>",
      R"({"type": "function", "function": {"name": "select_skills", "arguments": )" + ordered_json(args).dump() + "}}",
  };
  for (const auto& t : texts) {
    const auto e = extract_tool_call(t, ordered_json::array(), "select_skills", kSelectKeys);
    ASSERT_TRUE(e.call) << t << ": " << e.feedback;
    EXPECT_EQ(e.call->arguments["selected_skills"][0]["name"], "tiling") << t;
  }
}

TEST(ToolCall, TheLastCallWinsAndBracesInsideStringsAreText) {
  const std::string text = R"(First {"think": "a", "selected_skills": []} then, on reflection,
{"think": "use {x} and \"}\" here", "selected_skills": [{"name": "b", "reason": "r"}]})";
  const auto e = extract_tool_call(text, nullptr, "select_skills", kSelectKeys);
  ASSERT_TRUE(e.call);
  EXPECT_EQ(e.call->arguments["think"], "use {x} and \"}\" here");
  EXPECT_EQ(e.call->arguments["selected_skills"][0]["name"], "b");
}

TEST(ToolCall, BrokenServerArgumentsFallBackToTheText) {
  const ordered_json calls =
      ordered_json::parse(R"([{"function": {"name": "select_skills", "arguments": "{\"think\": \"cut"}}])");
  const auto e = extract_tool_call(R"({"think": "t", "selected_skills": []})", calls, "select_skills", kSelectKeys);
  ASSERT_TRUE(e.call);
  EXPECT_EQ(e.call->arguments["think"], "t");
}

TEST(ToolCall, FailuresAreClassifiedWithFeedback) {
  {
    const auto e = extract_tool_call("I think tiling helps.", nullptr, "select_skills", kSelectKeys);
    EXPECT_EQ(e.failure, ParseFailure::no_tool_call);
    EXPECT_NE(e.feedback.find("did not call select_skills"), std::string::npos) << e.feedback;
  }
  {
    // A call to some other tool, and unrelated JSON, are not calls to this one.
    const auto e = extract_tool_call(R"({"name": "update_skill_library", "arguments": {}} {"a": 1})", nullptr,
                                     "select_skills", kSelectKeys);
    EXPECT_EQ(e.failure, ParseFailure::no_tool_call);
  }
  {
    const auto e = extract_tool_call(R"(<tool_call>{"name": "select_skills", "arguments": {"think": "t"}}</tool_call>)",
                                     nullptr, "select_skills", kSelectKeys);
    EXPECT_EQ(e.failure, ParseFailure::bad_tool_call);
    EXPECT_NE(e.feedback.find("lack selected_skills"), std::string::npos) << e.feedback;
  }
  {
    const ordered_json calls =
        ordered_json::parse(R"([{"function": {"name": "select_skills", "arguments": "not json"}}])");
    const auto e = extract_tool_call("", calls, "select_skills", kSelectKeys);
    EXPECT_EQ(e.failure, ParseFailure::bad_tool_call);
    EXPECT_NE(e.feedback.find("not valid JSON"), std::string::npos) << e.feedback;
  }
  {
    // Thousands of unclosed braces end in a classification, not a hang.
    const auto e = extract_tool_call(std::string(100'000, '{'), nullptr, "select_skills", kSelectKeys);
    EXPECT_EQ(e.failure, ParseFailure::no_tool_call);
  }
}

TEST(Reasoning, ThinkSpansAreRemoved) {
  EXPECT_EQ(strip_reasoning("a<think>b</think>c<think>d</think>e"), "ace");
  EXPECT_EQ(strip_reasoning("a<think>unclosed"), "a");
  EXPECT_EQ(strip_reasoning("opened in the prompt</think>answer"), "answer");
  EXPECT_EQ(strip_reasoning("no reasoning"), "no reasoning");
}

}  // namespace output_parser_test
