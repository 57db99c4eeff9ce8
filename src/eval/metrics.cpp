#include "eval/metrics.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "core/enum_names.h"
#include "core/files.h"

namespace vinci::eval {

namespace {
constexpr std::array<core::EnumName<Baseline>, 2> kBaselines{
    {{Baseline::eager, "eager"}, {Baseline::compile, "compile"}}};
}  // namespace

std::string_view to_string(Baseline b) { return core::enum_to_string(kBaselines, b); }

Baseline baseline_from_string(std::string_view s) { return core::enum_from_string(kBaselines, s, "baseline"); }

std::string fast_p_key(double p) { return fmt::format("fast_{}", p); }

std::optional<double> speedup_of(const Result& r, Baseline b) {
  const std::optional<double>& s = b == Baseline::compile ? r.speedup_compile : r.speedup_eager;
  if (!s || !std::isfinite(*s) || *s <= 0.0) return std::nullopt;
  return s;
}

std::vector<TaskOutcome> task_outcomes(const std::vector<Result>& results,
                                       const std::map<int, std::vector<std::string>>& tasks_per_level,
                                       Baseline baseline, int* ignored) {
  using Key = std::pair<int, std::string>;
  std::map<Key, TaskOutcome> outcomes;
  std::map<std::string, int> level_of;  // task id -> its level in the suite; the first listing wins
  for (const auto& [level, tasks] : tasks_per_level) {
    for (const auto& task : tasks) {
      if (!level_of.emplace(task, level).second) continue;
      TaskOutcome o;
      o.level = level;
      o.task = task;
      outcomes.emplace(Key{level, task}, std::move(o));
    }
  }
  const bool suite_given = !tasks_per_level.empty();

  int n_ignored = 0;
  for (const auto& r : results) {
    TaskOutcome* o = nullptr;
    if (suite_given) {
      auto it = level_of.find(r.task);
      if (it == level_of.end()) {
        ++n_ignored;
        continue;
      }
      o = &outcomes.at(Key{it->second, r.task});
    } else {
      auto [it, inserted] = outcomes.try_emplace(Key{r.level, r.task});
      if (inserted) {
        it->second.level = r.level;
        it->second.task = r.task;
      }
      o = &it->second;
    }
    ++o->results;
    ++o->by_class[std::string(to_string(r.verdict))];
    if (!r.correct()) continue;
    // Best of several candidates: the correct one with the highest speedup; any speedup beats none.
    const std::optional<double> s = speedup_of(r, baseline);
    if (!o->correct || (s && (!o->speedup || *s > *o->speedup))) {
      o->correct = true;
      o->speedup = s;
      o->launch_bound = std::ranges::find(r.flags, "launch_bound") != r.flags.end();
    }
  }
  if (ignored) *ignored = n_ignored;

  std::vector<TaskOutcome> out;
  out.reserve(outcomes.size());
  for (auto& [key, o] : outcomes) out.push_back(std::move(o));
  return out;
}

namespace {

LevelSummary summarize_outcomes(int level, const std::vector<const TaskOutcome*>& tasks) {
  LevelSummary s;
  s.level = level;
  s.tasks = static_cast<int>(tasks.size());
  std::map<double, int> above;  // p -> tasks counted for fast_p
  for (double p : kFastP) above[p] = 0;
  double log_sum = 0.0;
  for (const TaskOutcome* t : tasks) {
    s.results += t->results;
    if (t->results == 0) ++s.missing;
    for (const auto& [cls, n] : t->by_class) s.by_class[cls] += n;
    if (!t->correct) continue;
    ++s.correct;
    if (t->launch_bound) ++s.launch_bound;
    for (double p : kFastP) {
      // fast_0 is the correctness rate: a correct result counts there even without a speedup.
      if (p == 0.0 || (t->speedup && *t->speedup > p)) ++above[p];
    }
    if (t->speedup) {
      ++s.with_speedup;
      log_sum += std::log(*t->speedup);
    }
  }
  const double n = static_cast<double>(s.tasks);
  s.correctness_rate = s.tasks ? s.correct / n : 0.0;
  for (const auto& [p, count] : above) s.fast_p[p] = s.tasks ? count / n : 0.0;
  if (s.with_speedup) s.geomean_speedup = std::exp(log_sum / s.with_speedup);
  return s;
}

}  // namespace

std::map<int, std::vector<std::string>> task_ids_by_level(const std::vector<Task>& tasks) {
  std::map<int, std::vector<std::string>> out;
  for (const auto& t : tasks) out[t.level].push_back(t.id);
  return out;
}

Summary summarize(const std::vector<Result>& results, const std::map<int, std::vector<std::string>>& tasks_per_level,
                  Baseline baseline) {
  Summary summary;
  summary.baseline = std::string(to_string(baseline));
  const std::vector<TaskOutcome> outcomes = task_outcomes(results, tasks_per_level, baseline, &summary.ignored_results);

  std::map<int, std::vector<const TaskOutcome*>> by_level;
  for (const auto& [level, tasks] : tasks_per_level) by_level[level];  // levels listed with no tasks still show
  std::vector<const TaskOutcome*> all;
  for (const auto& o : outcomes) {
    by_level[o.level].push_back(&o);
    all.push_back(&o);
  }
  for (const auto& [level, tasks] : by_level) summary.levels.push_back(summarize_outcomes(level, tasks));
  summary.overall = summarize_outcomes(-1, all);
  return summary;
}

nlohmann::json to_json(const LevelSummary& s) {
  nlohmann::json j{{"tasks", s.tasks},     {"results", s.results},           {"missing", s.missing},
                   {"correct", s.correct}, {"with_speedup", s.with_speedup}, {"launch_bound", s.launch_bound}};
  j["correctness_rate"] = s.tasks ? nlohmann::json(s.correctness_rate) : nlohmann::json(nullptr);
  for (const auto& [p, v] : s.fast_p) j[fast_p_key(p)] = s.tasks ? nlohmann::json(v) : nlohmann::json(nullptr);
  j["geomean_speedup"] = s.geomean_speedup ? nlohmann::json(*s.geomean_speedup) : nlohmann::json(nullptr);
  j["by_class"] = s.by_class;
  return j;
}

nlohmann::json to_json(const Summary& s) {
  nlohmann::json levels = nlohmann::json::object();
  for (const auto& l : s.levels) levels[std::to_string(l.level)] = to_json(l);
  return {{"baseline", s.baseline},
          {"ignored_results", s.ignored_results},
          {"levels", std::move(levels)},
          {"overall", to_json(s.overall)}};
}

std::string format_table(const Summary& s) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{"level", "tasks", "results", "correct"};
  for (double p : kFastP) header.push_back(fast_p_key(p));
  header.push_back("geomean");
  rows.push_back(header);

