// The curriculum's tasks drawn from a seed: elementwise, row-wise and matmul tasks at random shapes.
//
// The curriculum's tasks, drawn from a seed: elementwise chains of 1 to max_chain ops, row-wise
// reductions and normalizations with a short elementwise prologue, and Linear layers followed by an
// elementwise epilogue, at random shapes. The held-out
// tasks compose ops in ways no training task does (composition_split.h), from ops training has.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "curriculum/task_spec.h"

namespace vinci::curriculum {

struct CurriculumConfig {
  uint64_t seed = 0;
  int elementwise_tasks = 40;  // per family, both splits together
  int rowwise_tasks = 40;
  double heldout_share = 0.25;  // of each family's tasks
  double pair_share = 0.2;      // of ordered token pairs held out
  int max_chain = 6;
  int max_prologue = 2;
  // Large enough that a kernel's own time, not its launch, decides its speed on a GPU: at 2048 x 256
  // floats Triton's launch path made every teacher strategy slower than eager on an H200 (0.05-0.13 ms
  // tasks). CPU runs shrink them with --scale.
  std::vector<int64_t> rows = {4096, 8192, 16384};
  std::vector<int64_t> cols = {1024, 2048, 4096, 8192};
  // Row-wise tasks over rows longer than one tile (TaskSpec::long_rows), both splits together, and
  // their shapes: few rows, so that a row a program fills the GPU only with a fast loop over it.
  int long_row_tasks = 0;
  std::vector<int64_t> long_rows = {256, 512, 1024};
  std::vector<int64_t> long_cols = {32768, 65536, 131072};
  // Row-wise tasks over short rows (TaskSpec::short_rows), both splits together, and their shapes:
  // many rows, so that a program a row is millions of tiny programs. On an H200 (docs/learning.md,
  // 2026-12-01) 65,536-262,144 rows took eager 27-52 us, launch-bound, and tiling rows lost at 16 and
  // 32 columns; at 1-4 million rows it won 1.6-36x.
  int short_row_tasks = 0;
  std::vector<int64_t> short_rows = {1048576, 2097152, 4194304};
  std::vector<int64_t> short_cols = {16, 32, 64};
  // Linear layers with an elementwise epilogue of 1 to max_epilogue ops, both splits together, and
  // their shapes: a short inner dimension, so that the output's extra passes in memory are a large
  // share of eager's time, which a kernel that applies the epilogue before its one store saves.
  // Below 16,384 rows and an inner size of 256 eager took under 0.1-0.6 ms on an H200, where a Triton
  // launch's own cost is a large share.
  int matmul_tasks = 0;
  int max_epilogue = 3;
  std::vector<int64_t> matmul_rows = {16384, 32768};
  std::vector<int64_t> matmul_cols = {1024, 2048};
  std::vector<int64_t> matmul_inner = {256, 512};
};

struct CurriculumTask {
  TaskSpec spec;
  bool held_out = false;
  std::string id;  // "level2/3_ReluScaleTanh", within its split's suite
};

// Throws core::SetupError for a config it cannot meet (naming the option), e.g. more tasks than the
// vocabulary has compositions.
std::vector<CurriculumTask> generate_curriculum(const CurriculumConfig& config);

// Writes out/train/levelN/*.py, out/heldout/levelN/*.py and out/curriculum.jsonl, all or nothing:
// into a fresh folder beside out, renamed into place. Refuses an out that exists (core::SetupError).
void write_curriculum(const std::vector<CurriculumTask>& tasks, const std::filesystem::path& out);

}  // namespace vinci::curriculum
