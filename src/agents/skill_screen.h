// The rules a proposed skill must pass before it is even verified.
//
// The rules a proposed skill must pass before it is even verified (design.md §5): no kernel
// bypass, nothing specific to the task it came from, nothing trivial, no precision drop without a
// reason that holds for any task. Verification then decides by execution.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "skills/skill.h"

namespace vinci::agents {

// Why the skill is refused, or nothing when it passes. task_source and task_name are the problem
// the skill was distilled from.
std::optional<std::string> screen_skill(const skills::Skill& skill, std::string_view task_source,
                                        std::string_view task_name);

}  // namespace vinci::agents
