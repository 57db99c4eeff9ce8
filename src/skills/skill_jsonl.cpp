#include "skills/skill_jsonl.h"

#include <stdexcept>

#include <fmt/format.h>

#include "core/files.h"

namespace vinci::skills {

std::vector<Skill> read_skills_jsonl(const std::filesystem::path& file, Status default_status) {
  std::vector<Skill> skills;
  for (const auto& [number, line] : core::read_jsonl_lines(file)) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw std::runtime_error(fmt::format("{}:{}: not valid JSON: {}", file.string(), number, e.what()));
    }
    try {
      if (j.is_object() && !j.contains("status")) j["status"] = to_string(default_status);
      Skill s = skill_from_json(j);
      s.id = 0;  // ids belong to the store the skill lands in
      skills.push_back(std::move(s));
    } catch (const SkillError& e) {
      const std::string name = j.is_object() && j.contains("name") && j["name"].is_string()
                                   ? fmt::format(" (skill '{}')", j["name"].get<std::string>())
                                   : "";
      throw std::runtime_error(fmt::format("{}:{}{}: {}", file.string(), number, name, e.what()));
    }
  }
  return skills;
}

std::string skills_to_jsonl(const std::vector<Skill>& skills) {
  std::string out;
  for (const auto& s : skills) {
    auto j = to_json(s);
    j.erase("id");
    out += j.dump() + "\n";
  }
  return out;
}

void write_skills_jsonl(const std::filesystem::path& file, const std::vector<Skill>& skills) {
  core::write_file_atomic(file, skills_to_jsonl(skills));
}

std::vector<Skill> read_skills_jsonl(const std::vector<std::string>& files) {
  std::vector<Skill> out;
  for (const auto& file : files)
    for (auto& skill : read_skills_jsonl(std::filesystem::path(file))) out.push_back(std::move(skill));
  return out;
}

}  // namespace vinci::skills
