#include "rl/diversity_filter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "skills/dedup.h"

namespace vinci::rl {

std::string normalized_code(const std::string& code) {
  // A candidate file is Python whose triple-quoted strings hold C++/CUDA: '#' starts a comment in
  // the Python (inside the strings it is a preprocessor line), '//' and '/* */' inside the strings
  // ('//' in the Python is floor division).
  enum class State { python, quoted, triple } state = State::python;
  char quote = 0;
  std::string out;
  const size_t n = code.size();
  const auto at = [&](size_t i, std::string_view s) { return code.compare(i, s.size(), s) == 0; };
  const auto skip_line = [&](size_t i) {
    const size_t eol = code.find('\n', i);
    return eol == std::string::npos ? n : eol;
  };
  for (size_t i = 0; i < n;) {
    const char c = code[i];
    switch (state) {
      case State::python:
        if (at(i, "'''") || at(i, "\"\"\"")) {
          state = State::triple;
          quote = c;
          out.append(3, c);
          i += 3;
        } else if (c == '\'' || c == '"') {
          state = State::quoted;
          quote = c;
          out += code[i++];
        } else if (c == '#') {
          i = skip_line(i);
        } else {
          out += code[i++];
        }
        break;
      case State::quoted:
        out += code[i++];
        if (c == '\\' && i < n)
          out += code[i++];
        else if (c == quote || c == '\n')
          state = State::python;
        break;
      case State::triple:
        if (at(i, std::string(3, quote))) {
          out.append(3, quote);
          i += 3;
          state = State::python;
        } else if (at(i, "//")) {
          i = skip_line(i);
        } else if (at(i, "/*")) {
          const size_t end = code.find("*/", i + 2);
          i = end == std::string::npos ? n : end + 2;
        } else {
          out += code[i++];
        }
        break;
    }
  }
  std::string collapsed;
  for (const char c : out) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!collapsed.empty() && collapsed.back() != ' ') collapsed += ' ';
    } else {
      collapsed += c;
    }
  }
  while (!collapsed.empty() && collapsed.back() == ' ') collapsed.pop_back();
  return collapsed;
}

namespace {

void remove(DiversityReport& report, std::vector<bool>& alive, size_t index, std::string rule, std::string detail) {
  alive[index] = false;
  ++report.removed_by_rule[rule];
  report.removed.push_back({index, std::move(rule), std::move(detail)});
}

// Keeps at most ratio x the smallest non-empty group of each key; the last members of a larger
// group go first.
void balance(std::span<const SftConversation> items, std::vector<bool>& alive, double ratio, const char* rule,
             const std::function<std::string(const SftConversation&)>& key, DiversityReport& report) {
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < items.size(); ++i)
    if (alive[i]) groups[key(items[i])].push_back(i);
  if (groups.size() < 2) return;
  size_t smallest = SIZE_MAX;
  for (const auto& [_, members] : groups) smallest = std::min(smallest, members.size());
  const auto cap = static_cast<size_t>(std::floor(ratio * static_cast<double>(smallest)));
  for (const auto& [name, members] : groups)
    for (size_t k = cap; k < members.size(); ++k)
      remove(report, alive, members[k], rule,
             fmt::format("{} holds {} conversations, more than {} x the smallest group's {}", name, members.size(),
                         ratio, smallest));
}

}  // namespace

DiversityReport diversity_filter(std::span<const SftConversation> items, const DiversityConfig& c) {
  DiversityReport report;
  std::vector<bool> alive(items.size(), true);

  // 1. near duplicates within (task, role), against the conversations kept so far
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<size_t, skills::MinHash>>> kept_by_group;
  for (size_t i = 0; i < items.size(); ++i) {
    auto& kept = kept_by_group[{items[i].task, items[i].role}];
    const skills::MinHash sig = skills::minhash_of(normalized_code(items[i].solution), c.shingle_words);
    bool duplicate = false;
    for (const auto& [j, other] : kept) {
      const double similarity = skills::estimated_jaccard(sig, other);
      if (similarity >= c.near_duplicate) {
        remove(report, alive, i, "near_duplicate",
               fmt::format("repeats line {} (estimated similarity {:.2f})", items[j].line, similarity));
        duplicate = true;
        break;
      }
    }
    if (!duplicate) kept.emplace_back(i, sig);
  }

  // 2. per (task, role) and 3. per skill, in order
  std::map<std::pair<std::string, std::string>, size_t> per_task;
  std::map<std::string, size_t> per_skill;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!alive[i]) continue;
    const auto& item = items[i];
    size_t& count = per_task[{item.task, item.role}];
    if (c.max_per_task > 0 && count >= c.max_per_task) {
      remove(report, alive, i, "task_cap", fmt::format("{} {} conversations kept already", c.max_per_task, item.task));
      continue;
    }
    if (c.max_per_skill > 0) {
      const auto full = std::find_if(item.skills.begin(), item.skills.end(),
                                     [&](const std::string& s) { return per_skill[s] >= c.max_per_skill; });
      if (full != item.skills.end()) {
        remove(report, alive, i, "skill_cap",
               fmt::format("skill '{}' is in {} kept conversations already", *full, c.max_per_skill));
        continue;
      }
    }
    ++count;
    for (const auto& s : std::set<std::string>(item.skills.begin(), item.skills.end())) ++per_skill[s];
  }

  // 4. balance
  if (c.balance_ratio > 0) {
    if (c.balance_levels)
      balance(
          items, alive, c.balance_ratio, "level_balance",
          [](const SftConversation& s) { return fmt::format("level {}", s.level); }, report);
    if (c.balance_roles)
      balance(
          items, alive, c.balance_ratio, "role_balance", [](const SftConversation& s) { return s.role; }, report);
  }

  for (size_t i = 0; i < items.size(); ++i)
    if (alive[i]) report.kept.push_back(i);
  std::sort(report.removed.begin(), report.removed.end(),
            [](const Removal& a, const Removal& b) { return a.index < b.index; });
  return report;
}

std::string DiversityReport::summary() const {
  std::string out = fmt::format("kept {} of {} conversations\n", kept.size(), kept.size() + removed.size());
  for (const auto& [rule, count] : removed_by_rule) out += fmt::format("  removed {:>6}  {}\n", count, rule);
  return out;
}

}  // namespace vinci::rl
