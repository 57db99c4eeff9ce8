#include "agents/prompts.h"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "core/files.h"

#ifndef VINCI_SOURCE_ROOT
#define VINCI_SOURCE_ROOT "."
#endif

namespace vinci::agents {

namespace fs = std::filesystem;

Prompts::Prompts(fs::path override_dir) : override_dir_(std::move(override_dir)) {
  if (!override_dir_.empty() && !fs::is_directory(override_dir_))
    throw std::runtime_error(fmt::format("--prompts {}: not a folder", override_dir_.string()));
}

fs::path Prompts::shipped_dir() {
  if (const char* dir = std::getenv("VINCI_PROMPTS"); dir && *dir) return dir;
  return fs::path(VINCI_SOURCE_ROOT) / "prompts";
}

fs::path Prompts::file_of(const std::string& name) const {
  if (!override_dir_.empty()) {
    const fs::path mine = override_dir_ / (name + ".md");
    if (fs::exists(mine)) return mine;
  }
  return shipped_dir() / (name + ".md");
}

std::string Prompts::render(const std::string& name, const std::map<std::string, std::string>& values) const {
  const fs::path file = file_of(name);
  const std::string text = core::read_file(file);
  std::string out;
  size_t pos = 0;
  for (;;) {
    const size_t open = text.find("{{", pos);
    if (open == std::string::npos) {
      out.append(text, pos);
      break;
    }
    const size_t close = text.find("}}", open + 2);
    if (close == std::string::npos)
      throw std::runtime_error(fmt::format("{}: '{{{{' at offset {} is never closed", file.string(), open));
    const std::string key = text.substr(open + 2, close - open - 2);
    const auto it = values.find(key);
    if (it == values.end())
      throw std::runtime_error(fmt::format("{}: no value for the placeholder {{{{{}}}}}", file.string(), key));
    out.append(text, pos, open - pos);
    out.append(it->second);  // values are inserted as they are: never scanned for placeholders
    pos = close + 2;
  }
  return out;
}

}  // namespace vinci::agents
