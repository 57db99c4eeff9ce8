// The procedural teacher: Triton solutions of a curriculum task in strategies of differing speed.
//
// The procedural teacher (issue 16, item 2): Triton solutions of a curriculum task in strategies
// whose speed differs on a GPU (one fused kernel or one launch per op, block sizes and warps, a
// block per row or several rows a program), and wrong ones (a bound off by one, the wrong op), for
// the SFT data and as the reference points of what a trained policy reaches.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "curriculum/generator.h"
#include "curriculum/task_spec.h"

namespace vinci::curriculum {

enum class Defect { none, off_by_one, wrong_op };

struct Strategy {
  std::string name;   // a folder name: "fused_b1024_w4", "per_op", "rows4_w4", "off_by_one", ...
  bool fused = true;  // the whole composition in one kernel, or one launch per elementwise op
  int block = 1024;   // elementwise: elements per program
  int num_warps = 4;
  int rows_per_program = 1;  // row-wise: 1 is a block per row; more is a warp or so per row
  Defect defect = Defect::none;
  // Row-wise: 0 loads a row as one tile; more loops over it in chunks of this many columns, with an
  // online reduction (a running max and rescaled sum for softmax, Welford's for layer norm), then a
  // second pass for the outputs: the strategy of long rows.
  int chunk = 0;
  // Matmul: the output tile's side (0 elsewhere) and the step along the inner dimension; with fused
  // false the bias and epilogue run in a second kernel over the stored output.
  int tile = 0;
  int tile_k = 32;
  // Matmul: products as three TF32 tensor-core products of each operand's high and low halves
  // (Triton's "tf32x3"), about fp32's accuracy at tensor-core speed; false is fp32 FMA ("ieee").
  bool split_tf32 = false;
};

// The strategies the teacher writes for this task, correct ones first.
std::vector<Strategy> teacher_strategies(const TaskSpec& spec);

// What a strategy does, as its files and the teacher's "Strategy:" lines say it: "one fused Triton
// kernel, 1024-element blocks, 4 warps", "one fused Triton kernel, one row per program, 8 warps".
// Never whether it is wrong.
std::string describe_strategy(const TaskSpec& spec, const Strategy& strategy);

// A KernelBench candidate file (ModelNew with Triton kernels) for the task in the strategy.
std::string triton_solution(const TaskSpec& spec, const Strategy& strategy);

// The spec a wrong_op solution computes instead: its first op, or (no chain) its row op, swapped for
// a neighbour of the same shape.
TaskSpec wrong_op_spec(const TaskSpec& spec);

enum class SplitChoice { train, heldout, both };

// Writes every strategy's solution of the chosen split's tasks as out/<split>/<strategy>/<id>.py,
// one candidates folder per split and strategy for `vinci eval --candidates`, and out/teacher.jsonl
// listing each file with its task, split, strategy and whether it is correct. All or nothing, into a
// folder that must not exist (core::write_new_folder). Returns the number of solutions written.
size_t write_teacher_solutions(const std::vector<CurriculumTask>& tasks, SplitChoice split,
                               const std::filesystem::path& out);

}  // namespace vinci::curriculum
