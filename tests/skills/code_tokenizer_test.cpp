#include "skills/code_tokenizer.h"

#include <gtest/gtest.h>

namespace code_tokenizer_test {

using vinci::skills::tokenize_code_text;
using Tokens = std::vector<std::string>;

TEST(CodeTokenizer, LowercasesAndSplitsOnPunctuation) {
  EXPECT_EQ(tokenize_code_text("Tensor Cores, (fast)!"), (Tokens{"tensor", "cores", "fast"}));
  EXPECT_EQ(tokenize_code_text("load-inline/x"), (Tokens{"load", "inline", "x"}));
  EXPECT_EQ(tokenize_code_text(""), Tokens{});
  EXPECT_EQ(tokenize_code_text("  --- ///  "), Tokens{});
}

TEST(CodeTokenizer, KeepsCudaIdentifiersWholeAndSplit) {
  EXPECT_EQ(tokenize_code_text("__shfl_down_sync"), (Tokens{"__shfl_down_sync", "shfl", "down", "sync"}));
  EXPECT_EQ(tokenize_code_text("float4"), (Tokens{"float4", "float", "4"}));
  EXPECT_EQ(tokenize_code_text("sm_90"), (Tokens{"sm_90", "sm", "90"}));
  EXPECT_EQ(tokenize_code_text("__syncthreads()"), (Tokens{"__syncthreads", "syncthreads"}));
  EXPECT_EQ(tokenize_code_text("___"), Tokens{});
}

TEST(CodeTokenizer, SplitsCamelCaseAndAcronyms) {
  EXPECT_EQ(tokenize_code_text("camelCase"), (Tokens{"camelcase", "camel", "case"}));
  EXPECT_EQ(tokenize_code_text("HTTPServer"), (Tokens{"httpserver", "http", "server"}));
  EXPECT_EQ(tokenize_code_text("blockDim.x"), (Tokens{"blockdim", "block", "dim", "x"}));
  EXPECT_EQ(tokenize_code_text("getTileSize"), (Tokens{"gettilesize", "get", "tile", "size"}));
  EXPECT_EQ(tokenize_code_text("TMA"), (Tokens{"tma"}));
  EXPECT_EQ(tokenize_code_text("m16n8k16"), (Tokens{"m16n8k16", "m", "16", "n", "8", "k", "16"}));
  EXPECT_EQ(tokenize_code_text("BLOCK_M"), (Tokens{"block_m", "block", "m"}));
}

TEST(CodeTokenizer, NonAsciiBytesFormTheirOwnParts) {
  // "café": the ASCII run and the non-ASCII run split, and only ASCII is lowercased.
  EXPECT_EQ(tokenize_code_text("Café"), (Tokens{"café", "caf", "é"}));
  EXPECT_EQ(tokenize_code_text("Ü"), (Tokens{"Ü"}));
}
}  // namespace code_tokenizer_test
