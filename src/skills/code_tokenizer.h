// The tokenizer of skill retrieval, aware of code: identifiers kept whole and split.
//
// The tokenizer of skill retrieval, aware of code: identifiers are kept whole *and* split into
// their parts, so "__shfl_down_sync" matches a query for it verbatim and a query for "shuffle down";
// "float4" matches "float4" and "float"; "sm_90" matches "sm_90" and "sm".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vinci::skills {

// Words are maximal runs of ASCII letters, digits, '_' and non-ASCII bytes; everything else
// (space, punctuation, '-', '/', '.') separates them. A word splits further on '_', on camelCase
// boundaries (camelCase → camel case, HTTPServer → http server) and between letters and digits.
// Tokens are ASCII-lowercased; a word that splits is emitted whole before its parts.
// tests/skills/make_bm25_golden.py implements the same rules in Python.
std::vector<std::string> tokenize_code_text(std::string_view text);

}  // namespace vinci::skills
