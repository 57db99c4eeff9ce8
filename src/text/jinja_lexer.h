// Templates into tokens, following jinja2's lexer.py rule for rule.
//
// Templates into tokens, following jinja2's lexer.py rule for rule: whitespace control
// (trim_blocks, lstrip_blocks, "-" and "+" markers) is where a re-implementation silently drifts
// from Python's output.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vinci::text::jinja {

struct Token {
  enum class Type {
    text,
    variable_begin,
    variable_end,
    block_begin,
    block_end,
    name,
    string,
    integer,
    floating,
    op,
    eof
  };
  Type type;
  std::string value;  // text, name, operator, or the decoded string literal
  int line;
  int64_t integer = 0;
  double floating = 0;
};

// How an error message names the token: "'{{'", "a string", "end of template".
std::string describe(const Token& t);

// The template's tokens, ending with eof; throws Error naming the line for invalid UTF-8,
// unclosed tags and malformed literals.
std::vector<Token> lex(std::string_view source);

}  // namespace vinci::text::jinja
