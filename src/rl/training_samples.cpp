#include "rl/training_samples.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <variant>

#include <fmt/format.h>

namespace vinci::rl {

namespace {

using agents::Role;

std::string where(const agents::Episode& e, size_t call) {
  return fmt::format("episode {} ({}), call {}", e.id, e.task, call);
}

TrainingSample sequence_of(const agents::Episode& e, size_t episode, size_t index) {
  const agents::AgentCall& c = e.calls[index];
  if (c.prompt_ids.empty()) throw std::invalid_argument(where(e, index) + ": no prompt ids");
  if (c.logprobs.size() != c.response_ids.size() || c.loss_mask.size() != c.response_ids.size())
    throw std::invalid_argument(fmt::format("{}: {} response ids but {} logprobs and {} mask entries", where(e, index),
                                            c.response_ids.size(), c.logprobs.size(), c.loss_mask.size()));
  TrainingSample s;
  s.role = c.role;
  s.task = e.task;
  s.scheme = c.scheme;
  s.sample = c.sample;
  s.turn = c.turn;
  s.episode = episode;
  s.call = index;
  s.ids = c.prompt_ids;
  s.ids.insert(s.ids.end(), c.response_ids.begin(), c.response_ids.end());
  s.loss_mask.assign(c.prompt_ids.size(), 0);
  s.loss_mask.insert(s.loss_mask.end(), c.loss_mask.begin(), c.loss_mask.end());
  for (size_t j = 0; j < c.response_ids.size(); ++j)
    if (c.loss_mask[j]) s.rollout_logprobs.push_back(c.logprobs[j]);
  return s;
}

}  // namespace

SampleBatch training_samples(std::span<const agents::Episode> episodes, const SampleConfig& config) {
  SampleBatch out;
  // Every policy turn's reward, trainable or not: returns and the selection agent's R need them all.
  struct Turn {
    int turn;
    size_t call;
    double reward;
    const agents::TurnInputs* inputs;
  };
  std::map<std::tuple<size_t, int, int>, std::vector<Turn>> rollouts;  // (episode, scheme, sample)
  for (size_t e = 0; e < episodes.size(); ++e) {
    const auto& calls = episodes[e].calls;
    for (size_t i = 0; i < calls.size(); ++i) {
      if (calls[i].role != Role::policy) continue;
      const auto* inputs = std::get_if<agents::TurnInputs>(&calls[i].reward_inputs);
      if (!inputs)
        throw std::invalid_argument(where(episodes[e], i) + ": a policy call without its turn's reward inputs");
      rollouts[{e, calls[i].scheme, calls[i].sample}].push_back(
          {calls[i].turn, i, turn_reward(*inputs, config.reward), inputs});
    }
  }

  // Policy samples, then their advantages over the whole batch.
  // Untrainable turns still belong to their group's baseline: they are what the policy did.
  std::vector<PolicySample> scored;
  std::vector<std::optional<TrainingSample>> policy;
  std::map<std::pair<size_t, int>, std::vector<double>>
      best_by_scheme;  // (episode, scheme) -> each rollout's best reward
  for (auto& [key, turns] : rollouts) {
    const auto& [e, scheme, sample] = key;
    std::sort(turns.begin(), turns.end(), [](const Turn& a, const Turn& b) { return a.turn < b.turn; });
    std::vector<double> rewards;
    for (const auto& t : turns) rewards.push_back(t.reward);
    const auto returns = discounted_returns(rewards, config.advantage.gamma);
    best_by_scheme[{e, scheme}].push_back(*std::max_element(rewards.begin(), rewards.end()));
    for (size_t k = 0; k < turns.size(); ++k) {
      const auto& call = episodes[e].calls[turns[k].call];
      scored.push_back({episodes[e].task, turns[k].turn, returns[k]});
      if (!call.trainable) {
        ++out.untrainable;
        policy.emplace_back();
        continue;
      }
      TrainingSample s = sequence_of(episodes[e], e, turns[k].call);
      s.reward = turns[k].reward;
      s.correct = turns[k].inputs->correct();
      s.coverage = turns[k].inputs->coverage;
      policy.push_back(std::move(s));
    }
  }
  const auto policy_advantage = policy_advantages(scored, config.advantage);
  for (size_t i = 0; i < policy.size(); ++i) {
    if (!policy[i]) continue;
    policy[i]->advantage = policy_advantage[i];
    out.samples.push_back(std::move(*policy[i]));
  }

  // Selection and summary calls: R, then leave-one-out within the task.
  std::vector<TrainingSample> agents_samples[2];
  std::vector<GroupedReward> agents_rewards[2];
  for (size_t e = 0; e < episodes.size(); ++e) {
    const auto& calls = episodes[e].calls;
    for (size_t i = 0; i < calls.size(); ++i) {
      const auto& c = calls[i];
      if (c.role == Role::verify) ++out.verify_calls;
      const bool selection = c.role == Role::selection && config.train_selection;
      const bool summary = c.role == Role::summary && config.train_summary;
      if (!selection && !summary) continue;
      if (!c.trainable) {
        ++out.untrainable;
        continue;
      }
      double r = 0;
      if (selection) {
        const auto it = best_by_scheme.find({e, c.scheme});
        if (it != best_by_scheme.end()) {
          for (const double b : it->second) r += b;
          r /= static_cast<double>(it->second.size());
        }
      } else if (const auto* summary_inputs = std::get_if<agents::SummaryInputs>(&c.reward_inputs)) {
        for (const auto& a : summary_inputs->admitted) r = std::max(r, a.speedup);
      }
      TrainingSample s = sequence_of(episodes[e], e, i);
      s.reward = r;
      agents_rewards[summary].push_back({s.task, r});
      agents_samples[summary].push_back(std::move(s));
    }
  }
  const double scales[2] = {config.advantage.selection_scale, config.advantage.summary_scale};
  for (int k = 0; k < 2; ++k) {
    const auto advantages = leave_one_out_advantages(agents_rewards[k], scales[k]);
    for (size_t i = 0; i < agents_samples[k].size(); ++i) {
      agents_samples[k][i].advantage = advantages[i];
      out.samples.push_back(std::move(agents_samples[k][i]));
    }
  }
  return out;
}

}  // namespace vinci::rl
