// The skill library a command works on: --db PATH, or the user's default library, which starts as
// the seed library so agents and `make run` have skills from the first call.
#pragma once

#include <memory>
#include <string>

#include "skills/store.h"

namespace vinci::cli {

// An explicit path opens (or creates) that library as it is; an empty one opens the default
// library. skills/seed.jsonl is imported into the default library when it is new, and into an
// explicit one when seed_if_new asks (a training run's own library).
std::unique_ptr<skills::SkillStore> open_skills_db(const std::string& db, bool seed_if_new = false);

}  // namespace vinci::cli
