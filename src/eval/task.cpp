#include "eval/task.h"

#include <algorithm>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>

namespace vinci::eval {

namespace fs = std::filesystem;

int level_of_folder(const std::string& folder) {
  static const std::regex re(R"(level_?(\d+))");
  std::smatch m;
  if (std::regex_match(folder, m, re)) return std::stoi(m[1]);
  return -1;
}

static void scan_level(const fs::path& dir, int level, const std::string& prefix, Suite& suite) {
  static const std::regex re(R"((\d+)_(.+)\.py)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  for (const auto& f : files) {
    const std::string fname = f.filename().string();
    std::smatch m;
    if (!std::regex_match(fname, m, re)) {
      if (f.extension() == ".py" && fname != "__init__.py")
        suite.skipped.push_back(fmt::format("{}: not named <number>_<Name>.py", f.string()));
      continue;
    }
    Task t;
    t.level = level;
    t.number = std::stoi(m[1]);
    t.name = m[2];
    t.file = f;
    t.id = prefix + f.stem().string();
    suite.tasks.push_back(std::move(t));
  }
}

Suite load_suite(const fs::path& root) {
  if (!fs::is_directory(root)) throw std::runtime_error(fmt::format("task suite {} is not a directory", root.string()));
  Suite suite;
  suite.root = root;
  const int own = level_of_folder(fs::absolute(root).lexically_normal().filename().string());
  if (own >= 0) {
    scan_level(root, own, fmt::format("level{}/", own), suite);
  } else {
    bool any_level = false;
    for (const auto& e : fs::directory_iterator(root)) {
      if (!e.is_directory()) continue;
      const int lvl = level_of_folder(e.path().filename().string());
      if (lvl < 0) continue;
      any_level = true;
      scan_level(e.path(), lvl, e.path().filename().string() + "/", suite);
    }
    if (!any_level) scan_level(root, 0, "", suite);
  }
  std::sort(suite.tasks.begin(), suite.tasks.end(), [](const Task& a, const Task& b) {
    return std::tie(a.level, a.number, a.name) < std::tie(b.level, b.number, b.name);
  });
  if (suite.tasks.empty())
    throw std::runtime_error(fmt::format("task suite {} holds no problem file (expected levelN/<number>_<Name>.py)",
                                         root.string()));
  return suite;
}

Task task_from_file(const fs::path& file) {
  if (!fs::is_regular_file(file) || file.extension() != ".py")
    throw std::runtime_error(fmt::format("{}: not a Python problem file (expected a KernelBench-format .py file)", file.string()));
  Task t;
  t.file = file;
  const std::string stem = file.stem().string();
  static const std::regex re(R"((\d+)_(.+))");
  std::smatch m;
  if (std::regex_match(stem, m, re)) {
    t.number = std::stoi(m[1]);
    t.name = m[2];
  } else {
    t.name = stem;
  }
  const int level = level_of_folder(fs::absolute(file).parent_path().filename().string());
  t.level = std::max(level, 0);
  t.id = level >= 0 ? fmt::format("level{}/{}", level, stem) : stem;
  return t;
}

}  // namespace vinci::eval
