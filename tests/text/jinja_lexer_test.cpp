// The template lexer on its own: token kinds, decoded literals, lines, and jinja2's whitespace
// control as transformers configures it (trim_blocks, lstrip_blocks, '-' and '+' markers).
// Expected texts are what jinja2 3.1 renders for the same source with those settings.
#include "text/jinja_lexer.h"

#include <gtest/gtest.h>

#include "text/jinja.h"

namespace jinja_lexer_test {
using namespace vinci::text::jinja;
using Type = Token::Type;

// The template text between the tags, concatenated: what the tags leave of it.
std::string texts(std::string_view source) {
  std::string out;
  for (const auto& t : lex(source))
    if (t.type == Type::text) out += t.value;
  return out;
}

std::vector<Type> types(std::string_view source) {
  std::vector<Type> out;
  for (const auto& t : lex(source)) out.push_back(t.type);
  return out;
}

int error_line(std::string_view source, std::string* message = nullptr) {
  try {
    lex(source);
  } catch (const Error& e) {
    if (message) *message = e.message();
    return e.line();
  }
  return -1;
}

TEST(JinjaLexer, TokensOfAnExpression) {
  const auto tokens = lex("a{{ x.y + 2 * 1.5 ~ 'q' }}");
  ASSERT_EQ(tokens.size(), 13u);  // with eof
  EXPECT_EQ(tokens[0].type, Type::text);
  EXPECT_EQ(tokens[1].type, Type::variable_begin);
  EXPECT_EQ(tokens[2].type, Type::name);
  EXPECT_EQ(tokens[2].value, "x");
  EXPECT_EQ(tokens[3].value, ".");
  EXPECT_EQ(tokens[5].value, "+");
  EXPECT_EQ(tokens[6].type, Type::integer);
  EXPECT_EQ(tokens[6].integer, 2);
  EXPECT_EQ(tokens[8].type, Type::floating);
  EXPECT_EQ(tokens[8].floating, 1.5);
  EXPECT_EQ(tokens[9].value, "~");
  EXPECT_EQ(tokens[10].type, Type::string);
  EXPECT_EQ(tokens[10].value, "q");
  EXPECT_EQ(tokens[11].type, Type::variable_end);
  EXPECT_EQ(lex("").back().type, Type::eof);
}

TEST(JinjaLexer, StringEscapesDecodeAsPython) {
  const auto tokens = lex(R"({{ "a\nb\t\x41\u00e9\U0001F600\\\"" }})");
  ASSERT_EQ(tokens[1].type, Type::string);
  EXPECT_EQ(tokens[1].value, "a\nb\tA\xC3\xA9\xF0\x9F\x98\x80\\\"");
}

TEST(JinjaLexer, CommentsLeaveNothing) {
  EXPECT_EQ(types("{# a comment {{ x }} #}"), (std::vector<Type>{Type::eof}));
  EXPECT_EQ(texts("a{# c #}b"), "ab");
}

TEST(JinjaLexer, TrimBlocksDropsTheNewlineAfterABlockTag) {
  EXPECT_EQ(texts("{% if x %}\nA\n{% endif %}\n"), "A\n");
  // Not after a variable tag.
  EXPECT_EQ(texts("{{ x }}\nA"), "\nA");
}

TEST(JinjaLexer, LstripBlocksDropsIndentBeforeABlockTag) {
  EXPECT_EQ(texts("  {% if x %}\n  A\n  {% endif %}\n"), "  A\n");
  // Only whitespace from the line start: text before the tag on its line keeps its spaces.
  EXPECT_EQ(texts("B  {% if x %}"), "B  ");
  // '+' turns lstrip off for the tag.
  EXPECT_EQ(texts("  {%+ if x %}"), "  ");
}

TEST(JinjaLexer, MinusStripsAllWhitespaceOnItsSide) {
  EXPECT_EQ(texts("A \n {{- x -}} \n B"), "AB");
  EXPECT_EQ(texts("A \n\n{%- if x %}B"), "AB");
}

TEST(JinjaLexer, LinesCountAcrossTextAndTags) {
  const auto tokens = lex("a\nb\n{{\nx }}");
  EXPECT_EQ(tokens[0].line, 1);
  EXPECT_EQ(tokens[1].line, 3);  // '{{'
  EXPECT_EQ(tokens[2].line, 4);  // x
}

TEST(JinjaLexer, ErrorsNameTheLine) {
  std::string m;
  EXPECT_EQ(error_line("a\n{# open", &m), 2);
  EXPECT_EQ(m, "missing end of comment tag '#}'");
  EXPECT_EQ(error_line("a\nb\n{{ x", &m), 3);
  EXPECT_NE(m.find("missing its closing"), std::string::npos) << m;
  EXPECT_EQ(error_line("{{ 'abc }}", &m), 1);
  EXPECT_EQ(m, "unterminated string literal");
  EXPECT_EQ(error_line("\n{{ x ) }}", &m), 2);
  EXPECT_EQ(m, "unexpected ')'");
  EXPECT_EQ(error_line("{{ (x] }}", &m), 1);
  EXPECT_EQ(m, "unexpected ']', expected ')'");
  EXPECT_EQ(error_line("{{ 99999999999999999999 }}", &m), 1);
  EXPECT_NE(m.find("does not fit in 64 bits"), std::string::npos) << m;
  EXPECT_EQ(error_line("ok\xFF", &m), 1);
  EXPECT_EQ(m, "the template is not valid UTF-8");
}

TEST(JinjaLexer, TokensDescribeThemselvesForErrors) {
  const auto tokens = lex("{{ x 'y' 3 }}");
  EXPECT_EQ(describe(tokens[0]), "'{{'");
  EXPECT_EQ(describe(tokens[1]), "'x'");
  EXPECT_EQ(describe(tokens[2]), "a string");
  EXPECT_EQ(describe(tokens[3]), "a number");
  EXPECT_EQ(describe(tokens.back()), "end of template");
}
}  // namespace jinja_lexer_test
