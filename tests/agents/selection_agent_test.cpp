// The selection agent on a scripted backbone: what it shows the model, and how it reads k answers
// (tool calls, JSON in text, unknown names, repeats, too many picks, garbage) into schemes.
#include "agents/selection_agent.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "core/files.h"
#include "support/fake_backbone.h"

namespace selection_agent_test {

using namespace vinci::agents;
using nlohmann::ordered_json;
using vinci::test::FakeBackbone;
namespace fs = std::filesystem;

vinci::skills::Skill skill(const std::string& name, const std::string& description, std::vector<std::string> tags) {
  vinci::skills::Skill s;
  s.name = name;
  s.description = description;
  s.scope = "elementwise and reduction kernels";
  s.tags = std::move(tags);
  s.content = "## Motivation\nm\n## Key Idea\nk\n## Example\ne\n";
  s.status = vinci::skills::Status::admitted;
  s.backends = {"cuda"};
  return s;
}

vinci::skills::Library library() {
  return vinci::skills::Library(
      {skill("warp_shuffle_reduction", "Reduce a softmax row max and sum with warp shuffles", {"softmax", "reduction"}),
       skill("online_softmax", "One pass softmax keeping a running max and sum", {"softmax"}),
       skill("vectorized_float4_loads", "Load float4 per thread for bandwidth in softmax and other row kernels",
             {"memory", "bandwidth"})});
}

vinci::eval::Task softmax_task() {
  vinci::eval::Task t;
  t.id = "level1/4_Softmax";
  t.level = 1;
  t.number = 4;
  t.name = "Softmax";
  t.file = fs::path(VINCI_SOURCE_ROOT) / "tasks" / "level1" / "4_Softmax.py";
  return t;
}

TEST(SelectionAgent, SamplesKSchemesFromTheShownHeadersAndAddsTheNullScheme) {
  FakeBackbone backbone;
  // 0: a server-parsed tool call; 1: JSON in the text with an unknown name and a repeat;
  // 2: four picks of three shown skills, one unknown.
  vinci::llm::GenerationResult tool;
  tool.prompt_ids = {1};
  tool.token_ids = {5, 6};
  tool.logprobs = {-0.1f, -0.2f};
  tool.tool_calls = ordered_json::parse(R"([{"function": {"name": "select_skills",
      "arguments": "{\"think\": \"rows\", \"selected_skills\": [{\"name\": \"online_softmax\", \"reason\": \"one pass\"}]}"}}])");
  backbone.push(tool);
  backbone.push_text(
      R"(<think>hmm</think>{"think": "t", "selected_skills": [{"name": "warp_shuffle_reduction", "reason": "r"},
      {"name": "made_up_skill", "reason": "?"}, {"name": "warp_shuffle_reduction", "reason": "again"}]})");
  backbone.push_text(R"({"think": "all", "selected_skills": ["online_softmax", "vectorized_float4_loads",
      "warp_shuffle_reduction", "nope"]})");

  SelectionSettings settings;
  settings.seed = 100;
  const auto out = select_skills(backbone, Prompts(), library(), softmax_task(), settings);

  ASSERT_EQ(backbone.requests().size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const auto& r = backbone.requests()[i];
    EXPECT_EQ(r.sampling.seed, 100u + i);
    ASSERT_EQ(r.messages.size(), 2u);
    const std::string user = r.messages[1].content;
    EXPECT_NE(user.find("class Model"), std::string::npos);  // the task source
    EXPECT_NE(user.find("1. "), std::string::npos);
    for (const char* name : {"warp_shuffle_reduction", "online_softmax", "vectorized_float4_loads"})
      EXPECT_NE(user.find(name), std::string::npos) << name;
    EXPECT_EQ(r.chat_extra["tools"][0]["function"]["name"], "select_skills");
  }
  EXPECT_EQ(out.shown.size(), 3u);
  ASSERT_EQ(out.schemes.size(), 4u);
  EXPECT_EQ(out.schemes[0].skills, (std::vector<std::string>{"online_softmax"}));
  EXPECT_EQ(out.schemes[0].reasons, (std::vector<std::string>{"one pass"}));
  EXPECT_EQ(out.schemes[1].skills, (std::vector<std::string>{"warp_shuffle_reduction"}));
  EXPECT_EQ(out.schemes[1].dropped,
            (std::vector<std::string>{"made_up_skill (not in the list)", "warp_shuffle_reduction (chosen twice)"}));
  EXPECT_EQ(out.schemes[2].skills,
            (std::vector<std::string>{"online_softmax", "vectorized_float4_loads", "warp_shuffle_reduction"}));
  EXPECT_EQ(out.schemes[2].dropped, (std::vector<std::string>{"nope (not in the list)"}));
  EXPECT_TRUE(out.schemes[3].null_scheme);
  EXPECT_EQ(out.schemes[3].index, 3);
  EXPECT_TRUE(out.schemes[3].skills.empty());

  ASSERT_EQ(out.calls.size(), 3u);
  EXPECT_EQ(out.calls[0].role, Role::selection);
  EXPECT_EQ(out.calls[0].response_ids, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(out.calls[0].loss_mask, (std::vector<uint8_t>{1, 1}));
  EXPECT_TRUE(out.calls[0].trainable);
  EXPECT_EQ(out.calls[2].scheme, 2);
  EXPECT_TRUE(out.calls[1].parse_failure.empty());
}

