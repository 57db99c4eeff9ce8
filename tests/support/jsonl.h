// Reading the JSONL files the code under test writes (results, attempts, metrics).
#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/files.h"

namespace vinci::test {

// Every record of a JSONL file; a line that is not JSON throws (a torn last line is skipped, as core::read_jsonl_lines
// does).
inline std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& path) {
  std::vector<nlohmann::json> out;
  for (const auto& line : core::read_jsonl_lines(path)) out.push_back(nlohmann::json::parse(line.text));
  return out;
}

}  // namespace vinci::test
