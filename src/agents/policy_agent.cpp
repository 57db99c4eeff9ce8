#include "agents/policy_agent.h"

#include <map>

#include <fmt/format.h>

#include "agents/feedback.h"
#include "agents/output_parser.h"
#include "core/files.h"
#include "core/hash.h"
#include "eval/candidate.h"

namespace vinci::agents {

using nlohmann::ordered_json;

double PolicyTurn::speedup() const { return result ? attempt_speedup(*result) : 0.0; }

std::optional<size_t> Rollout::best_turn() const {
  std::optional<size_t> best;
  for (size_t i = 0; i < turns.size(); ++i)
    if (turns[i].result && turns[i].result->correct() && (!best || turns[i].speedup() > turns[*best].speedup()))
      best = i;
  return best;
}

double Rollout::best_speedup() const {
  const auto b = best_turn();
  return b ? turns[*b].speedup() : 0.0;
}

std::string skills_section(const Prompts& prompts, const std::vector<skills::Skill>& skills) {
  if (skills.empty()) return "";
  std::string body;
  for (const auto& s : skills) body += fmt::format("### {}\n{}\n\n{}\n\n", s.name, s.description, s.content);
  return prompts.render("policy_skills_section", {{"skills", body}});
}

std::vector<llm::ChatMessage> policy_messages(const Prompts& prompts, const PolicyTask& task, const Rollout& rollout,
                                              const std::string& memory) {
  std::vector<llm::ChatMessage> messages;
  messages.push_back(
      {"system", prompts.render("policy_system", {{"skills_section", skills_section(prompts, rollout.skills)}})});
  messages.push_back(
      {"user", prompts.render("policy_user", {{"task_id", task.task.id}, {"task_source", task.source}})});
  for (size_t i = 0; i < rollout.turns.size(); ++i) {
    const PolicyTurn& t = rollout.turns[i];
    // The earlier answer as code and stated strategy only: its reasoning is dropped.
    std::string answer;
    if (!t.strategy.empty()) answer += "Strategy: " + t.strategy + "\n\n";
    answer += t.code.empty() ? "(this answer held no usable kernel file)" : "```python\n" + t.code + "\n```";
    messages.push_back({"assistant", answer});
    const bool last = i + 1 == rollout.turns.size();
    messages.push_back({"user", prompts.render("policy_feedback", {{"turn", std::to_string(t.turn + 1)},
                                                                   {"result", t.feedback},
                                                                   {"memory", last ? memory : ""}})});
  }
  return messages;
}

uint64_t turn_seed(uint64_t base, int scheme, int sample, int turn) {
  // 31 bits: servers pass the seed to generators that take a signed 32- or 64-bit value.
  const std::string h = core::content_hash(fmt::format("{}/{}/{}/{}", base, scheme, sample, turn));
  return std::stoull(h.substr(0, 8), nullptr, 16) & 0x7fffffffu;
}

void policy_turn(llm::Backbone& backbone, KernelEvaluator& evaluator, const Prompts& prompts,
                 std::span<const PolicySlot> slots, const PolicySettings& settings, const TurnOptions& options) {
  if (slots.empty()) return;
  std::map<const StrategyMemory*, std::string> memory_text;
  for (const PolicySlot& s : slots)
    if (!memory_text.contains(s.memory)) memory_text.emplace(s.memory, s.memory->render(settings.max_memory_entries));
  std::vector<llm::GenerationRequest> requests;
  for (const PolicySlot& s : slots) {
    const Rollout& r = *s.rollout;
    llm::GenerationRequest q;
    q.messages = policy_messages(prompts, *s.task, r, memory_text.at(s.memory));
    q.sampling = settings.sampling;
    q.sampling.seed = turn_seed(s.seed.value_or(settings.seed), r.scheme, r.sample, static_cast<int>(r.turns.size()));
    requests.push_back(std::move(q));
  }
  const auto results = backbone.generate(requests);

  std::vector<eval::Job> jobs;
  std::vector<size_t> job_of(slots.size(), SIZE_MAX);
  for (size_t i = 0; i < slots.size(); ++i) {
    const PolicyTask& task = *slots[i].task;
    Rollout& r = *slots[i].rollout;
    const llm::GenerationResult& g = results[i];
    PolicyTurn t;
    t.turn = static_cast<int>(r.turns.size());
    AgentCall call = record_call(options.role, requests[i], g);
    call.scheme = r.scheme;
    call.sample = r.sample;
    call.turn = t.turn;
    if (g.error) {
      t.parse_failure = call.parse_failure;
      t.feedback = fmt::format("The model server failed on this turn ({}): {}\n", g.error->kind, g.error->message);
    } else {
      t.strategy = stated_strategy(g.text);
      const CodeExtraction code = extract_kernel_code(g.text, settings.max_answer_chars);
      if (code.code) {
        t.code = *code.code;
        t.file = task.candidates_dir / fmt::format("{}_t{}.py", r.label, t.turn);
        core::write_file_atomic(t.file, t.code);
        job_of[i] = jobs.size();
        jobs.push_back({task.task, eval::load_candidate(t.file), options.fresh});
      } else {
        t.parse_failure = call.parse_failure = parse_failure_name(code.failure);
        t.feedback = code.feedback + "\n";
      }
    }
    r.turns.push_back(std::move(t));
    r.calls.push_back(std::move(call));
  }

  const auto evaluated = jobs.empty() ? std::vector<eval::Result>{} : evaluator.evaluate(jobs);
  for (size_t i = 0; i < slots.size(); ++i) {
    Rollout& r = *slots[i].rollout;
    PolicyTurn& t = r.turns.back();
    AgentCall& call = r.calls.back();
    if (job_of[i] != SIZE_MAX) {
      t.result = evaluated[job_of[i]];
      t.feedback = describe_result(*t.result, settings.max_log_chars);
      call.result = t.result;
      call.reward_inputs = TurnInputs{t.result->verdict, t.speedup(), t.result->coverage.value_or(0.0),
                                      t.result->correct() ? t.result->speedup_compile : std::nullopt};
    } else {
      call.reward_inputs = TurnInputs{};  // no kernel: no verdict
    }
    slots[i].memory->add(t.strategy, t.result ? outcome_line(*t.result) : "no usable answer (" + t.parse_failure + ")");
  }
}

void policy_turn(llm::Backbone& backbone, KernelEvaluator& evaluator, const Prompts& prompts, const PolicyTask& task,
                 std::span<Rollout* const> rollouts, StrategyMemory& memory, const PolicySettings& settings,
                 const TurnOptions& options) {
  std::vector<PolicySlot> slots;
  slots.reserve(rollouts.size());
  for (Rollout* r : rollouts) slots.push_back({&task, r, &memory, std::nullopt});
  policy_turn(backbone, evaluator, prompts, slots, settings, options);
}

}  // namespace vinci::agents
