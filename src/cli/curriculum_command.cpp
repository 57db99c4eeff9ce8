// vinci curriculum --out DIR: the procedural curriculum as train/ and heldout/ suites.
//
// vinci curriculum --out DIR: the procedural kernel curriculum (src/curriculum) as two task suites,
// train/ and heldout/, and the manifest curriculum.jsonl. A vinci subcommand rather than a script of
// its own: the teacher and the SFT data that follow it run through vinci's own prompts and
// evaluator, and one binary keeps the tasks, their split and their solutions in step.
#include <fmt/format.h>

#include "cli/commands.h"
#include "curriculum/generator.h"

namespace vinci::cli {

namespace {

int run_curriculum(const curriculum::CurriculumConfig& config, const std::string& out) {
  const auto tasks = curriculum::generate_curriculum(config);
  curriculum::write_curriculum(tasks, out);
  std::map<std::string, int> counts;
  for (const auto& t : tasks) ++counts[fmt::format("{} {}", t.held_out ? "heldout" : "train", t.spec.family_name())];
  for (const auto& [what, n] : counts) fmt::print("{:<22} {:>4}\n", what, n);
  fmt::print("{} tasks in {}/train and {}/heldout, manifest {}/curriculum.jsonl\n", tasks.size(), out, out, out);
  return 0;
}

}  // namespace

Action add_curriculum_command(CLI::App& app) {
  auto config = std::make_shared<curriculum::CurriculumConfig>();
  auto out = std::make_shared<std::string>();
  app.add_option("--out", *out, "the folder to create (it must not exist)")->required();
  app.add_option("--seed", config->seed, "draws the compositions, shapes and the held-out split")
      ->capture_default_str();
  app.add_option("--elementwise", config->elementwise_tasks, "elementwise-chain tasks, both splits together")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--rowwise", config->rowwise_tasks, "row-wise reduction and normalization tasks, both splits")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--long-rows", config->long_row_tasks,
                 "row-wise tasks over rows longer than one tile (a fast kernel loops over each row), both splits")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--short-rows", config->short_row_tasks,
                 "row-wise tasks over many short rows (a fast kernel tiles several rows a program), both splits")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--matmul", config->matmul_tasks,
                 "Linear layers with an elementwise epilogue (a fast kernel applies it before its one store), both "
                 "splits")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--heldout-share", config->heldout_share, "the share of each family's tasks held out")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.95));
  app.add_option("--pair-share", config->pair_share,
                 "the share of ordered op pairs held out: a held-out task has one, a training task none")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 0.95));
  app.add_option("--max-chain", config->max_chain, "the longest elementwise chain")
      ->capture_default_str()
      ->check(CLI::Range(1, 12));
  app.add_option("--max-prologue", config->max_prologue, "the most elementwise ops before a row-wise op")
      ->capture_default_str()
      ->check(CLI::Range(0, 6));
  app.add_option("--rows", config->rows, "the row counts shapes are drawn from")->delimiter(',')->capture_default_str();
  app.add_option("--cols", config->cols, "the column counts shapes are drawn from")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--long-row-counts", config->long_rows, "the row counts of long-row tasks")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--long-cols", config->long_cols, "the column counts of long-row tasks (above 16384)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--short-row-counts", config->short_rows, "the row counts of short-row tasks")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--short-cols", config->short_cols, "the column counts of short-row tasks (at most 64)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--max-epilogue", config->max_epilogue, "the most elementwise ops after a matmul task's Linear")
      ->capture_default_str()
      ->check(CLI::Range(1, 6));
  app.add_option("--matmul-rows", config->matmul_rows, "the input rows of matmul tasks")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--matmul-cols", config->matmul_cols, "the output columns (out features) of matmul tasks")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--matmul-inner", config->matmul_inner, "the inner size (in features) of matmul tasks")
      ->delimiter(',')
      ->capture_default_str();
  return [config, out] { return run_curriculum(*config, *out); };
}

}  // namespace vinci::cli
