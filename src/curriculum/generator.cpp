#include "curriculum/generator.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>

#include "core/files.h"
#include "core/setup_error.h"
#include "curriculum/composition_split.h"
#include "curriculum/manifest.h"
#include "curriculum/ops.h"
#include "curriculum/task_source.h"

namespace vinci::curriculum {

namespace fs = std::filesystem;

namespace {

// Draws by modulo rather than std::uniform_int_distribution, whose results differ between standard
// libraries: a seed names the same curriculum wherever vinci is built.
class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  size_t below(size_t n) { return static_cast<size_t>(rng_() % n); }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  std::mt19937_64 rng_;
};

const std::vector<double> kScales = {0.5, 0.75, 1.25, 1.5, 2.0};
const std::vector<double> kShifts = {-1.0, -0.5, 0.25, 0.5, 1.0};

std::vector<OpStep> draw_chain(Draw& d, size_t length) {
  std::vector<OpStep> chain;
  while (chain.size() < length) {
    const auto& op = d.pick(elementwise_ops());
    if (!chain.empty() && chain.back().op == op.name) continue;  // relu after relu teaches nothing
    OpStep s{std::string(op.name), 0.0};
    if (op.name == "scale") s.constant = d.pick(kScales);
    if (op.name == "shift") s.constant = d.pick(kShifts);
    chain.push_back(s);
  }
  return chain;
}

// Which of a family's shapes a task is drawn at.
enum class Rows { any, long_rows, short_rows };

TaskSpec draw_spec(Draw& d, Family family, Rows rows, const CurriculumConfig& c) {
  TaskSpec s;
  s.family = family;
  if (family == Family::elementwise) {
    s.chain = draw_chain(d, 1 + d.below(static_cast<size_t>(c.max_chain)));
  } else if (family == Family::matmul) {
    s.chain = draw_chain(d, 1 + d.below(static_cast<size_t>(c.max_epilogue)));
    s.rows = d.pick(c.matmul_rows);
    s.cols = d.pick(c.matmul_cols);
    s.inner = d.pick(c.matmul_inner);
    return s;
  } else {
    s.chain = draw_chain(d, d.below(static_cast<size_t>(c.max_prologue) + 1));
    const RowKind& kind = d.pick(row_kinds());
    s.kind = std::string(kind.name);
    if (kind.takes_affine) s.affine = std::string(kAffines[d.below(std::size(kAffines))]);
  }
  s.rows = d.pick(rows == Rows::long_rows ? c.long_rows : rows == Rows::short_rows ? c.short_rows : c.rows);
  s.cols = d.pick(rows == Rows::long_rows ? c.long_cols : rows == Rows::short_rows ? c.short_cols : c.cols);
  return s;
}

std::string key_of(const std::vector<std::string>& tokens) { return fmt::format("{}", fmt::join(tokens, " ")); }

void check(const CurriculumConfig& c) {
  const auto bad = [](const std::string& what) { throw core::SetupError(what); };
  if (c.elementwise_tasks < 0 || c.rowwise_tasks < 0 || c.long_row_tasks < 0 || c.short_row_tasks < 0 ||
      c.matmul_tasks < 0)
    bad("task counts must not be negative");
  if (c.elementwise_tasks + c.rowwise_tasks + c.long_row_tasks + c.short_row_tasks + c.matmul_tasks == 0)
    bad("no tasks to write: --elementwise, --rowwise, --long-rows, --short-rows and --matmul are all 0");
  if (!(c.heldout_share >= 0 && c.heldout_share < 1))
    bad(fmt::format("--heldout-share {} is not in [0, 1)", c.heldout_share));
  if (c.max_chain < 1 || c.max_chain > 12) bad(fmt::format("--max-chain {} is not in [1, 12]", c.max_chain));
  if (c.max_prologue < 0 || c.max_prologue > 6) bad(fmt::format("--max-prologue {} is not in [0, 6]", c.max_prologue));
  if (c.rows.empty() || c.cols.empty()) bad("at least one row count and one column count are needed");
  for (const auto v : c.rows)
    if (v < 1) bad(fmt::format("row count {} is not positive", v));
  for (const auto v : c.cols)
    if (v < 1 || v > kLongRowCols)
      bad(fmt::format("column count {} is not in [1, {}] (longer rows are --long-rows tasks)", v, kLongRowCols));
  if (c.rowwise_tasks > 0)
    for (const auto v : c.cols)
      if (v <= kShortRowCols)
        bad(fmt::format("column count {} is not above {} for --rowwise tasks (shorter rows are --short-rows tasks)", v,
                        kShortRowCols));
  if (c.long_row_tasks > 0 && (c.long_rows.empty() || c.long_cols.empty()))
    bad("long-row tasks need at least one row count and one column count");
  for (const auto v : c.long_rows)
    if (v < 1) bad(fmt::format("long-row count {} is not positive", v));
  for (const auto v : c.long_cols)
    if (v <= kLongRowCols) bad(fmt::format("long-row column count {} is not above {}", v, kLongRowCols));
  if (c.short_row_tasks > 0 && (c.short_rows.empty() || c.short_cols.empty()))
    bad("short-row tasks need at least one row count and one column count");
  for (const auto v : c.short_rows)
    if (v < 1) bad(fmt::format("short-row count {} is not positive", v));
  for (const auto v : c.short_cols)
    if (v < 1 || v > kShortRowCols) bad(fmt::format("short-row column count {} is not in [1, {}]", v, kShortRowCols));
  if (c.max_epilogue < 1 || c.max_epilogue > 6) bad(fmt::format("--max-epilogue {} is not in [1, 6]", c.max_epilogue));
  if (c.matmul_tasks > 0 && (c.matmul_rows.empty() || c.matmul_cols.empty() || c.matmul_inner.empty()))
    bad("matmul tasks need at least one row count, one column count and one inner size");
  for (const auto* sizes : {&c.matmul_rows, &c.matmul_cols, &c.matmul_inner})
    for (const auto v : *sizes)
      if (v < 1) bad(fmt::format("matmul size {} is not positive", v));
}

}  // namespace

