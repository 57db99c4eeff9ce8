// Task suites: folders of KernelBench-format problem files.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace vinci::eval {

struct Task {
  std::string id;    // "level1/1_Matmul": the suite-relative path without ".py"
  int level = 0;     // from the levelN folder (0 when there is none)
  int number = 0;    // the leading integer of the file name
  std::string name;  // the rest of the file name: "Matmul"
  std::filesystem::path file;
};

struct Suite {
  std::filesystem::path root;
  std::vector<Task> tasks;           // sorted by level, then number
  std::vector<std::string> skipped;  // files that are not problem files, with why
};

// Loads KernelBench's layout as it is: ROOT/levelN/<number>_<Name>.py. ROOT may also be a
// single levelN folder. Other folders (e.g. solutions/) are ignored. Throws std::runtime_error
// naming the folder when it does not exist or holds no problem file.
Suite load_suite(const std::filesystem::path& root);

// One problem file outside a suite (vinci optimize TASK.py): its id is levelN/<stem> when it sits
// in a levelN folder, else <stem>; number and name come from a <number>_<Name>.py file name when it
// has one. Throws std::runtime_error naming the file when it is not a readable .py file.
Task task_from_file(const std::filesystem::path& file);

// Parses the task file with python (a path or a name on PATH) without running it, and checks that it
// defines class Model, get_inputs and get_init_inputs at top level. Throws core::SetupError naming
// the file, the line and what is wrong, so a command stops before any agent or worker starts.
void check_task_source(const Task& task, const std::string& python);

// The id as one path component ("level1/1_Matmul" -> "level1_1_Matmul"), for the files and folders
// named after a task.
std::string flat_id(const std::string& task_id);

// "levelN" -> N, otherwise -1.
int level_of_folder(const std::string& folder);

}  // namespace vinci::eval