TEST(SelectionAgent, UnusableAnswersGiveEmptySchemesWithTheirClassification) {
  FakeBackbone backbone;
  backbone.push_text("I would use tiling.");
  vinci::llm::GenerationResult failed;
  failed.token_ids_known = false;
  failed.error = vinci::llm::GenerationError{"timeout", "no answer"};
  backbone.push(failed);
  SelectionSettings settings;
  settings.schemes = 2;
  const auto out = select_skills(backbone, Prompts(), library(), softmax_task(), settings);
  ASSERT_EQ(out.schemes.size(), 3u);
  EXPECT_TRUE(out.schemes[0].skills.empty());
  EXPECT_EQ(out.calls[0].parse_failure, "no_tool_call");
  EXPECT_EQ(out.calls[1].parse_failure, "backbone_timeout");
  EXPECT_FALSE(out.calls[1].trainable);
}

TEST(SelectionAgent, NoMatchingSkillsMeansNoCallAndOnlyTheNullScheme) {
  FakeBackbone backbone;
  const auto out = select_skills(backbone, Prompts(), vinci::skills::Library(), softmax_task(), SelectionSettings{});
  EXPECT_TRUE(backbone.requests().empty());
  ASSERT_EQ(out.schemes.size(), 1u);
  EXPECT_TRUE(out.schemes[0].null_scheme);
  EXPECT_TRUE(out.calls.empty());
}

TEST(Prompts, PlaceholdersAreFilledAndMissingValuesNamed) {
  const fs::path dir = fs::temp_directory_path() / ("vinci-prompts-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  vinci::core::write_file_atomic(dir / "selection_user.md", "task {{task_id}}: {{task_source}} ({{missing}})");
  const Prompts overridden(dir);
  try {
    overridden.render("selection_user", {{"task_id", "t"}, {"task_source", "{{task_id}}"}});
    FAIL() << "a placeholder without a value was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("{{missing}}"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("selection_user.md"), std::string::npos) << e.what();
  }
  vinci::core::write_file_atomic(dir / "selection_user.md", "task {{task_id}}: {{task_source}}");
  // Values are inserted verbatim: a value that looks like a placeholder stays as it is.
  EXPECT_EQ(overridden.render("selection_user", {{"task_id", "t"}, {"task_source", "{{task_id}}"}}),
            "task t: {{task_id}}");
  // Files the override folder lacks come from the shipped prompts.
  EXPECT_NE(overridden.render("selection_system", {}).find("select_skills"), std::string::npos);
  fs::remove_all(dir);
  EXPECT_THROW(Prompts(dir / "nope"), std::runtime_error);
}

}  // namespace selection_agent_test
