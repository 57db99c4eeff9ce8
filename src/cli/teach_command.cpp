// vinci teach --curriculum DIR --out DIR: the procedural teacher's Triton solutions of a curriculum,
// one candidates folder per split and strategy, so that `vinci eval --tasks CUR/train --candidates
// OUT/train/<strategy>` times each strategy; teacher.jsonl lists every file with its strategy.
#include <unistd.h>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/files.h"
#include "core/setup_error.h"
#include "curriculum/manifest.h"
#include "curriculum/teacher.h"

namespace vinci::cli {

namespace {

namespace fs = std::filesystem;

struct TeachOptions {
  std::string curriculum, out, split = "both";
};

int run_teach(const TeachOptions& o) {
  const auto tasks = curriculum::read_manifest(o.curriculum);
  if (fs::exists(o.out)) throw core::SetupError(fmt::format("{}: exists; the teacher writes a new folder", o.out));
  const fs::path out(o.out);
  const fs::path staging = out.parent_path() / fmt::format(".{}.tmp-{}", out.filename().string(), ::getpid());
  fs::remove_all(staging);
  size_t files = 0;
  try {
    std::string listing;
    for (const auto& t : tasks) {
      const std::string split = t.held_out ? "heldout" : "train";
      if (o.split != "both" && o.split != split) continue;
      for (const auto& s : curriculum::teacher_strategies(t.spec)) {
        const fs::path rel = fs::path(split) / s.name / (t.id + ".py");
        core::write_file_atomic(staging / rel, curriculum::triton_solution(t.spec, s));
        listing += nlohmann::ordered_json{{"id", t.id},
                                          {"split", split},
                                          {"strategy", s.name},
                                          {"correct", s.defect == curriculum::Defect::none},
                                          {"file", rel.string()}}
                       .dump() +
                   "\n";
        ++files;
      }
    }
    core::write_file_atomic(staging / "teacher.jsonl", listing);
    fs::rename(staging, out);
  } catch (...) {
    fs::remove_all(staging);
    throw;
  }
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
