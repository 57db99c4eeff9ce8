#include "agents/optimizer.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/feedback.h"
#include "core/enum_names.h"
#include "core/hash.h"

namespace vinci::agents {

namespace {
constexpr std::array<core::EnumName<Strategy>, 3> kStrategies{
    {{Strategy::serial, "serial"}, {Strategy::parallel, "parallel"}, {Strategy::beam, "beam"}}};
}  // namespace

std::string_view to_string(Strategy s) { return core::enum_to_string(kStrategies, s); }

Strategy strategy_from_string(std::string_view s) { return core::enum_from_string(kStrategies, s, "strategy"); }

const PolicyTurn* OptimizeOutcome::best_turn() const {
  return best ? &rollouts[best->first].turns[best->second] : nullptr;
}

namespace {

Rollout new_rollout(const SkillScheme& scheme, int sample, std::vector<skills::Skill> skills) {
  Rollout r;
  r.scheme = scheme.index;
  r.sample = sample;
  r.label = fmt::format("s{}_r{}", scheme.index, sample);
  r.skills = std::move(skills);
  return r;
}

std::string turn_summary(const std::vector<Rollout*>& rollouts) {
  int correct = 0;
  double best = 0;
  for (const Rollout* r : rollouts) {
    const PolicyTurn& t = r->turns.back();
    if (t.result && t.result->correct()) ++correct;
    best = std::max(best, t.speedup());
  }
  return fmt::format("{} attempts, {} correct, best {:.2f}x", rollouts.size(), correct, best);
}

// Beam: the next turn's rollouts, forked from the best latest kernels.
std::vector<Rollout> beam_children(std::vector<Rollout>& rollouts, const std::vector<size_t>& frontier, int width,
                                   size_t budget, std::map<int, int>& next_sample) {
  std::vector<size_t> ranked = frontier;
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    return rollouts[a].turns.back().speedup() > rollouts[b].turns.back().speedup();
  });
  ranked.resize(std::min(ranked.size(), static_cast<size_t>(width)));
  std::vector<Rollout> children;
  const size_t per_parent = (budget + ranked.size() - 1) / ranked.size();
  for (size_t p : ranked) {
    for (size_t c = 0; c < per_parent && children.size() < budget; ++c) {
      Rollout child = rollouts[p];
      child.calls.clear();  // the parent's calls are recorded once, in the parent
      child.sample = next_sample[child.scheme]++;
      child.label = fmt::format("s{}_r{}", child.scheme, child.sample);
      children.push_back(std::move(child));
    }
  }
  return children;
}

}  // namespace

