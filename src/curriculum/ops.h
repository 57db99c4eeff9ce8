// The curriculum's vocabulary: elementwise and row-wise ops, each with its PyTorch statement.
//
// The curriculum's vocabulary: the elementwise ops a chain is made of, and the row-wise reductions
// and normalizations, each with the PyTorch statement the reference model runs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vinci::curriculum {

struct ElementwiseOp {
  std::string_view name;        // the composition token: "relu", "scale", ...
  std::string_view camel;       // in task names: "Relu", "Scale"
  std::string_view torch_expr;  // over the running value v; "{c}" is the op's constant
  bool takes_constant = false;  // scale and shift: a constant drawn per task
};

// The chain vocabulary, in a fixed order (the order is part of what a seed reproduces).
const std::vector<ElementwiseOp>& elementwise_ops();
const ElementwiseOp& elementwise_op(std::string_view name);  // throws std::invalid_argument naming it

struct RowKind {
  std::string_view name;  // "softmax", "rms_norm", ...
  std::string_view camel;
  std::string_view torch_statement;  // assigns v from v (self.eps where a norm needs it)
  bool reduces = false;              // the output loses the last dimension
  bool takes_affine = false;         // rms_norm and layer_norm: a learned scale, and a bias
};

const std::vector<RowKind>& row_kinds();
const RowKind& row_kind(std::string_view name);  // throws std::invalid_argument naming it

// What follows a normalization: nothing, a learned per-column scale, or a scale and a bias.
inline constexpr std::string_view kAffines[] = {"none", "scale", "scale_bias"};

}  // namespace vinci::curriculum
