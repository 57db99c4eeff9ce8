#include "cli/skills_db.h"

#include <filesystem>

#include <fmt/format.h>

#include "skills/skill_jsonl.h"

namespace vinci::cli {

namespace fs = std::filesystem;

std::unique_ptr<skills::SkillStore> open_skills_db(const std::string& db, DbOpen how) {
  static const fs::path seed = fs::path(VINCI_SOURCE_ROOT) / "skills" / "seed.jsonl";
  const fs::path path = db.empty() ? skills::default_skills_db() : fs::path(db);
  if (!db.empty() && how == DbOpen::existing && !fs::exists(path))
    throw std::runtime_error(
        fmt::format("skill library {}: no such file (`vinci skills --db {} import FILE.jsonl` "
                    "creates one; left out, the default library is used)",
                    db, db));
  auto store = std::make_unique<skills::SkillStore>(path);
  if ((db.empty() || how == DbOpen::seed_if_new) && store->created() && store->count() == 0 && fs::exists(seed)) {
    const auto outcome = store->import(skills::read_skills_jsonl(seed), false);
    fmt::print(stderr, "created {} with the {} skills of {}\n", path.string(), outcome.imported, seed.string());
  }
  return store;
}

}  // namespace vinci::cli
