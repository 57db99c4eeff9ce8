// curriculum.jsonl: one record per task, written by the generator and read back by later commands.
//
// curriculum.jsonl: one record per task (id, split, family, the chain with its constants, the row op
// and affine, the shape, the composition's tokens), written by the generator and read back by the
// teacher and the commands that follow it.
#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "curriculum/generator.h"

namespace vinci::curriculum {

nlohmann::ordered_json manifest_record(const CurriculumTask& task);

// The tasks of DIR/curriculum.jsonl; throws core::SetupError "<file>:<line>: <field>: <what>" on a
// record it cannot read back into a task.
std::vector<CurriculumTask> read_manifest(const std::filesystem::path& dir);

}  // namespace vinci::curriculum
