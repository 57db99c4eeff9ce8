// The agents' prompt texts: files in prompts/ with {{name}} placeholders. A user's folder
// (--prompts DIR) overrides the shipped files one by one.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace vinci::agents {

class Prompts {
 public:
  // The shipped folder is prompts/ in the source tree; an override folder's files win where present.
  explicit Prompts(std::filesystem::path override_dir = {});

  // The named template (file NAME.md) with every {{key}} replaced. A placeholder without a value is
  // an error naming the file; a value the template does not use is fine (an override may leave it out).
  std::string render(const std::string& name, const std::map<std::string, std::string>& values) const;

  static std::filesystem::path shipped_dir();

 private:
  std::filesystem::path file_of(const std::string& name) const;
  std::filesystem::path override_dir_;
};

}  // namespace vinci::agents
