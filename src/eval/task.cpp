#include "eval/task.h"

#include <algorithm>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>

#include "core/process.h"
#include "core/setup_error.h"

namespace vinci::eval {

namespace fs = std::filesystem;

std::string flat_id(const std::string& task_id) {
  std::string out = task_id;
  std::replace(out.begin(), out.end(), '/', '_');
  return out;
}

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
    throw std::runtime_error(
        fmt::format("task suite {} holds no problem file (expected levelN/<number>_<Name>.py)", root.string()));
  return suite;
}

Task task_from_file(const fs::path& file) {
  if (!fs::is_regular_file(file) || file.extension() != ".py")
    throw std::runtime_error(
        fmt::format("{}: not a Python problem file (expected a KernelBench-format .py file)", file.string()));
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

namespace {

// Prints nothing when the file is a task; else "LINE<TAB>what is wrong". It only parses: a task's
// module code runs in the judge, never here.
constexpr const char* kTaskCheck = R"PY(
import ast, sys
path = sys.argv[1]
try:
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
except SyntaxError as e:
    print(f"{e.lineno or 0}\tsyntax error: {e.msg}")
    sys.exit(0)
except (OSError, UnicodeDecodeError, ValueError) as e:
    print(f"0\tcannot read it: {e}")
    sys.exit(0)
names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
names |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in names]
if missing:
    print(f"0\tit defines no {', '.join(missing)} at top level (a KernelBench task has class Model, get_inputs and get_init_inputs)")
)PY";

}  // namespace

void check_task_source(const Task& task, const std::string& python) {
  core::SpawnOptions o;
  o.argv = {python, "-c", kTaskCheck, task.file.string()};
  const auto run = core::run_to_completion(o, std::chrono::seconds(60));
  if (!run.status.exited || run.status.code != 0)
    throw core::SetupError(
        fmt::format("{}: could not check the task with {} ({})", task.file.string(), python, run.status.describe()));
  if (run.out.empty()) return;
  const auto tab = run.out.find('\t');
  const std::string line = run.out.substr(0, tab), what = run.out.substr(tab + 1, run.out.find_last_not_of('\n') - tab);
  throw core::SetupError(line == "0" ? fmt::format("{}: {}", task.file.string(), what)
                                     : fmt::format("{}:{}: {}", task.file.string(), line, what));
}

}  // namespace vinci::eval
