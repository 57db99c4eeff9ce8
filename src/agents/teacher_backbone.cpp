#include "agents/teacher_backbone.h"

#include <algorithm>
#include <random>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>
#include "core/hash.h"
#include "curriculum/task_source.h"

namespace vinci::agents {

using curriculum::Defect;
using curriculum::Family;
using curriculum::Strategy;
using nlohmann::ordered_json;

std::string teacher_skill_of(const curriculum::TaskSpec& spec, const Strategy& s) {
  if (s.defect != Defect::none || !s.fused) return "";
  if (spec.family == Family::matmul) return "triton_linear_epilogue_on_the_accumulator";
  if (s.chunk > 0) return "triton_online_reduction_long_rows";
  if (spec.long_rows()) return "";  // a whole long row as one tile: the strategy no skill teaches
  // A program a short row: the strategy no skill teaches there (the several-rows skill's is faster).
  if (spec.short_rows() && s.rows_per_program == 1) return "";
  if (spec.family == Family::rowwise)
    return s.rows_per_program > 1 ? "triton_several_rows_per_program" : "triton_one_program_per_row";
  if (s.block >= 4096) return "triton_wide_blocks_for_bandwidth";
  if (s.block == 1024 && spec.chain.size() >= 2) return "triton_fuse_elementwise_chain";
  return "";
}

namespace {

const std::string& system_text(const llm::GenerationRequest& r) {
  static const std::string none;
  return !r.messages.empty() && r.messages[0].role == "system" ? r.messages[0].content : none;
}

std::string user_text(const llm::GenerationRequest& r) {
  for (const auto& m : r.messages)
    if (m.role == "user") return m.content;
  return "";
}

std::string tool_name(const llm::GenerationRequest& r) {
  if (!r.chat_extra.contains("tools") || !r.chat_extra["tools"].is_array() || r.chat_extra["tools"].empty()) return "";
  const auto& tool = r.chat_extra["tools"][0];
  return tool.contains("function") ? tool["function"].value("name", "") : tool.value("name", "");
}

// A generator per request: the run's seed, the request's seed and its whole conversation, so that
// every call draws differently and a rerun draws the same.
std::mt19937_64 rng_for(uint64_t seed, const llm::GenerationRequest& r) {
  const std::string digest = core::content_hash(
      {std::to_string(seed), std::to_string(r.sampling.seed.value_or(0)), llm::to_json(r.messages).dump()});
  return std::mt19937_64(std::stoull(digest.substr(0, 16), nullptr, 16));
}

bool chance(std::mt19937_64& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

template <typename T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& items) {
  return items[std::uniform_int_distribution<size_t>(0, items.size() - 1)(rng)];
}

std::string tool_call(const std::string& name, const ordered_json& arguments) {
  return "<tool_call>" + ordered_json{{"name", name}, {"arguments", arguments}}.dump() + "</tool_call>";
}

}  // namespace

TeacherBackbone::TeacherBackbone(std::vector<curriculum::CurriculumTask> tasks, std::vector<skills::Skill> skills,
                                 TeacherSettings settings)
    : tasks_(std::move(tasks)), settings_(settings) {
  for (const auto& t : tasks_) sources_.push_back(curriculum::task_source(t.spec));
  for (auto& s : skills) skills_.emplace(s.name, std::move(s));
}

std::vector<llm::GenerationResult> TeacherBackbone::generate(std::span<const llm::GenerationRequest> requests) {
  std::vector<llm::GenerationResult> out;
  for (const auto& request : requests) {
    llm::GenerationResult r;
    r.text = answer(request);
    r.finish_reason = llm::FinishReason::stop;
    r.token_ids_known = false;  // text only: the episodes are SFT data, not rollouts to train on
    out.push_back(std::move(r));
  }
  return out;
}

const curriculum::CurriculumTask& TeacherBackbone::task_in(const std::string& text) const {
  for (size_t i = 0; i < tasks_.size(); ++i)
    if (text.find(sources_[i]) != std::string::npos) return tasks_[i];
  throw std::invalid_argument("the teacher was asked about a task that is not in its curriculum");
}

std::string TeacherBackbone::answer(const llm::GenerationRequest& request) const {
  const std::string tool = tool_name(request);
  if (tool == "select_skills") return selection_answer(request);
  if (tool == "update_skill_library") return summary_answer(request);
  return policy_answer(request);
}

std::string TeacherBackbone::policy_answer(const llm::GenerationRequest& request) const {
  const auto& task = task_in(user_text(request));
  auto rng = rng_for(settings_.seed, request);
  const auto strategies = curriculum::teacher_strategies(task.spec);
  std::vector<Strategy> right, wrong;
  for (const auto& s : strategies) (s.defect == Defect::none ? right : wrong).push_back(s);

  // What it wrote before, by the descriptions of its "Strategy:" lines.
  std::vector<std::string> tried;
  bool last_wrong = false;
  for (const auto& m : request.messages) {
    if (m.role != "assistant") continue;
    const std::string& text = m.content;
    const auto at = text.find("Strategy: ");
    if (at != std::string::npos) tried.push_back(text.substr(at + 10, text.find('\n', at) - at - 10));
  }
  if (!tried.empty()) {
    // The newest user message opens with the last turn's result (prompts/policy_feedback.md).
    const std::string& feedback = request.messages.back().content;
    const auto result = feedback.find('\n', feedback.find("## Result of your turn"));
    last_wrong = result == std::string::npos || feedback.compare(result + 1, 11, "Correct on ") != 0;
  }

  // Strategies an injected skill asks for, when the system prompt carries one the teacher knows.
  std::vector<Strategy> skilled;
  const std::string& system = system_text(request);
  for (const auto& s : right) {
    const std::string skill = teacher_skill_of(task.spec, s);
    if (!skill.empty() && system.find("### " + skill + "\n") != std::string::npos) skilled.push_back(s);
  }
  auto untried = [&](const std::vector<Strategy>& from) {
    std::vector<Strategy> out;
    for (const auto& s : from)
      if (std::find(tried.begin(), tried.end(), curriculum::describe_strategy(task.spec, s)) == tried.end())
        out.push_back(s);
    return out.empty() ? from : out;
  };

  Strategy chosen;
  if (tried.empty() && !wrong.empty() && chance(rng, settings_.wrong_first))
    chosen = pick(rng, wrong);
  else if (!skilled.empty() && chance(rng, settings_.follow_skill))
    chosen = pick(rng, last_wrong ? skilled : untried(skilled));
  else
    chosen = pick(rng, last_wrong ? right : untried(right));
  return fmt::format("Strategy: {}\n```python\n{}```\n", curriculum::describe_strategy(task.spec, chosen),
                     curriculum::triton_solution(task.spec, chosen));
}

std::string TeacherBackbone::selection_answer(const llm::GenerationRequest& request) const {
  const std::string user = user_text(request);
  const auto& task = task_in(user);
  auto rng = rng_for(settings_.seed, request);
  std::vector<std::string> fitting;
  for (const auto& s : curriculum::teacher_strategies(task.spec))
    if (const auto skill = teacher_skill_of(task.spec, s);
        !skill.empty() && std::find(fitting.begin(), fitting.end(), skill) == fitting.end())
      fitting.push_back(skill);
  // The shown headers: "N. name ..." lines of the skills section.
  std::vector<std::string> shown;
  static const std::regex header(R"((?:^|\n)\s*\d+\.\s+`?([A-Za-z0-9_\-]+))");
  for (std::sregex_iterator it(user.begin(), user.end(), header), end; it != end; ++it) shown.push_back((*it)[1]);

  ordered_json picks = ordered_json::array();
  auto add = [&](const std::string& name, const std::string& reason) {
    if (picks.size() >= 3) return;
    for (const auto& p : picks)
      if (p["name"] == name) return;
    picks.push_back({{"name", name}, {"reason", reason}});
  };
  for (const auto& name : shown)
    if (std::find(fitting.begin(), fitting.end(), name) != fitting.end())
      add(name, fmt::format("fits a {} task", curriculum::to_string(task.spec.family)));
  if (!shown.empty() && chance(rng, 0.5)) add(pick(rng, shown), "might help");
  return tool_call(
      "select_skills",
      {{"think", fmt::format("{} with {} ops", curriculum::to_string(task.spec.family), task.spec.chain.size())},
       {"selected_skills", picks}});
}

std::string TeacherBackbone::summary_answer(const llm::GenerationRequest& request) const {
  const std::string user = user_text(request);
  const auto& task = task_in(user);
  // The fastest correct turn: "### Turn k: correct, X.XXx eager..." then its "Strategy: ..." line.
  static const std::regex turn(R"(### Turn \d+: correct, ([0-9.]+)x eager[^\n]*\nStrategy: ([^\n]*))");
  double best = 0;
  std::string best_description;
  for (std::sregex_iterator it(user.begin(), user.end(), turn), end; it != end; ++it)
    if (const double x = std::stod((*it)[1]); x > best) best = x, best_description = (*it)[2];
  ordered_json proposals = ordered_json::array();
  for (const auto& s : curriculum::teacher_strategies(task.spec)) {
    if (s.defect != Defect::none || curriculum::describe_strategy(task.spec, s) != best_description) continue;
    const auto skill = skills_.find(teacher_skill_of(task.spec, s));
    if (skill == skills_.end()) break;
    const auto& k = skill->second;
    proposals.push_back({{"name", k.name},
                         {"description", k.description},
                         {"scope", k.scope},
                         {"tags", k.tags},
                         {"content", k.content}});
    break;
  }
  return tool_call("update_skill_library",
                   {{"think", proposals.empty() ? "nothing reusable beyond the library"
                                                : fmt::format("{} reached {:.2f}x eager", best_description, best)},
                    {"new_skills", proposals}});
}

}  // namespace vinci::agents
