#include "train/coevolution_config.h"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "core/files.h"

namespace vinci::train {

namespace {

using Setter = std::function<void(const toml::node&)>;

struct BadValue : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Setter real(double& dst) {
  return [&dst](const toml::node& n) {
    const auto v = n.value<double>();
    if (!v) throw BadValue("a number");
    dst = *v;
  };
}

template <typename Int>
Setter integer(Int& dst, int64_t min) {
  return [&dst, min](const toml::node& n) {
    const auto v = n.is_integer() ? n.value<int64_t>() : std::nullopt;
    if (!v || *v < min) throw BadValue(fmt::format("an integer >= {}", min));
    dst = static_cast<Int>(*v);
  };
}

Setter boolean(bool& dst) {
  return [&dst](const toml::node& n) {
    const auto v = n.value<bool>();
    if (!v) throw BadValue("true or false");
    dst = *v;
  };
}

Setter choice(const std::vector<std::string>& allowed, std::function<void(const std::string&)> apply) {
  return [allowed, apply](const toml::node& n) {
    const auto v = n.value<std::string>();
    if (!v || std::find(allowed.begin(), allowed.end(), *v) == allowed.end())
      throw BadValue(fmt::format("one of \"{}\"", fmt::join(allowed, "\", \"")));
    apply(*v);
  };
}

Setter optional_real(std::optional<double>& dst) {
  return [&dst](const toml::node& n) {
    const auto v = n.value<double>();
    if (!v) throw BadValue("a number");
    dst = *v;
  };
}

// Only the scheme is checked here: the queue's client parses the rest when it connects, and says
// what is wrong with it.
Setter redis_url(std::string& dst) {
  return [&dst](const toml::node& n) {
    const auto v = n.value<std::string>();
    if (!v || (v->rfind("redis://", 0) != 0 && v->rfind("rediss://", 0) != 0))
      throw BadValue("a redis://[user:password@]HOST:PORT[/DB] URL");
    dst = *v;
  };
}

}  // namespace

CoevolutionFile parse_coevolution_config(std::string_view text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(
        fmt::format("{}:{}:{}: {}", source, e.source().begin.line, e.source().begin.column, e.description()));
  }
  CoevolutionFile f;
  auto& c = f.run;
  auto& a = c.agents;
  f.training.mode = llm::Training::Mode::lora;
  std::map<std::string, std::map<std::string, Setter>> schema = {
      {"run",
       {{"steps", integer(c.steps, 1)},
        {"tasks_per_step", integer(c.tasks_per_step, 1)},
        {"parallel_tasks", integer(c.parallel_tasks, 1)},
        {"seed", integer(c.seed, 0)},
        {"checkpoint_every", integer(c.checkpoint_every, 0)},
        {"peak_tflops", real(c.peak_tflops)},
        {"distributed_timeout_s", integer(c.distributed_timeout_s, 1)}}},
      {"agents",
       {{"schemes", integer(a.selection.schemes, 0)},
        {"samples", integer(a.samples, 1)},
        {"turns", integer(a.policy.turns, 1)},
        {"top_n", integer(a.selection.top_n, 1)},
        {"temperature",
         [&a](const toml::node& n) {
           double t = 0;
           real(t)(n);
           if (t < 0) throw BadValue("a number >= 0");
           a.selection.sampling.temperature = a.policy.sampling.temperature = a.summary.sampling.temperature = t;
         }},
        {"max_new_tokens",
         [&a](const toml::node& n) {
           int tokens = 0;
           integer(tokens, 1)(n);
           a.policy.sampling.max_new_tokens = a.verify.max_new_tokens = tokens;
         }},
        {"selection_max_new_tokens", integer(a.selection.sampling.max_new_tokens, 1)},
        {"summary_max_new_tokens", integer(a.summary.sampling.max_new_tokens, 1)},
        {"summary_min_ratio", real(a.summary.min_ratio)},
        {"summary_min_speedup", real(a.summary.min_speedup)},
        {"verify_repeats", integer(a.verify.repeats, 1)},
        {"verify_min_speedup", real(a.verify.min_speedup)},
        {"verify_min_ratio", real(a.verify.min_ratio)}}},
      {"reward",
       {{"kind", choice({"davinci", "kevin", "tiered"},
                        [&c](const std::string& s) { c.samples.reward.kind = rl::reward_kind_from_string(s); })},
        {"speedup_cap", real(c.samples.reward.speedup_cap)},
        {"correct_weight", real(c.samples.reward.correct_weight)},
        {"speedup_weight", real(c.samples.reward.speedup_weight)},
        {"coverage_weight", real(c.samples.reward.coverage_weight)},
        {"kevin_correct_weight", real(c.samples.reward.kevin_correct_weight)},
        {"tier_margin", real(c.samples.reward.tier_margin)},
        {"compile_error_penalty", optional_real(c.samples.reward.compile_error_penalty)},
        {"rejected_penalty", optional_real(c.samples.reward.rejected_penalty)}}},
      {"advantage",
       {{"gamma", real(c.samples.advantage.gamma)},
        {"estimator", choice({"loo", "grpo"},
                             [&c](const std::string& s) {
                               c.samples.advantage.policy_estimator =
                                   s == "grpo" ? rl::Estimator::grpo : rl::Estimator::loo;
                             })},
        {"group", choice({"task_turn", "task"},
                         [&c](const std::string& s) {
                           c.samples.advantage.policy_group =
                               s == "task" ? rl::GroupKey::task : rl::GroupKey::task_turn;
                         })},
        {"normalize_by_task_mean_abs", boolean(c.samples.advantage.normalize_by_task_mean_abs)},
        {"eps", real(c.samples.advantage.eps)},
        {"std_bessel", boolean(c.samples.advantage.std_bessel)},
        {"selection_scale", real(c.samples.advantage.selection_scale)},
        {"summary_scale", real(c.samples.advantage.summary_scale)},
        {"train_selection", boolean(c.samples.train_selection)},
        {"train_summary", boolean(c.samples.train_summary)}}},
      {"loss",
       {{"clip_low", real(c.update.loss.clip_low)},
        {"clip_high", real(c.update.loss.clip_high)},
        {"aggregation",
         choice({"token_mean", "seq_mean_token_mean", "constant_normalized"},
                [&c](const std::string& s) { c.update.loss.aggregation = loss_aggregation_from_string(s); })},
        {"constant", real(c.update.loss.constant)},
        {"kl_coef", real(c.update.loss.kl_coef)},
        {"micro_batch_tokens", integer(c.update.micro_batch_tokens, 0)}}},
      {"rejection",
       {{"old_logprobs", choice({"trainer", "sampler"},
                                [&c](const std::string& s) { c.update.old_logprobs = old_logprobs_from_string(s); })},
        {"mrs", boolean(c.update.mrs)},
        {"mrs_delta", real(c.update.mrs_config.delta)},
        {"mrs_token_floor", real(c.update.mrs_config.token_floor)},
        {"prs", boolean(c.prs)},
        {"prs_tau", real(c.prs_config.tau)},
        {"prs_scale", real(c.prs_config.scale)}}},
      {"optimizer",
       {{"lr", real(c.optimizer.lr.peak)},
        {"warmup_steps", integer(c.optimizer.lr.warmup_steps, 0)},
        {"schedule", choice({"constant", "cosine"},
                            [&c](const std::string& s) { c.optimizer.lr.shape = rl::lr_shape_from_string(s); })},
        {"total_steps", integer(c.optimizer.lr.total_steps, 0)},
        {"min_lr_ratio", real(c.optimizer.lr.min_ratio)},
        {"beta1", real(c.optimizer.beta1)},
        {"beta2", real(c.optimizer.beta2)},
        {"eps", real(c.optimizer.eps)},
        {"weight_decay", real(c.optimizer.weight_decay)},
        {"max_grad_norm", real(c.optimizer.max_grad_norm)}}},
      {"eval", {{"queue", redis_url(f.eval_queue)}}},
      {"heldout",
       {{"tasks",
         [&f](const toml::node& n) {
           const auto v = n.value<std::string>();
           if (!v || v->empty()) throw BadValue("a folder of tasks");
           f.heldout.tasks = *v;
         }},
        {"every", integer(f.heldout.every, 0)},
        {"count", integer(f.heldout.count, 1)}}},
      {"model",
       {{"training", choice({"lora", "full"},
                            [&f](const std::string& s) {
                              f.training.mode = s == "full" ? llm::Training::Mode::full : llm::Training::Mode::lora;
                            })},
        {"lora_rank", integer(f.training.lora.rank, 1)},
        {"lora_alpha", real(f.training.lora.alpha)}}},
  };
  std::vector<std::string> sections;
  for (const auto& [name, _] : schema) sections.push_back(name);
  for (auto&& [section_key, section_node] : root) {
    const std::string section(section_key.str());
    const auto line = section_node.source().begin.line;
    const auto it = schema.find(section);
    if (it == schema.end())
      throw std::runtime_error(fmt::format("{}:{}: [{}] is not a section (expected one of {})", source, line, section,
                                           fmt::join(sections, ", ")));
    const auto* table = section_node.as_table();
    if (!table) throw std::runtime_error(fmt::format("{}:{}: {} must be a [table]", source, line, section));
    for (auto&& [key_node, value] : *table) {
      const std::string key(key_node.str());
      const auto setter = it->second.find(key);
      if (setter == it->second.end())
        throw std::runtime_error(fmt::format("{}:{}: {}.{} is not a setting (configs/coevolution.toml lists them all)",
                                             source, value.source().begin.line, section, key));
      try {
        setter->second(value);
      } catch (const BadValue& e) {
        throw std::runtime_error(
            fmt::format("{}:{}: {}.{}: expected {}", source, value.source().begin.line, section, key, e.what()));
      }
    }
  }
  if (f.heldout.every > 0 && f.heldout.tasks.empty())
    throw std::runtime_error(
        fmt::format("{}: heldout.every needs heldout.tasks, the folder of held-out tasks", source));
  return f;
}

CoevolutionFile load_coevolution_config(const std::filesystem::path& path) {
  CoevolutionFile f = parse_coevolution_config(core::read_file(path), path.string());
  // A run's state moves between machines with its config beside it (benchmarks/learning_run.py).
  if (!f.heldout.tasks.empty() && f.heldout.tasks.is_relative()) f.heldout.tasks = path.parent_path() / f.heldout.tasks;
  return f;
}

}  // namespace vinci::train
