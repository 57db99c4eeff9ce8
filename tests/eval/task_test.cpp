// Task suites, single task files and candidate matching, on KernelBench's layout built in a temp folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include "core/setup_error.h"
#include "eval/candidate.h"
#include "eval/task.h"
#include "support/temp_dir.h"

using namespace vinci::eval;
namespace fs = std::filesystem;

namespace task_test {
class SuiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("vinci-suite-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    write("tasks/level1/1_Square_matrix_multiplication_.py");
    write("tasks/level1/23_Softmax.py");
    write("tasks/level1/__init__.py");
    write("tasks/level1/notes.txt");
    write("tasks/level1/helper.py");
    write("tasks/level2/23_Softmax.py");
    write("tasks/level2/5_Conv2d_ReLU.py");
    write("tasks/solutions/cuda/level1/23_Softmax.py");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text = "x = 1\n") {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  fs::path root_;
};

TEST_F(SuiteTest, KernelBenchLayoutLoadsAsIs) {
  const Suite s = load_suite(root_ / "tasks");
  ASSERT_EQ(s.tasks.size(), 4u);
  EXPECT_EQ(s.tasks[0].id, "level1/1_Square_matrix_multiplication_");
  EXPECT_EQ(s.tasks[0].level, 1);
  EXPECT_EQ(s.tasks[0].number, 1);
  EXPECT_EQ(s.tasks[0].name, "Square_matrix_multiplication_");
  EXPECT_EQ(s.tasks[1].id, "level1/23_Softmax");
  EXPECT_EQ(s.tasks[2].id, "level2/5_Conv2d_ReLU");
  EXPECT_EQ(s.tasks[3].id, "level2/23_Softmax");
  ASSERT_EQ(s.skipped.size(), 1u);  // helper.py; __init__.py and notes.txt are not candidates for tasks
  EXPECT_NE(s.skipped[0].find("helper.py"), std::string::npos);
}

TEST_F(SuiteTest, ASingleLevelFolderIsASuite) {
  const Suite s = load_suite(root_ / "tasks" / "level2");
  ASSERT_EQ(s.tasks.size(), 2u);
  EXPECT_EQ(s.tasks[0].id, "level2/5_Conv2d_ReLU");
  EXPECT_EQ(s.tasks[0].level, 2);
}

TEST_F(SuiteTest, MissingOrEmptySuiteIsAnError) {
  EXPECT_THROW(load_suite(root_ / "nope"), std::runtime_error);
  fs::create_directories(root_ / "empty");
  EXPECT_THROW(load_suite(root_ / "empty"), std::runtime_error);
}

TEST_F(SuiteTest, CandidatesMatchByPathNameGeneratedNameAndHeader) {
  write("c/level1/23_Softmax.py");                  // by relative path
  write("c/1_Square_matrix_multiplication_.py");    // by unique file name
  write("c/level_2_problem_5_sample_0_kernel.py");  // KernelBench's generated name
  write("c/anything.py",
        "# vinci-task: level2/23_Softmax\n# vinci-expect: rejected/torch_op\n"
        "# vinci-devices: cpu,cuda\nx = 1\n");  // by header
  write("c/23_Softmax.py");                     // ambiguous: two levels
  write("c/level_9_problem_1.py");              // no such task
  const Suite s = load_suite(root_ / "tasks");
  const Pairing p = match_candidates(s, root_ / "c");
  std::map<std::string, std::string> got;
  for (const auto& [t, c] : p.pairs) got[fs::relative(c.file, root_ / "c").string()] = t.id;
  EXPECT_EQ(got["level1/23_Softmax.py"], "level1/23_Softmax");
  EXPECT_EQ(got["1_Square_matrix_multiplication_.py"], "level1/1_Square_matrix_multiplication_");
  EXPECT_EQ(got["level_2_problem_5_sample_0_kernel.py"], "level2/5_Conv2d_ReLU");
  EXPECT_EQ(got["anything.py"], "level2/23_Softmax");
  EXPECT_EQ(got.size(), 4u);
  ASSERT_EQ(p.unmatched.size(), 2u);
  for (const auto& [t, c] : p.pairs) {
    if (c.file.filename() == "anything.py") {
      EXPECT_EQ(c.expect.value_or(""), "rejected/torch_op");
      EXPECT_TRUE(c.runs_on("cpu"));
      EXPECT_TRUE(c.runs_on("cuda"));
    } else {
      EXPECT_TRUE(c.runs_on("cuda"));  // no devices header: any device
    }
  }
}

TEST(Suite, OurOwnSuiteHasEveryLevel) {
  const Suite s = load_suite(fs::path(VINCI_SOURCE_ROOT) / "tasks");
  int per_level[4] = {0, 0, 0, 0};
  for (const auto& t : s.tasks) ++per_level[t.level];
  EXPECT_GE(per_level[1], 16);
  EXPECT_GE(per_level[2], 10);
  EXPECT_GE(per_level[3], 5);
  const Pairing cuda = match_candidates(s, fs::path(VINCI_SOURCE_ROOT) / "tasks" / "solutions" / "cuda");
  EXPECT_EQ(cuda.pairs.size(), s.tasks.size()) << "every task has a CUDA reference solution";
  EXPECT_TRUE(cuda.unmatched.empty());
}

// Each CPU solution holds its own kernel, in an extension of its own: none shares another's source.
TEST(Suite, CpuSolutionsBuildExtensionsOfTheirOwn) {
  const fs::path cpu = fs::path(VINCI_SOURCE_ROOT) / "tasks" / "solutions" / "cpu";
  const Pairing p = match_candidates(load_suite(fs::path(VINCI_SOURCE_ROOT) / "tasks"), cpu);
  EXPECT_GE(p.pairs.size(), 10u);
  const std::regex name(R"re(load_inline\(name="(\w+)")re");
  std::map<std::string, std::string> owner;
  for (const auto& [task, cand] : p.pairs) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(cand.source, m, name)) << cand.file << " has no load_inline(name=...)";
    const auto [it, fresh] = owner.emplace(m[1], cand.file.string());
    EXPECT_TRUE(fresh) << cand.file << " builds the extension " << m[1] << " of " << it->second;
  }
}
}  // namespace task_test

