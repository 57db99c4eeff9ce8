// The procedural teacher (curriculum/teacher.h): the strategy menu per task, the wrong op each wrong
// solution computes, and one Triton file written out in full for a hand-made task.
#include "curriculum/teacher.h"

#include <gtest/gtest.h>

#include <map>

#include "core/files.h"
#include "curriculum/task_source.h"
#include "support/temp_dir.h"

namespace teacher_test {
using namespace vinci::curriculum;

std::vector<std::string> names(const std::vector<Strategy>& strategies) {
  std::vector<std::string> out;
  for (const auto& s : strategies) out.push_back(s.name);
  return out;
}

TEST(Teacher, TheMenuFollowsTheTask) {
  TaskSpec one;
  one.chain = {{"relu", 0}};
  EXPECT_EQ(names(teacher_strategies(one)),
            (std::vector<std::string>{"fused_b1024_w4", "fused_b4096_w8", "fused_b256_w2", "wrong_op", "off_by_one"}));
  TaskSpec two = one;
  two.chain.push_back({"scale", 2});
  EXPECT_EQ(names(teacher_strategies(two))[3], "per_op") << "a chain of two can launch per op";
  TaskSpec rows;
  rows.family = Family::rowwise;
  rows.kind = "softmax";
  rows.cols = 4096;
  EXPECT_EQ(names(teacher_strategies(rows)),
            (std::vector<std::string>{"row_block_w4", "row_block_w8", "wrong_op", "off_by_one"}));
  rows.cols = 1024;
  rows.chain = {{"gelu", 0}};
  EXPECT_EQ(names(teacher_strategies(rows)),
            (std::vector<std::string>{"row_block_w4", "row_block_w8", "rows4_w4", "per_op", "wrong_op", "off_by_one"}));
  for (const auto& s : teacher_strategies(rows))
    EXPECT_EQ(s.defect != Defect::none, s.name == "wrong_op" || s.name == "off_by_one") << s.name;
}

TEST(Teacher, LongRowsAreLoopedOverInChunksFirst) {
  TaskSpec rows;
  rows.family = Family::rowwise;
  rows.kind = "layer_norm";
  rows.affine = "scale";
  rows.cols = 65536;
  const auto menu = teacher_strategies(rows);
  EXPECT_EQ(names(menu),
            (std::vector<std::string>{"looped_c4096_w8", "looped_c2048_w4", "row_tile_w8", "wrong_op", "off_by_one"}));
  EXPECT_EQ(menu[0].chunk, 4096);
  EXPECT_EQ(menu[2].chunk, 0) << "the naive strategy: the whole row as one tile";
  EXPECT_EQ(menu[4].chunk, 4096) << "the wrong ones are looped too";
  EXPECT_EQ(describe_strategy(rows, menu[0]),
            "one fused Triton kernel, one row per program looped over in 4096-column chunks with Welford's running "
            "mean and variance, then a second pass, 8 warps");
  const std::string file = triton_solution(rows, menu[0]);
  for (const char* line :
       {"    for start in range(0, n_cols, CHUNK):\n", "        mean_i = mean_i + delta / tl.maximum(cnt_new, 1.0)\n",
        "        y = (v - mean) / tl.sqrt(var + eps)\n",
        "        y = y * tl.load(w_ptr + cols, mask=mask, other=0.0)\n",
        "        _rows[(n_rows,)](x, out, self.weight, x, n_rows, n_cols, self.eps, CHUNK=4096, "
        "num_warps=8)\n"})
    EXPECT_NE(file.find(line), std::string::npos) << line << "\nin\n" << file;
  EXPECT_NE(triton_solution(rows, menu[4]).find("        mask = cols < n_cols - 1\n"), std::string::npos);
  rows.kind = "softmax";
  rows.affine = "none";
  EXPECT_NE(triton_solution(rows, menu[0]).find("        s_i = s_i * alpha + tl.where(mask, tl.exp(v - m_new), 0.0)\n"),
            std::string::npos);
  rows.cols = 8192;
  EXPECT_EQ(teacher_strategies(rows).front().name, "row_block_w4") << "rows of one tile keep their menu";
}

// Short rows: tiles of several rows first (about 2048 and 4096 values a program), a program a row
// last among the correct ones, and the wrong ones tiled like the first.
TEST(Teacher, ShortRowsAreTiledSeveralRowsAProgramFirst) {
  TaskSpec rows;
  rows.family = Family::rowwise;
  rows.kind = "softmax";
  rows.chain = {{"gelu", 0}};
  rows.cols = 64;
  const auto menu = teacher_strategies(rows);
  EXPECT_EQ(names(menu),
            (std::vector<std::string>{"rows32_w4", "rows64_w8", "row_block_w4", "wrong_op", "off_by_one"}));
  EXPECT_EQ(menu[0].rows_per_program, 32);
  EXPECT_EQ(menu[1].rows_per_program, 64);
  EXPECT_EQ(menu[2].rows_per_program, 1) << "the naive strategy: a program a row";
  EXPECT_EQ(menu[4].rows_per_program, 32) << "the wrong ones are tiled too";
  EXPECT_EQ(describe_strategy(rows, menu[0]), "one fused Triton kernel, 32 rows per program, 4 warps");
  const std::string file = triton_solution(rows, menu[0]);
  EXPECT_NE(file.find("        _rows[(triton.cdiv(n_rows, 32),)](x, out, x, x, n_rows, n_cols, 0.0, R=32, "
                      "BLOCK=triton.next_power_of_2(n_cols), num_warps=4)\n"),
            std::string::npos)
      << file;
  rows.cols = 17;  // the next power of two, 32, makes the tile: 64 rows of it
  EXPECT_EQ(teacher_strategies(rows).front().name, "rows64_w4");
  rows.cols = 65;
  EXPECT_EQ(teacher_strategies(rows).front().name, "row_block_w4") << "rows past 64 values keep their menu";
}

// A Linear layer with an epilogue: the epilogue applied before the one store first, a second kernel
// over the stored output last; fp32 products (no TF32) and nn.Linear's own parameters.
TEST(Teacher, AMatmulAppliesItsEpilogueBeforeTheStoreFirst) {
  TaskSpec mm;
  mm.family = Family::matmul;
  mm.chain = {{"gelu", 0}, {"scale", 1.5}};
  mm.rows = 4096;
  mm.cols = 1024;
  mm.inner = 128;
  const auto menu = teacher_strategies(mm);
  EXPECT_EQ(names(menu),
            (std::vector<std::string>{"fused_epilogue_t128_w8_tf32x3", "fused_epilogue_t64_w4",
                                      "fused_epilogue_t128_w8", "epilogue_kernel", "wrong_op", "off_by_one"}));
  EXPECT_EQ(describe_strategy(mm, menu[1]),
            "one Triton kernel, 64x64 output tiles stepping 32 along the inner dimension, the bias and epilogue "
            "applied to the accumulator before its one store, 4 warps");
  EXPECT_EQ(describe_strategy(mm, menu[0]),
            "one Triton kernel, 128x128 output tiles stepping 32 along the inner dimension in three TF32 products of "
            "each operand's high and low halves, the bias and epilogue applied to the accumulator before its one "
            "store, 8 warps");
  EXPECT_NE(triton_solution(mm, menu[0]).find("input_precision=\"tf32x3\""), std::string::npos);
  const std::string fused = triton_solution(mm, menu[1]);
  for (const char* line :
       {"        acc = tl.dot(a, w, acc, input_precision=\"ieee\")\n",
        "        v = v + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]\n", "        v = v * 1.5\n",
        "        self.linear = nn.Linear(inner, cols)\n", "EPILOGUE=True, num_warps=4)\n"})
    EXPECT_NE(fused.find(line), std::string::npos) << line << "\nin\n" << fused;
  EXPECT_EQ(fused.find("_epilogue["), std::string::npos) << "one kernel";
  const std::string separate = triton_solution(mm, menu[3]);
  EXPECT_NE(separate.find("EPILOGUE=False"), std::string::npos);
  EXPECT_NE(separate.find("        _epilogue[(triton.cdiv(out.numel(), 1024),)]"), std::string::npos) << separate;
  EXPECT_NE(triton_solution(mm, menu[5]).find("(rk[None, :] < K - 1)"), std::string::npos) << "the bound off by one";
  EXPECT_NE(triton_solution(mm, menu[4]).find("torch.sigmoid(linear(x)) * 1.5"), std::string::npos)
      << "the wrong op: gelu swapped for its neighbour";
}

TEST(Teacher, AWrongOpSwapsTheFirstOpOrTheRowOp) {
  TaskSpec s;
  s.chain = {{"sigmoid", 0}, {"scale", 2}};
  EXPECT_EQ(wrong_op_spec(s).tokens(), (std::vector<std::string>{"tanh", "scale"}));
  s.chain = {{"neg", 0}};
  EXPECT_EQ(wrong_op_spec(s).tokens(), std::vector<std::string>{"relu"}) << "scale and shift need a constant";
  TaskSpec r;
  r.family = Family::rowwise;
  for (auto [kind, swapped] : std::vector<std::pair<std::string, std::string>>{
           {"sum", "mean"}, {"max", "sum"}, {"softmax", "log_softmax"}, {"rms_norm", "layer_norm"}}) {
    r.kind = kind;
    EXPECT_EQ(wrong_op_spec(r).kind, swapped);
  }
}

TEST(Teacher, AFusedChainInFull) {
  TaskSpec s;
  s.chain = {{"relu", 0}, {"shift", 0.5}};
  Strategy st{"fused_b1024_w4", true, 1024, 4};
  EXPECT_EQ(triton_solution(s, st),
            "\"\"\"torch.relu(x) + 0.5 with one fused Triton kernel, 1024-element blocks, 4 warps.\"\"\"\n"
            "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n\n"
            "@triton.jit\ndef _chain(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
            "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offs < n\n"
            "    v = tl.load(x_ptr + offs, mask=mask, other=0.0)\n"
            "    v = tl.maximum(v, 0.0)\n    v = v + 0.5\n"
            "    tl.store(out_ptr + offs, v, mask=mask)\n\n\n"
            "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n"
            "    def forward(self, x):\n        x = x.contiguous()\n        out = torch.empty_like(x)\n"
            "        _chain[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024, num_warps=4)\n"
            "        return out\n");
  st.defect = Defect::off_by_one;
  EXPECT_NE(triton_solution(s, st).find("    mask = offs < n - 1\n"), std::string::npos);
}

TEST(Teacher, ARowNormKeepsTheModelsParametersAndBounds) {
  TaskSpec s;
  s.family = Family::rowwise;
  s.kind = "layer_norm";
  s.affine = "scale_bias";
  s.cols = 1024;
  const std::string src = triton_solution(s, teacher_strategies(s).front());
  for (const char* line :
       {"    def __init__(self, cols, eps):\n", "        self.weight = nn.Parameter(torch.rand(cols) + 0.5)\n",
        "        self.bias = nn.Parameter(torch.randn(cols))\n", "    mask = (rows < n_rows) & (cols < n_cols)\n",
        "    y = y + tl.load(b_ptr + cols, mask=cols < n_cols, other=0.0)\n",
        "(x, out, self.weight, self.bias, n_rows, n_cols, self.eps, R=1, "})
    EXPECT_NE(src.find(line), std::string::npos) << line << "\n" << src;
  Strategy off = teacher_strategies(s).back();
  ASSERT_EQ(off.defect, Defect::off_by_one);
  EXPECT_NE(triton_solution(s, off).find("(cols < n_cols - 1)"), std::string::npos);
}

TEST(Teacher, WritesTheChosenSplitOneFolderPerStrategyWithItsListing) {
  vinci::test::TempDir dir("teacher");
  CurriculumTask train{.spec = {}, .held_out = false, .id = "level1/1_Relu"};
  train.spec.chain = {{"relu", 0}};
  CurriculumTask heldout{.spec = {}, .held_out = true, .id = "level1/1_Sigmoid"};
  heldout.spec.chain = {{"sigmoid", 0}};
  const auto out = dir.path() / "teach";
  EXPECT_EQ(write_teacher_solutions({train, heldout}, SplitChoice::heldout, out), 5u);
  const auto lines = vinci::core::read_jsonl_lines(out / "teacher.jsonl");
  ASSERT_EQ(lines.size(), 5u);
  size_t correct = 0;
  for (const auto& line : lines) {
    const auto r = nlohmann::json::parse(line.text);
    EXPECT_EQ(r["id"], "level1/1_Sigmoid");
    EXPECT_EQ(r["split"], "heldout");
    EXPECT_EQ(r["file"], "heldout/" + r["strategy"].get<std::string>() + "/level1/1_Sigmoid.py");
    correct += r["correct"].get<bool>();
    Strategy s;
    for (const auto& candidate : teacher_strategies(heldout.spec))
      if (candidate.name == r["strategy"].get<std::string>()) s = candidate;
    EXPECT_EQ(vinci::core::read_file(out / r["file"].get<std::string>()), triton_solution(heldout.spec, s));
  }
  EXPECT_EQ(correct, 3u) << "three fused block sizes are right; wrong_op and off_by_one are not";
  EXPECT_FALSE(std::filesystem::exists(out / "train"));
  EXPECT_EQ(write_teacher_solutions({train, heldout}, SplitChoice::both, dir.path() / "both"), 10u);
}

TEST(Teacher, AStrategyIsDescribedByWhatItDoesNotByItsName) {
  TaskSpec chain;
  chain.chain = {{"relu", 0}, {"scale", 2}};
  TaskSpec rows;
  rows.family = Family::rowwise;
  rows.kind = "softmax";
  rows.cols = 1024;
  rows.chain = {{"gelu", 0}};
  std::map<std::string, std::string> said;
  for (const auto* spec : {&chain, &rows})
    for (const auto& s : teacher_strategies(*spec))
      said[s.name + (spec == &rows ? "/rows" : "")] = describe_strategy(*spec, s);
  EXPECT_EQ(said["fused_b4096_w8"], "one fused Triton kernel, 4096-element blocks, 8 warps");
  EXPECT_EQ(said["per_op"], "one Triton kernel launch per op, 1024-element blocks, 4 warps");
  EXPECT_EQ(said["row_block_w8/rows"], "one fused Triton kernel, one row per program, 8 warps");
  EXPECT_EQ(said["rows4_w4/rows"], "one fused Triton kernel, 4 rows per program, 4 warps");
  EXPECT_EQ(said["per_op/rows"],
            "one Triton kernel launch per prologue op, then the row op with one row per program, 4 warps");
  // A wrong solution reads like the right one it was made from.
  EXPECT_EQ(said["off_by_one"], said["fused_b1024_w4"]);
  EXPECT_EQ(said["wrong_op/rows"], said["row_block_w4/rows"]);
}

}  // namespace teacher_test
