// The parser's refusals: syntax errors and constructs outside the subset are reported when the
// template is parsed, with the line and the construct, never rendered approximately. (Rendering
// itself is tested in jinja_test.cpp.)
#include "text/jinja_parser.h"

#include <gtest/gtest.h>

#include "text/jinja.h"

namespace jinja_parser_test {
using vinci::text::jinja::Error;
using vinci::text::jinja::Template;

Error parse_error(const std::string& source) {
  try {
    Template::parse(source);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "parsed without error: " << source;
  return Error(0, "");
}

TEST(JinjaErrors, UnsupportedTagNamesLineAndConstruct) {
  Error e = parse_error("line one\n{% if x %}\n{% macro m() %}{% endmacro %}\n{% endif %}");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(e.unsupported());
  EXPECT_NE(e.message().find("{% macro %}"), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()).rfind("line 3: ", 0), 0u) << e.what();
}

TEST(JinjaErrors, UnknownFilterAndTestAreRejectedAtParse) {
  Error f = parse_error("a\nb {{ x | wordwrap(3) }}");
  EXPECT_EQ(f.line(), 2);
  EXPECT_TRUE(f.unsupported());
  EXPECT_NE(f.message().find("filter 'wordwrap'"), std::string::npos) << f.what();
  Error t = parse_error("{% if x is escaped %}{% endif %}");
  EXPECT_NE(t.message().find("test 'escaped'"), std::string::npos) << t.what();
}

TEST(JinjaErrors, SyntaxErrorsNameTheLine) {
  Error unclosed = parse_error("{% for x in y %}\n{{ x }}\n");
  EXPECT_EQ(unclosed.line(), 1);
  EXPECT_NE(unclosed.message().find("endfor"), std::string::npos) << unclosed.what();
  EXPECT_FALSE(unclosed.unsupported());
  Error stray = parse_error("a\n\n{% endif %}");
  EXPECT_EQ(stray.line(), 3);
  Error bracket = parse_error("{{ (1 + 2 }}");
  EXPECT_NE(bracket.message().find("'}'"), std::string::npos) << bracket.what();
  Error unterminated = parse_error("{{ 'abc }}");
  EXPECT_NE(unterminated.message().find("unterminated string"), std::string::npos) << unterminated.what();
  Error loose_break = parse_error("{% break %}");
  EXPECT_NE(loose_break.message().find("outside a for loop"), std::string::npos) << loose_break.what();
}

TEST(JinjaParser, EveryUnsupportedTagIsRefusedAsUnsupported) {
  for (const char* source :
       {"{% include 'other.j2' %}", "{% import 'm.j2' as m %}", "{% extends 'base.j2' %}",
        "{% block body %}{% endblock %}", "{% raw %}x{% endraw %}", "{% call m() %}{% endcall %}"}) {
    const Error e = parse_error(source);
    EXPECT_TRUE(e.unsupported()) << source << ": " << e.what();
    EXPECT_EQ(e.line(), 1) << source;
  }
}

TEST(JinjaParser, MismatchedEndTagsNameTheLineOfTheStrayTag) {
  const Error e = parse_error("{% if x %}\n{% for y in z %}\n{% endif %}\n{% endfor %}");
  EXPECT_EQ(e.line(), 3) << e.what();
  EXPECT_FALSE(e.unsupported());
}

TEST(JinjaParser, AnExpressionMustEndWhereItsTagEnds) {
  const Error e = parse_error("\n{{ x y }}");
  EXPECT_EQ(e.line(), 2) << e.what();
  EXPECT_FALSE(e.unsupported());
  const Error empty = parse_error("{{ }}");
  EXPECT_EQ(empty.line(), 1) << empty.what();
}

TEST(JinjaParser, ParsingAloneRunsNothing) {
  // raise_exception and undefined names only fail when rendered.
  EXPECT_NO_THROW(vinci::text::jinja::parse_template("{{ raise_exception('no') }}{{ undefined_name.attr }}"));
  EXPECT_NO_THROW(vinci::text::jinja::parse_template(""));
}
}  // namespace jinja_parser_test