namespace task_test {
namespace fs = std::filesystem;

TEST(TaskFile, LevelFolderNumberAndNameComeFromThePath) {
  const vinci::test::TempDir dir("task-file");
  fs::create_directories(dir.path() / "level3");
  std::ofstream(dir.path() / "level3" / "12_Fused_GELU.py") << "x = 1\n";
  const Task t = task_from_file(dir.path() / "level3" / "12_Fused_GELU.py");
  EXPECT_EQ(t.id, "level3/12_Fused_GELU");
  EXPECT_EQ(t.level, 3);
  EXPECT_EQ(t.number, 12);
  EXPECT_EQ(t.name, "Fused_GELU");
}

TEST(TaskFile, AFileOutsideALevelFolderIsItsStem) {
  const vinci::test::TempDir dir("task-file");
  std::ofstream(dir.path() / "my_kernel.py") << "x = 1\n";
  const Task t = task_from_file(dir.path() / "my_kernel.py");
  EXPECT_EQ(t.id, "my_kernel");
  EXPECT_EQ(t.level, 0);
  EXPECT_EQ(t.number, 0);
  EXPECT_EQ(t.name, "my_kernel");
}

TEST(TaskFile, NotAPythonFileIsAnErrorNamingIt) {
  const vinci::test::TempDir dir("task-file");
  std::ofstream(dir.path() / "task.txt") << "x = 1\n";
  for (const fs::path& bad : {dir.path() / "task.txt", dir.path() / "missing.py", dir.path()}) {
    try {
      task_from_file(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
    }
  }
}

TEST(TaskFile, LevelFolderNames) {
  EXPECT_EQ(level_of_folder("level1"), 1);
  EXPECT_EQ(level_of_folder("level12"), 12);
  EXPECT_EQ(level_of_folder("level"), -1);
  EXPECT_EQ(level_of_folder("levelA"), -1);
  EXPECT_EQ(level_of_folder("mylevel1"), -1);
  EXPECT_EQ(level_of_folder("level1_old"), -1);
}

// Needs python3 on PATH, as every evaluation does.
std::string check_error(const fs::path& file) {
  try {
    check_task_source(task_from_file(file), "python3");
  } catch (const vinci::core::SetupError& e) {
    return e.what();
  }
  return "";
}

TEST(TaskFile, TheSourceCheckNamesTheLineOrWhatIsMissing) {
  const vinci::test::TempDir dir("task-file");
  const auto good = dir.path() / "1_Good.py";
  std::ofstream(good) << "import torch\nclass Model:\n    pass\ndef get_inputs():\n    return []\n"
                         "get_init_inputs = lambda: []\n";
  EXPECT_EQ(check_error(good), "");
  const auto syntax = dir.path() / "2_Syntax.py";
  std::ofstream(syntax) << "class Model:\n    pass\ndef get_inputs(:\n";
  const std::string s = check_error(syntax);
  EXPECT_NE(s.find(syntax.string() + ":3: syntax error"), std::string::npos) << s;
  const auto missing = dir.path() / "3_Missing.py";
  std::ofstream(missing) << "class Model:\n    pass\n";
  const std::string m = check_error(missing);
  EXPECT_NE(m.find(missing.string() + ": it defines no get_inputs, get_init_inputs at top level"), std::string::npos)
      << m;
}

TEST(Task, AFlatIdIsOnePathComponent) {
  EXPECT_EQ(vinci::eval::flat_id("level1/1_Matmul"), "level1_1_Matmul");
  EXPECT_EQ(vinci::eval::flat_id("custom"), "custom");
}
}  // namespace task_test
