// vinci teach: the procedural teacher's Triton solutions of a curriculum, per strategy.
//
// vinci teach --curriculum DIR --out DIR: the procedural teacher's Triton solutions of a curriculum,
// one candidates folder per split and strategy, so that `vinci eval --tasks CUR/train --candidates
// OUT/train/<strategy>` times each strategy; teacher.jsonl lists every file with its strategy.
#include <fmt/format.h>

#include "cli/commands.h"
#include "curriculum/manifest.h"
#include "curriculum/teacher.h"

namespace vinci::cli {

namespace {

struct TeachOptions {
  std::string curriculum, out, split = "both";
};

int run_teach(const TeachOptions& o) {
  const auto tasks = curriculum::read_manifest(o.curriculum);
  const auto split = o.split == "train"     ? curriculum::SplitChoice::train
                     : o.split == "heldout" ? curriculum::SplitChoice::heldout
                                            : curriculum::SplitChoice::both;
  const size_t files = curriculum::write_teacher_solutions(tasks, split, o.out);
  fmt::print("{} solutions of {} tasks in {} (listed in {}/teacher.jsonl)\n", files, tasks.size(), o.out, o.out);
  return 0;
}

}  // namespace

Action add_teach_command(CLI::App& app) {
  auto o = std::make_shared<TeachOptions>();
  app.add_option("--curriculum", o->curriculum, "a folder written by vinci curriculum")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--out", o->out, "the folder to create (it must not exist)")->required();
  app.add_option("--split", o->split, "which tasks: train, heldout or both")
      ->capture_default_str()
      ->check(CLI::IsMember({"train", "heldout", "both"}));
  return [o] { return run_teach(*o); };
}

}  // namespace vinci::cli
