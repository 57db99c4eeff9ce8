#include "agents/optimize_report.h"

#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/feedback.h"
#include "core/files.h"

namespace vinci::agents {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::vector<std::string> names_of(const std::vector<skills::Skill>& skills) {
  std::vector<std::string> out;
  for (const auto& s : skills) out.push_back(s.name);
  return out;
}

json attempt_json(const char* role, const Rollout& r, const PolicyTurn& t) {
  return {{"role", role},
          {"label", r.label},
          {"scheme", r.scheme},
          {"sample", r.sample},
          {"turn", t.turn},
          {"skills", names_of(r.skills)},
          {"strategy", t.strategy},
          {"file", t.file.empty() ? json(nullptr) : json(t.file.filename().string())},
          {"parse_failure", t.parse_failure},
          {"outcome", t.result ? outcome_line(*t.result) : "no usable answer (" + t.parse_failure + ")"},
          {"speedup", t.speedup()},
          {"result", t.result ? eval::to_json(*t.result) : json(nullptr)}};
}

// Each attempt once: beam children carry copies of their parents' turns.
std::vector<std::pair<const Rollout*, const PolicyTurn*>> unique_attempts(const OptimizeOutcome& o) {
  std::vector<std::pair<const Rollout*, const PolicyTurn*>> out;
  std::set<std::string> seen;
  for (const auto& r : o.rollouts)
    for (const auto& t : r.turns) {
      const std::string key = t.file.empty() ? fmt::format("{}/{}", r.label, t.turn) : t.file.string();
      if (seen.insert(key).second) out.emplace_back(&r, &t);
    }
  return out;
}

struct SchemeRow {
  int attempts = 0, correct = 0;
  double best = 0;
};

std::map<int, SchemeRow> per_scheme(const OptimizeOutcome& o) {
  std::map<int, SchemeRow> rows;
  for (const auto& [r, t] : unique_attempts(o)) {
    SchemeRow& row = rows[r->scheme];
    ++row.attempts;
    if (t->result && t->result->correct()) ++row.correct;
    row.best = std::max(row.best, t->speedup());
  }
  return rows;
}

std::string scheme_skills(const OptimizeOutcome& o, int index) {
  for (const auto& s : o.schemes)
    if (s.index == index) return s.null_scheme ? "(none: null scheme)" : fmt::format("{}", fmt::join(s.skills, ", "));
  return "?";
}

}  // namespace

std::string summary_table(const OptimizeOutcome& o) {
  std::string out = fmt::format("{:<7} {:<48} {:>8} {:>8} {:>9}\n", "scheme", "skills", "attempts", "correct", "best");
  for (const auto& [index, row] : per_scheme(o))
    out += fmt::format("{:<7} {:<48} {:>8} {:>8} {:>8.2f}x\n", index, scheme_skills(o, index).substr(0, 48),
                       row.attempts, row.correct, row.best);
  if (const PolicyTurn* b = o.best_turn())
    out += fmt::format("best: {} ({})\n", b->file.filename().string(), outcome_line(*b->result));
  else
    out += "best: no correct kernel\n";
  int proposed = 0, refused = 0, admitted = 0;
  for (const auto& s : o.summaries)
    for (const auto& p : s.proposals) {
      ++proposed;
      if (!p.refused.empty()) ++refused;
    }
  std::vector<std::string> admitted_names;
  for (const auto& v : o.verifications)
    if (v.admitted) {
      ++admitted;
      admitted_names.push_back(v.skill.name);
    }
  out += fmt::format("skills: {} summaries, {} proposed, {} refused, {} verified, {} admitted{}\n", o.summaries.size(),
                     proposed, refused, o.verifications.size(), admitted,
                     admitted_names.empty() ? "" : fmt::format(" ({})", fmt::join(admitted_names, ", ")));
  return out;
}

void write_optimize_outputs(const fs::path& out_dir, const PolicyTask& task, const OptimizeOutcome& o) {
  fs::create_directories(out_dir);
  std::string attempts;
  for (const auto& [r, t] : unique_attempts(o)) attempts += attempt_json("policy", *r, *t).dump() + "\n";
  for (const auto& v : o.verifications)
    for (const auto& r : v.repeats)
      for (const auto& t : r.turns) attempts += attempt_json("verify", r, t).dump() + "\n";
  core::write_file_atomic(out_dir / "attempts.jsonl", attempts);
  core::write_file_atomic(out_dir / "episodes.jsonl", to_json(o.episode).dump() + "\n");

  std::string admitted;
  for (const auto& v : o.verifications) {
    if (!v.admitted) continue;
    skills::Skill s = v.skill;
    s.status = skills::Status::admitted;
    s.verifications = {v.record};
    admitted += skills::to_json(s).dump() + "\n";
  }
  core::write_file_atomic(out_dir / "skills_admitted.jsonl", admitted);

  const fs::path best = out_dir / "best_kernel.py";
  if (const PolicyTurn* b = o.best_turn())
    core::write_file_atomic(best, b->code);
  else
    fs::remove(best);

  std::string md = fmt::format("# vinci optimize: {}\n\n", task.task.id);
  md += fmt::format("Model `{}`, strategy {}, {} schemes.\n\n```\n{}```\n\n", o.episode.model, o.episode.meta.strategy,
                    o.schemes.size(), summary_table(o));
  md += "## Attempts\n\n| attempt | skills | strategy | outcome |\n|---|---|---|---|\n";
  for (const auto& [r, t] : unique_attempts(o)) {
    const std::string file =
        t->file.empty() ? fmt::format("{}_t{} (no file)", r->label, t->turn) : t->file.filename().string();
    md += fmt::format("| {} | {} | {} | {} |\n", file, fmt::join(names_of(r->skills), ", "), t->strategy,
                      t->result ? outcome_line(*t->result) : "no usable answer (" + t->parse_failure + ")");
  }
  md += "\n## Skills proposed\n\n";
  for (const auto& s : o.summaries)
    for (const auto& p : s.proposals) {
      std::string fate = p.refused.empty() ? "verified" : "refused: " + p.refused;
      for (const auto& v : o.verifications)
        if (v.skill.name == p.skill.name && p.refused.empty())
          fate = (v.admitted ? "admitted: " : "not admitted: ") + v.why;
      md += fmt::format("- `{}` (from {}): {}\n", p.skill.name, s.rollout->label, fate);
    }
  core::write_file_atomic(out_dir / "report.md", md);
}

}  // namespace vinci::agents