OptimizeOutcome optimize(llm::Backbone& backbone, KernelEvaluator& evaluator, const Prompts& prompts,
                         const skills::Library& library, const PolicyTask& task, const OptimizeSettings& settings,
                         const ProgressFn& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  OptimizeOutcome out;
  SelectionSettings selection = settings.selection;
  selection.seed = settings.seed;
  SelectionOutcome selected = select_skills(backbone, prompts, library, task.task, selection, settings.filter);
  for (auto& c : selected.calls) out.episode.calls.push_back(c);
  out.schemes = selected.schemes;
  out.shown = selected.shown;
  for (size_t i = 0; i < out.schemes.size(); ++i) {
    const SkillScheme& s = out.schemes[i];
    std::string what = s.null_scheme ? "no skills (the null scheme)" : fmt::format("{}", fmt::join(s.skills, ", "));
    if (!s.null_scheme && s.skills.empty())
      what = selected.calls[i].parse_failure.empty() ? "no skills chosen"
                                                     : "no usable answer (" + selected.calls[i].parse_failure + ")";
    if (!s.dropped.empty()) what += fmt::format("; dropped {}", fmt::join(s.dropped, ", "));
    say(fmt::format("scheme {}: {}", s.index, what));
  }

  PolicySettings policy = settings.policy;
  policy.seed = settings.seed;
  StrategyMemory memory;
  const int turns = std::max(1, policy.turns);
  std::map<int, int> next_sample;
  auto& rollouts = out.rollouts;
  const int per_scheme = settings.strategy == Strategy::parallel ? settings.samples * turns : settings.samples;
  rollouts.reserve(out.schemes.size() * per_scheme * (settings.strategy == Strategy::beam ? turns : 1));
  for (const auto& scheme : out.schemes) {
    for (int k = 0; k < per_scheme; ++k)
      rollouts.push_back(new_rollout(scheme, next_sample[scheme.index]++, skills_of(library, scheme)));
  }

  if (settings.strategy == Strategy::parallel) {
    std::vector<Rollout*> all;
    for (auto& r : rollouts) all.push_back(&r);
    say(fmt::format("turn 1/1: {} independent attempts", all.size()));
    policy_turn(backbone, evaluator, prompts, task, all, memory, policy);
    say("turn 1/1: " + turn_summary(all));
  } else {
    std::vector<size_t> frontier(rollouts.size());
    std::iota(frontier.begin(), frontier.end(), 0);
    const size_t budget = frontier.size();
    for (int t = 0; t < turns; ++t) {
      if (settings.strategy == Strategy::beam && t > 0) {
        auto children = beam_children(rollouts, frontier, settings.beam_width, budget, next_sample);
        frontier.clear();
        for (auto& c : children) {
          frontier.push_back(rollouts.size());
          rollouts.push_back(std::move(c));
        }
      }
      std::vector<Rollout*> active;
      for (size_t i : frontier) active.push_back(&rollouts[i]);
      say(fmt::format("turn {}/{}: {} attempts", t + 1, turns, active.size()));
      policy_turn(backbone, evaluator, prompts, task, active, memory, policy);
      say(fmt::format("turn {}/{}: {}", t + 1, turns, turn_summary(active)));
    }
  }
  for (size_t i = 0; i < rollouts.size(); ++i) {
    for (auto& c : rollouts[i].calls) out.episode.calls.push_back(c);
    for (size_t t = 0; t < rollouts[i].turns.size(); ++t) {
      const PolicyTurn& turn = rollouts[i].turns[t];
      if (turn.result && turn.result->correct() && (!out.best || turn.speedup() > out.best_turn()->speedup()))
        out.best = std::make_pair(i, t);
    }
  }

  if (settings.summarize) {
    std::vector<const Rollout*> triggered;
    for (const auto& r : rollouts)
      if (summary_triggered(r, settings.summary)) triggered.push_back(&r);
    SummarySettings summary = settings.summary;
    summary.seed = settings.seed;
    if (!triggered.empty()) say(fmt::format("summary: {} rollouts improved enough to distill", triggered.size()));
    out.summaries = summarize(backbone, prompts, task, triggered, summary);
    std::set<std::string> verifying;  // rollouts of one run often distill the same skill: verify it once
    for (auto& s : out.summaries) {
      // The summary agent's reward is known only after verification (design.md §6: the best
      // verified speedup among the skills it got admitted), so its call joins the episode after.
      auto& inputs = std::get<SummaryInputs>(s.call.reward_inputs);
      std::vector<skills::Skill> to_verify;
      for (auto& p : s.proposals) {
        if (p.refused.empty() && library.find(p.skill.name))
          p.refused = "a skill of that name is already in the library";
        if (p.refused.empty() && !verifying.insert(p.skill.name).second)
          p.refused = "proposed already by an earlier rollout of this run";
        if (p.refused.empty()) {
          to_verify.push_back(p.skill);
        } else {
          say(fmt::format("summary: refused '{}': {}", p.skill.name, p.refused));
        }
      }
      if (to_verify.empty()) {
        out.episode.calls.push_back(s.call);
        continue;
      }
      say(fmt::format("verify: {} skill(s) from {}", to_verify.size(), s.rollout->label));
      auto verified =
          verify_skills(backbone, evaluator, prompts, task, *s.rollout, to_verify, settings.verify, settings.seed);
      for (auto& v : verified) {
        say(fmt::format("verify: '{}' {}: {}", v.skill.name, v.admitted ? "admitted" : "not admitted", v.why));
        if (v.admitted) inputs.admitted.push_back({v.skill.name, v.record.skill_speedup});
        for (const auto& r : v.repeats)
          for (const auto& c : r.calls) out.episode.calls.push_back(c);
        out.verifications.push_back(std::move(v));
      }
      out.episode.calls.push_back(s.call);
    }
  }

  out.episode.task = task.task.id;
  out.episode.model = backbone.model_name();
  out.episode.id = core::content_hash({task.task.id, backbone.model_name(), std::to_string(settings.seed),
                                       to_string(settings.strategy)})
                       .substr(0, 16);
  EpisodeMeta& meta = out.episode.meta;
  meta.protocol = "optimize";
  meta.strategy = to_string(settings.strategy);
  meta.turns = turns;
  meta.samples = settings.samples;
  meta.schemes = static_cast<int>(out.schemes.size());
  meta.seed = settings.seed;
  meta.skills_shown = out.shown;
  meta.library_size = library.size();
  return out;
}

std::vector<skills::Skill> admitted_skills(const OptimizeOutcome& outcome) {
  std::vector<skills::Skill> out;
  for (const auto& v : outcome.verifications) {
    if (!v.admitted) continue;
    skills::Skill s = v.skill;
    s.status = skills::Status::admitted;
    s.provenance.episode_ids = {outcome.episode.id};
    s.verifications = {v.record};
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<skills::Admission> record_in_library(skills::SkillStore& store, const OptimizeOutcome& outcome) {
  std::vector<skills::Admission> admissions;
  for (auto& s : admitted_skills(outcome)) admissions.push_back(store.admit(std::move(s)));
  // Usage: every rollout's best-turn speedup, credited to the skills it carried and, for the
  // library's other selected skills, to their "not injected" side.
  std::map<std::string, skills::Usage> usage;
  for (const auto& scheme : outcome.schemes)
    for (const auto& name : scheme.skills) ++usage[name].selected;
  for (const auto& r : outcome.rollouts) {
    for (auto& [name, u] : usage) {
      const bool carried = std::any_of(r.skills.begin(), r.skills.end(), [&](const auto& s) { return s.name == name; });
      if (carried) {
        ++u.injected;
        u.reward_injected_sum += r.best_speedup();
        ++u.reward_injected_count;
      } else {
        u.reward_not_injected_sum += r.best_speedup();
        ++u.reward_not_injected_count;
      }
    }
  }
  for (const auto& [name, u] : usage)
    if (store.find(name)) store.add_usage(name, u);
  return admissions;
}

}  // namespace vinci::agents