  auto row_of = [](const LevelSummary& l, std::string name) {
    std::vector<std::string> row{std::move(name), std::to_string(l.tasks), std::to_string(l.results),
                                 std::to_string(l.correct)};
    for (double p : kFastP) {
      auto it = l.fast_p.find(p);
      row.push_back(l.tasks && it != l.fast_p.end() ? fmt::format("{:.1f}%", 100.0 * it->second) : "-");
    }
    row.push_back(l.geomean_speedup ? fmt::format("{:.3f}x", *l.geomean_speedup) : "-");
    return row;
  };
  for (const auto& l : s.levels) rows.push_back(row_of(l, std::to_string(l.level)));
  rows.push_back(row_of(s.overall, "all"));

  std::vector<size_t> width(header.size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());

  std::string out = fmt::format("speedup vs {} (fast_p: correct and speedup > p, over all tasks of the level)\n",
                                s.baseline.empty() ? "eager" : s.baseline);
  auto put_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) line += "  ";
      // The level name is left-aligned, numbers right-aligned.
      line += c == 0 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
    }
    out += line + "\n";
  };
  put_row(rows.front());
  size_t total = 0;
  for (size_t w : width) total += w;
  out += std::string(total + 2 * (width.size() - 1), '-') + "\n";
  for (size_t i = 1; i < rows.size(); ++i) {
    if (i + 1 == rows.size() && rows.size() > 2) out += std::string(total + 2 * (width.size() - 1), '-') + "\n";
    put_row(rows[i]);
  }
  if (s.overall.launch_bound)
    out += fmt::format(
        "{} of the {} correct tasks were timed launch-bound (their kernels kept the GPU busy for under half of the "
        "timed window): their speedups compare the host's launch work more than kernels; a larger --scale times the "
        "kernels\n",
        s.overall.launch_bound, s.overall.correct);
  if (s.ignored_results == 1) out += "(1 result for a task outside the suite was ignored)\n";
  if (s.ignored_results > 1)
    out += fmt::format("({} results for tasks outside the suite were ignored)\n", s.ignored_results);
  return out;
}

double pass_at_k(int n, int c, int k) {
  if (c < 0 || c > n || k < 1 || k > n)
    throw std::invalid_argument(fmt::format("pass@k needs 0 <= c <= n and 1 <= k <= n (n={}, c={}, k={})", n, c, k));
  if (n - c < k) return 1.0;
  double none_correct = 1.0;  // C(n-c, k) / C(n, k)
  for (int i = n - c + 1; i <= n; ++i) none_correct *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - none_correct;
}

std::vector<Result> read_results_jsonl(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path))
    throw std::runtime_error(fmt::format("cannot read results file {}", path.string()));
  std::vector<Result> out;
  // A torn last line (a killed run) is skipped with a warning; a malformed complete line is damage.
  for (const auto& line : core::read_jsonl_lines(path)) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line.text);
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(fmt::format("{}:{}: invalid JSON: {}", path.string(), line.number, e.what()));
    }
    try {
      out.push_back(result_from_json(j));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}:{}: {}", path.string(), line.number, e.what()));
    }
  }
  return out;
}

}  // namespace vinci::eval
