// The skill library a command works on: --db PATH, or the user's default library.
//
// The skill library a command works on: --db PATH, or the user's default library, which starts as
// the seed library so agents and `make run` have skills from the first call.
#pragma once

#include <memory>
#include <string>

#include "skills/store.h"

namespace vinci::cli {

// How an explicit path is opened. A command that only reads a library refuses a path with no library
// (a mistyped --db must not answer from an empty library it just made); one that adds skills creates
// it; a training run's own library is created with skills/seed.jsonl in it.
enum class DbOpen { existing, create, seed_if_new };

// An empty db opens the default library, created with skills/seed.jsonl in it when it is new; an
// explicit path opens that library as `how` says.
std::unique_ptr<skills::SkillStore> open_skills_db(const std::string& db, DbOpen how);

}  // namespace vinci::cli
