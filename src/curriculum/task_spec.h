// One curriculum task as data: its family, its composition and its shape. The Python file, the
// manifest line and the split all follow from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vinci::curriculum {

// elementwise: a chain of ops; rowwise: a row op after a short chain; matmul: a Linear layer (x times
// the weight's transpose, plus the bias) and a chain after it, its epilogue.
enum class Family { elementwise, rowwise, matmul };
std::string_view to_string(Family f);

// Columns beyond which a row-wise task is one of long rows (TaskSpec::long_rows).
inline constexpr int64_t kLongRowCols = 16384;
// Columns up to which a row-wise task is one of short rows (TaskSpec::short_rows).
inline constexpr int64_t kShortRowCols = 64;

struct OpStep {
  std::string op;       // an elementwise op's name
  double constant = 0;  // scale's factor or shift's offset; 0 for the others
};

struct TaskSpec {
  Family family = Family::elementwise;
  std::vector<OpStep> chain;    // elementwise: the chain; rowwise: the prologue; matmul: the epilogue
  std::string kind;             // rowwise: the row op (ops.h row_kinds)
  std::string affine = "none";  // rowwise normalizations: none, scale, scale_bias
  int64_t rows = 0, cols = 0;   // matmul: the output's (the input's rows, the Linear's out features)
  int64_t inner = 0;            // matmul: the Linear's in features; 0 otherwise

  // Rows too long for one tile a program (a row-wise task wider than kLongRowCols): only a kernel
  // that loops over a row in chunks, with an online reduction, is fast there.
  bool long_rows() const;
  // Rows of at most kShortRowCols values (a row-wise task): a program a row leaves most of its lanes
  // idle and the GPU running hundreds of thousands of tiny programs; a kernel fast there tiles
  // several rows a program.
  bool short_rows() const;
  // "elementwise", "rowwise", "long-rows" or "short-rows": the family a curriculum counts it in.
  std::string family_name() const;

  // The composition as tokens in order: "long_rows" or "short_rows" where the rows are, "linear"
  // before a matmul's epilogue, the chain's op names, then (rowwise) the kind and, after a
  // normalization, "affine_<affine>". Constants and shapes are not part of it otherwise.
  std::vector<std::string> tokens() const;
  std::string camel_name() const;  // "ReluScaleTanh", "GeluSoftmax", "LongRowsSoftmax", "LinearGeluScale"
  int level() const;               // 1: one op; 2: a fusion of several
};

}  // namespace vinci::curriculum
