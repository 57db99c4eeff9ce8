// The skill library a command works on: --db PATH, or the user's default library, which starts as
// the seed library so agents and `make run` have skills from the first call.
#pragma once

#include <memory>
#include <string>

#include "skills/store.h"

namespace vinci::cli {

// An explicit path opens (or creates) that library as it is; an empty one opens the default
// library, importing skills/seed.jsonl into it when it is new.
std::unique_ptr<skills::SkillStore> open_skills_db(const std::string& db);

}  // namespace vinci::cli
