// Skill libraries as JSONL files (daVinci-kernel's format, one skill a line, vinci's fields added).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "skills/skill.h"

namespace vinci::skills {

// Reads every line or none: the first malformed line throws std::runtime_error naming the file,
// the line number and the field. Blank lines are skipped. A line without "status" gets
// default_status (a library file lists skills someone chose to keep).
std::vector<Skill> read_skills_jsonl(const std::filesystem::path& file, Status default_status = Status::admitted);
// Several files' skills, file after file (a library given as a list of JSONL files).
std::vector<Skill> read_skills_jsonl(const std::vector<std::string>& files);

// One line per skill; the file is replaced atomically.
void write_skills_jsonl(const std::filesystem::path& file, const std::vector<Skill>& skills);
std::string skills_to_jsonl(const std::vector<Skill>& skills);

}  // namespace vinci::skills
