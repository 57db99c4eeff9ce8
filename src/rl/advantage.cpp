#include "rl/advantage.h"

#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace vinci::rl {

std::vector<double> discounted_returns(std::span<const double> rewards, double gamma) {
  std::vector<double> out(rewards.size());
  double next = 0;
  for (size_t i = rewards.size(); i-- > 0;) out[i] = next = rewards[i] + gamma * next;
  return out;
}

namespace {

// Indices of the items of each group, in first-seen order of the groups.
template <typename Key>
std::vector<std::vector<size_t>> groups_of(const std::vector<Key>& keys) {
  std::map<Key, size_t> index;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto [it, fresh] = index.try_emplace(keys[i], groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

// values[i] - mean of the group's other values, for each member; 0 for a group of one.
void leave_one_out(std::span<const double> values, const std::vector<size_t>& group, std::vector<double>& out) {
  if (group.size() < 2) {
    for (size_t i : group) out[i] = 0;
    return;
  }
  double sum = 0;
  for (size_t i : group) sum += values[i];
  const double others = static_cast<double>(group.size() - 1);
  for (size_t i : group) out[i] = values[i] - (sum - values[i]) / others;
}

void group_normalize(std::span<const double> values, const std::vector<size_t>& group, const AdvantageConfig& c,
                     std::vector<double>& out) {
  const double n = static_cast<double>(group.size());
  double mean = 0;
  for (size_t i : group) mean += values[i];
  mean /= n;
  double ss = 0;
  for (size_t i : group) ss += (values[i] - mean) * (values[i] - mean);
  const double divisor = c.std_bessel ? n - 1 : n;
  const double std = divisor > 0 ? std::sqrt(ss / divisor) : 0.0;
  for (size_t i : group) out[i] = (values[i] - mean) / (std + c.eps);
}

}  // namespace

std::vector<double> policy_advantages(std::span<const PolicySample> samples, const AdvantageConfig& c) {
  if (c.eps < 0) throw std::invalid_argument(fmt::format("advantage eps must be >= 0, got {}", c.eps));
  std::vector<std::pair<std::string, int>> keys;
  std::vector<double> returns;
  for (const auto& s : samples) {
    keys.emplace_back(s.task, c.policy_group == GroupKey::task_turn ? s.turn : 0);
    returns.push_back(s.ret);
  }
  std::vector<double> out(samples.size(), 0.0);
  for (const auto& group : groups_of(keys)) {
    if (c.policy_estimator == Estimator::loo)
      leave_one_out(returns, group, out);
    else
      group_normalize(returns, group, c, out);
  }
  if (c.normalize_by_task_mean_abs) {
    std::vector<std::string> tasks;
    for (const auto& s : samples) tasks.push_back(s.task);
    for (const auto& group : groups_of(tasks)) {
      double mean_abs = 0;
      for (size_t i : group) mean_abs += std::abs(out[i]);
      mean_abs /= static_cast<double>(group.size());
      for (size_t i : group) out[i] /= mean_abs + c.eps;
    }
  }
  return out;
}

std::vector<double> leave_one_out_advantages(std::span<const GroupedReward> items, double scale) {
  std::vector<std::string> tasks;
  std::vector<double> rewards;
  for (const auto& item : items) {
    tasks.push_back(item.task);
    rewards.push_back(item.reward);
  }
  std::vector<double> out(items.size(), 0.0);
  for (const auto& group : groups_of(tasks)) leave_one_out(rewards, group, out);
  for (double& a : out) a *= scale;
  return out;
}

}  // namespace vinci::rl
