// One curriculum task as data: its family, its composition and its shape. The Python file, the
// manifest line and the split all follow from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vinci::curriculum {

enum class Family { elementwise, rowwise };
std::string_view to_string(Family f);

struct OpStep {
  std::string op;       // an elementwise op's name
  double constant = 0;  // scale's factor or shift's offset; 0 for the others
};

struct TaskSpec {
  Family family = Family::elementwise;
  std::vector<OpStep> chain;    // elementwise: the chain; rowwise: the prologue before the row op
  std::string kind;             // rowwise: the row op (ops.h row_kinds)
  std::string affine = "none";  // rowwise normalizations: none, scale, scale_bias
  int64_t rows = 0, cols = 0;

  // The composition as tokens in order: the chain's op names, then (rowwise) the kind and, after a
  // normalization, "affine_<affine>". Constants and shapes are not part of it.
  std::vector<std::string> tokens() const;
  std::string camel_name() const;  // "ReluScaleTanh", "GeluSoftmax", "RmsNormScaleBias"
  int level() const;               // 1: one op; 2: a fusion of several
};

}  // namespace vinci::curriculum