std::vector<CurriculumTask> generate_curriculum(const CurriculumConfig& c) {
  check(c);
  const CompositionSplit split(c.seed, c.pair_share);
  Draw d(c.seed);
  std::vector<CurriculumTask> out;
  std::map<std::pair<bool, int>, int> numbers;  // (held out, level) -> tasks so far
  // Long rows, short rows, then matmuls come last, so that adding them changes none of the tasks drawn
  // before.
  for (const auto& [family, rows] :
       {std::pair{Family::elementwise, Rows::any}, std::pair{Family::rowwise, Rows::any},
        std::pair{Family::rowwise, Rows::long_rows}, std::pair{Family::rowwise, Rows::short_rows},
        std::pair{Family::matmul, Rows::any}}) {
    const int total = rows == Rows::long_rows         ? c.long_row_tasks
                      : rows == Rows::short_rows      ? c.short_row_tasks
                      : family == Family::elementwise ? c.elementwise_tasks
                      : family == Family::matmul      ? c.matmul_tasks
                                                      : c.rowwise_tasks;
    const int heldout = static_cast<int>(total * c.heldout_share + 0.5);
    std::set<std::string> seen;
    std::set<std::string> trained_tokens;
    for (const bool held_out : {false, true}) {
      const int want = held_out ? heldout : total - heldout;
      int found = 0;
      for (int attempt = 0; found < want; ++attempt) {
        if (attempt > 200000)
          throw core::SetupError(fmt::format(
              "found only {} {} {} compositions of the {} asked for: the vocabulary holds no more under this split "
              "(raise or lower the task count, or change --pair-share or {})",
              found, held_out ? "held-out" : "training",
              rows == Rows::long_rows    ? "long-row"
              : rows == Rows::short_rows ? "short-row"
                                         : to_string(family),
              want,
              family == Family::elementwise ? "--max-chain"
              : family == Family::matmul    ? "--max-epilogue"
                                            : "--max-prologue"));
        TaskSpec s = draw_spec(d, family, rows, c);
        const auto tokens = s.tokens();
        if (split.trains(tokens) == held_out || seen.contains(key_of(tokens))) continue;
        // A held-out task composes ops that training has, in a way it has not.
        if (held_out &&
            !std::all_of(tokens.begin(), tokens.end(), [&](const auto& t) { return trained_tokens.contains(t); }))
          continue;
        seen.insert(key_of(tokens));
        if (!held_out) trained_tokens.insert(tokens.begin(), tokens.end());
        const int number = ++numbers[{held_out, s.level()}];
        out.push_back({s, held_out, fmt::format("level{}/{}_{}", s.level(), number, s.camel_name())});
        ++found;
      }
    }
  }
  return out;
}

void write_curriculum(const std::vector<CurriculumTask>& tasks, const fs::path& out) {
  core::write_new_folder(out, [&](const fs::path& staging) {
    std::string manifest;
    for (const auto& t : tasks) {
      core::write_file_atomic(staging / (t.held_out ? "heldout" : "train") / (t.id + ".py"), task_source(t.spec));
      manifest += manifest_record(t).dump() + "\n";
    }
    core::write_file_atomic(staging / "curriculum.jsonl", manifest);
  });
}

}  // namespace vinci::curriculum
