// The Jinja subset against Jinja2 as transformers configures it. Each expected string below was
// written for the construct it tests and checked against transformers' own environment
// (transformers.utils.chat_template_utils._compile_jinja_template, jinja2 3.1.6) when written.
#include "text/jinja.h"

#include <gtest/gtest.h>

#include <ctime>
#include <string>
#include <thread>
#include <vector>

using vinci::text::jinja::Error;
using vinci::text::jinja::Template;

namespace jinja_test {

std::string render(const std::string& source, const std::string& variables = "{}") {
  return Template::parse(source).render(nlohmann::ordered_json::parse(variables));
}

struct Case {
  const char* name;
  const char* source;
  const char* variables;
  const char* expected;         // null when rendering must fail
  const char* error = nullptr;  // a part of the failure's message
};

const Case kCases[] = {
    {"PrintsScalarsAsPythonDoes",
     R"({{ none }}|{{ true }}|{{ false }}|{{ 42 }}|{{ -7 }}|{{ 1.0 }}|{{ 2.5 }}|{{ 1e-5 }}|{{ 0.0001 }}|{{ 1e16 }}|{{ 1e15 }}|{{ 1/3 }})",
     R"({})", R"(None|True|False|42|-7|1.0|2.5|1e-05|0.0001|1e+16|1000000000000000.0|0.3333333333333333)"},
    {"PrintsContainersAsPythonRepr",
     R"({{ [1, 'a', none, 2.5, {'k': 'v'}] }}|{{ (1, 2) }}|{{ ('a',) }}|{{ () }}|{{ {} }}|{{ ["it's", 'say "hi"', 'both\'"', '\n', 'é', '\x00', '\u200b'] }})",
     R"({})",
     R"([1, 'a', None, 2.5, {'k': 'v'}]|(1, 2)|('a',)|()|{}|["it's", 'say "hi"', 'both\'"', '\n', 'é', '\x00', '\u200b'])"},
    {"PrintsJsonVariables", R"({{ n }}|{{ f }}|{{ s }}|{{ b }}|{{ z }}|{{ l }}|{{ d }})",
     R"({"n": 3, "f": 0.5, "s": "x", "b": true, "z": null, "l": [1, "two"], "d": {"b": 1, "a": [true]}})",
     R"(3|0.5|x|True|None|[1, 'two']|{'b': 1, 'a': [True]})"},
    {"TrimBlocksAndLstripBlocks", "a\n  {% if true %}\n  b\n  {% endif %}\nc", R"({})", "a\n  b\nc"},
    {"LstripOnlyAtLineStart", R"(a  {% if true %}b{% endif %})", R"({})", R"(a  b)"},
    {"DashStripsAllWhitespace", "  {%- if true %} x {% endif -%}  \n y", R"({})", R"( x y)"},
    {"DashOnExpressions", "a \n {{- 'b' -}} \n c", R"({})", R"(abc)"},
    {"PlusKeepsWhitespace", "  {%+ if true %}x{% endif +%}\ny", R"({})", "  x\ny"},
    {"VariableTagsAreNotTrimmed", "{{ 'x' }}\n{{ 'y' }}\n", R"({})", "x\ny"},
    {"CommentsAreTrimmedLikeBlocks", "line\n{# comment #}\nafter\n  {#- c -#}  end", R"({})", "line\nafterend"},
    {"TrailingNewlineDroppedAndCrlfNormalized", "a\r\nb\rc\n", R"({})", "a\nb\nc"},
    {"OnlyOneTrailingNewlineDropped", "x\n\n", R"({})", "x\n"},
    {"IfElifElse",
     R"({% for x in [1, 2, 3] %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %};{% endfor %})", R"({})",
     R"(one;two;many;)"},
    {"LoopVariables",
     R"({% for x in ['a','b','c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}|{% endfor %})",
     R"({})", R"(1032TrueFalse3|2121FalseFalse3|3210FalseTrue3|)"},
    {"LoopNeighboursAndCycle",
     R"({% for i in [1,2] %}{{ loop.previtem is defined }}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.cycle('a','b') }};{% endfor %})",
     R"({})", R"(False2a;True1b;)"},
    {"LoopFilterAndElse",
     R"({% for x in [1,2,3] if x != 2 %}{{ x }}{{ loop.last }}{% else %}empty{% endfor %}|{% for x in [] %}{% else %}none{% endfor %})",
     R"({})", R"(1False3True|none)"},
    {"LoopOverDictStringAndUndefined",
     R"({% for k in d %}{{ k }}{% endfor %}|{% for c in 'hé' %}[{{ c }}]{% endfor %}|{% for x in missing %}x{% endfor %})",
     R"({"d": {"b": 1, "a": 2}})", R"(ba|[h][é]|)"},
    {"LoopUnpacking",
     R"({% for a, b in [[1,2],[3,4]] %}{{ a }}{{ b }}{% endfor %}|{% for k, v in d|items %}{{ k }}={{ v }};{% endfor %}|{% for k, v in d.items() %}{{ k }}{% endfor %})",
     R"({"d": {"x": 1, "y": 2}})", R"(1234|x=1;y=2;|xy)"},
    {"NestedLoopsShadowLoop",
     R"({% for a in [1,2] %}{% for b in [3,4] %}{{ loop.index }}{% endfor %}{{ loop.index }};{% endfor %})", R"({})",
     R"(121;122;)"},
    {"BreakAndContinue",
     R"({% for i in range(6) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 4 %}{% break %}{% endif %}{{ i }}{% endfor %})",
     R"({})", R"(023)"},
    {"EachIterationStartsFromTheOuterScope",
     R"({% set x = 1 %}{% for i in [1,2] %}{{ x }}{% set x = 2 %}{{ x }}{% endfor %}{{ x }})", R"({})", R"(12121)"},
    {"SetInsideLoopDoesNotLeak",
     R"({% for i in [1,2,3] %}{% if loop.first %}{% set x = 5 %}{% endif %}[{{ x }}]{% endfor %}|{% for i in [1] %}{% for j in [1,2] %}{% set y = j %}{% endfor %}[{{ y }}]{% endfor %})",
     R"({})", R"([5][][]|[])"},
    {"SetInsideIfIsVisibleAfter", R"({% if true %}{% set z = 3 %}{% endif %}{{ z }})", R"({})", R"(3)"},
    {"SetShadowsContext", R"({{ v }}{% set v = v + 1 %}{{ v }})", R"({"v": 1})", R"(12)"},
    {"NamespaceCarriesStateOutOfLoops",
     R"({% set ns = namespace(n=0, found=false) %}{% for i in [1,2,3] %}{% set ns.n = ns.n + i %}{% if i == 2 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.n }} {{ ns.found }} {{ ns.other is defined }})",
     R"({})", R"(6 True False)"},
    {"TupleAssignmentAndBlockSet", R"({% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t %}in {{ a }}{% endset %}[{{ t }}])",
     R"({})", R"(12[in 1])"},
    {"GenerationBlockRendersInPlace", R"(a{% generation %}b{{ 1 }}{% endgeneration %}c)", R"({})", R"(ab1c)"},
    {"Arithmetic",
     R"({{ 10 // 3 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 'ab' * 3 }} {{ 1 + 2.5 }} {{ 3 * 1.0 }} {{ 2 ** -1 }} {{ -7.5 // 2 }} {{ 7.5 % 2 }} {{ true + 1 }})",
     R"({})", R"(3 -4 2 3.5 1024 ababab 3.5 3.0 0.5 -4.0 1.5 2)"},
    {"Precedence",
     R"({{ 2 + 3 * 4 }} {{ (2 + 3) * 4 }} {{ -2 ** 2 }} {{ 1 ~ 2 * 3 }} {{ 'a' ~ 1 + 2 if false else 'b' }} {{ not 1 == 2 }} {{ -1|abs }} {{ [1,2,3]|length - 1 }})",
     R"({})", R"(14 20 4 16 b True 1 2)"},
    {"ConcatenationBindsTighterThanPlus", R"({{ 1 ~ 2 + 3 }})", R"({})", nullptr,
     R"(can only concatenate str (not "int") to str)"},
    {"Comparisons",
     R"({{ 1 == 1.0 }} {{ 1 == true }} {{ [1,2] == [1,2] }} {{ [1] == (1,) }} {{ {'a':1} == {'a':1} }} {{ 'B' < 'a' }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ none == none }} {{ missing == missing }} {{ missing != 1 }})",
     R"({})", R"(True True True False True True True False True True True)"},
    {"Membership",
     R"({{ 'a' in ['a'] }} {{ 1 in [1.0] }} {{ 'k' in {'k':1} }} {{ 'a' not in 'bcd' }} {{ 'ell' in 'hello' }} {{ 1 in missing }})",
     R"({})", R"(True True True True True False)"},
    {"AndOrReturnOperands", R"({{ none or 'x' }} {{ 0 and 'y' }} {{ 'a' and 'b' }} {{ '' or [] }}|)", R"({})",
     R"(x 0 b []|)"},
    {"ConditionalExpression", R"({{ 'x' if true }}|{{ 'x' if false }}|{{ 'a' if false else 'b' if true else 'c' }})",
     R"({})", R"(x||b)"},
    {"LiteralsAndEscapes",
     R"({{ "a\tb\\n\x41\u00e9\d" }}|{{ 'a' 'b' }}|{{ 1_000 }} {{ 1.5e3 }} {{ 0x1f }} {{ 0b101 }}|{{ True }}{{ None }})",
     R"({})", "a\tb\\nAé\\d|ab|1000 1500.0 31 5|TrueNone"},
    {"Subscripts", R"({{ l[0] }} {{ l[-1] }} {{ l[5] }}|{{ d['a'] }} {{ d.a }} {{ d.b }}|{{ s[1] }}{{ l.0 }})",
     R"({"l": [1, 2, 3], "d": {"a": "A"}, "s": "héllo"})", R"(1 3 |A A |é1)"},
    {"Slices",
     R"({{ [1,2,3][::-1] }} {{ 'héllo'[1:3] }} {{ [1,2,3,4,5][1:4:2] }} {{ [1,2,3][-2:] }} {{ 'abc'[::-1] }} {{ [1,2,3][10:] }} {{ m[1:] }})",
     R"({"m": [{"x": 1}, {"y": 2}]})", R"([3, 2, 1] él [2, 4] [2, 3] cba [] [{'y': 2}])"},
    {"UndefinedPrintsEmptyAndIsFalse",
     R"([{{ missing }}][{{ d.nokey }}][{{ missing is defined }}][{{ none is defined }}][{{ missing|length }}][{{ not missing }}][{{ missing ~ 'x' }}])",
     R"({"d": {}})", R"([][][False][True][0][True][x])"},
    {"NoneAttributeIsUndefined", R"({{ none.content }}|{{ (none.content) is defined }}|{{ z.a is defined }})",
     R"({"z": null})", R"(|False|False)"},
    {"AttributeOfUndefinedFails", R"({{ missing.x }})", R"({})", nullptr, R"('missing' is undefined)"},
    {"AddingUndefinedFails", R"({{ 'a' + d.content }})", R"({"d": {}})", nullptr,
     R"('dict object' has no attribute 'content')"},
    {"CallingUndefinedFails", R"({{ missing() }})", R"({})", nullptr, R"('missing' is undefined)"},
    {"FilterTrimLengthStringCase",
     R"([{{ '  x\u3000'|trim }}][{{ 'xxhixx'|trim('x') }}][{{ 'héllo'|length }}][{{ [1,2]|count }}][{{ 5|string ~ '' }}][{{ 'Hello World'|lower }}][{{ 'abc'|upper }}][{{ 'hello WORLD'|capitalize }}])",
     R"({})", R"([x][hi][5][2][5][hello world][ABC][Hello world])"},
    {"FilterDefault",
     R"({{ missing|default('d') }} {{ ''|default('d') }} {{ ''|default('d', true) }} {{ none|default('d') }} {{ missing|d }}|)",
     R"({})", R"(d  d None |)"},
    {"FilterFirstLastReverseList",
     R"({{ [1,2]|first }} {{ []|first }}|{{ 'abc'|last }}|{{ 'abc'|reverse }}|{{ [1,2]|reverse|list }}|{{ 'ab'|list }}|{{ d|list }})",
     R"({"d": {"k": 1, "j": 2}})", R"(1 |c|cba|[2, 1]|['a', 'b']|['k', 'j'])"},
    {"FilterItemsJoinReplace",
     R"({{ d|items|list }} {{ [1, 'a']|join('-') }} {{ ['a', none]|join }} {{ [{'n': 'a'}, {'n': 'b'}]|join(',', attribute='n') }} {{ 'aaa'|replace('a', 'b') }} {{ 'aaa'|replace('a', 'b', 2) }})",
     R"({"d": {"a": 1, "c": "hi"}})", R"([('a', 1), ('c', 'hi')] 1-a aNone a,b bbb bba)"},
    {"FilterIntFloatAbs",
     R"({{ 1.5|int }} {{ '3'|int }} {{ 'x'|int }} {{ '5.5'|int }} {{ ' 7 '|int }} {{ none|int(4) }} {{ '0x1A'|int(base=16) }} {{ 2|float }} {{ '2.5'|float }} {{ 'a'|float }} {{ -3|abs }} {{ -0.5|abs }})",
     R"({})", R"(1 3 0 5 7 4 26 2.0 2.5 0.0 3 0.5)"},
    {"FilterSelectRejectMap",
     R"({{ [1,0,2]|select|list }} {{ [1,2,3,4]|select('odd')|list }} {{ ['x','code_interpreter']|reject('equalto','code_interpreter')|join(', ') }} {{ m|selectattr('a')|map(attribute='a')|list }} {{ m|rejectattr('a')|list }} {{ m|selectattr('a', 'equalto', 2)|list }} {{ [1,2,3]|map('string')|join }} {{ m|map(attribute='a', default=0)|list }})",
     R"({"m": [{"a": 1}, {"a": 2}, {"b": 3}]})", R"([1, 2] [1, 3] x [1, 2] [{'b': 3}] [{'a': 2}] 123 [1, 2, 0])"},
    {"FilterToJson",
     R"({{ 'x'|tojson }} {{ d|tojson }} {{ [1,[2,{}],[]]|tojson(indent=2) }} {{ d|tojson(separators=(',', ':')) }} {{ 'é\n"'|tojson }} {{ 'é'|tojson(ensure_ascii=true) }} {{ 1e20|tojson }} {{ 1.0|tojson }} {{ none|tojson }} {{ d|tojson(sort_keys=true) }})",
     R"({"d": {"b": [1, 2.5, "ü"], "a": null}})",
     "\"x\" {\"b\": [1, 2.5, \"ü\"], \"a\": null} [\n  1,\n  [\n    2,\n    {}\n  ],\n  []\n] "
     "{\"b\":[1,2.5,\"ü\"],\"a\":null} \"é\\n\\\"\" \"\\u00e9\" 1e+20 1.0 null {\"a\": null, \"b\": [1, 2.5, \"ü\"]}"},
    {"FilterToJsonOfUndefinedFails", R"({{ missing|tojson }})", R"({})", nullptr,
     R"(Object of type Undefined is not JSON serializable)"},
    {"Tests",
     R"({{ missing is undefined }} {{ d is mapping }} {{ [] is iterable }} {{ 1 is iterable }} {{ missing is iterable }} {{ 'a' is string }} {{ 1.0 is float }} {{ true is boolean }} {{ none is boolean }} {{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ 3 is number }} {{ true is number }} {{ true is integer }} {{ none is none }} {{ none is not none }})",
     R"({"d": {}})",
     R"(True True True False True True True True False True False True False True True False True False)"},
    {"TestsWithArguments",
     R"({{ 6 is divisibleby 3 }} {{ 6 is divisibleby(4) }} {{ 'a' is in 'abc' }} {{ 2 is equalto 2 }} {{ 3 is odd }} {{ 3 is even }} {{ 1 is sameas 1 }} {{ 'abc' is sequence }} {{ 1 is lt 2 }})",
     R"({})", R"(True False True True True False True True True)"},
    {"StringMethods",
     R"({{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a-b-c'.split('-', 1) }} {{ 'a-b-c'.rsplit('-', 1) }} {{ 'xyxhiyx'.strip('xy') }} {{ '\n\nx\n'.lstrip('\n') }} {{ 'x\n\n'.rstrip('\n') }} {{ 'abc'.startswith(('x','a')) }} {{ 'Hello'.endswith('lo', 0, 2) }} {{ 'hello world'.title() }} {{ 'aaa'.replace('a', 'b', 2) }} {{ 'abcabc'.count('b') }} {{ 'héllo'.find('l') }} {{ ','.join(['a','b']) }} {{ 'hello'.upper() }} {{ 'HeLLo'.lower() }})",
     R"({})",
     "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b-c'] ['a-b', 'c'] hi x\n x True False Hello World bba 2 2 a,b HELLO "
     "hello"},
    {"StringSplitWithEmptySeparatorFails", R"({{ 'a'.split('') }})", R"({})", nullptr, R"(empty separator)"},
    {"DictMethods",
     R"({{ d.get('b', 5) }} {{ d.get('a') }} {{ d.get('zz') }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }} {{ d.items is defined }} {{ d['get'] is defined }})",
     R"({"d": {"a": 1, "b": 2}})", R"(2 1 None ['a', 'b'] [1, 2] [('a', 1), ('b', 2)] True True)"},
    {"Globals", R"({{ range(3)|list }} {{ range(1, 7, 2)|list }} {{ dict(a=1, b='x') }} {{ namespace(a=1).a }})",
     R"({})", R"([0, 1, 2] [1, 3, 5] {'a': 1, 'b': 'x'} 1)"},
    {"RaiseException", R"({{ raise_exception('bad input') }})", R"({})", nullptr, R"(bad input)"},
    {"AssignToAttributeOfNonNamespaceFails", R"({% set d = {'a': 1} %}{% set d.a = 2 %})", R"({})", nullptr,
     R"(cannot assign attribute on non-namespace object)"},

};

class JinjaConstruct : public ::testing::TestWithParam<Case> {};

TEST_P(JinjaConstruct, RendersAsJinja2) {
  const Case& c = GetParam();
  if (c.expected) {
    EXPECT_EQ(render(c.source, c.variables), c.expected);
    return;
  }
  try {
    std::string out = render(c.source, c.variables);
    FAIL() << "rendered '" << out << "' but should fail with: " << c.error;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(c.error), std::string::npos) << e.what();
    EXPECT_EQ(e.line(), 1) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Jinja, JinjaConstruct, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

Error parse_error(const std::string& source) {
  try {
    Template::parse(source);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "parsed without error: " << source;
  return Error(0, "");
}

Error render_error(const std::string& source, const std::string& variables = "{}") {
  Template t = Template::parse(source);
  try {
    t.render(nlohmann::ordered_json::parse(variables));
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "rendered without error: " << source;
  return Error(0, "");
}

TEST(JinjaErrors, RuntimeErrorsNameTheStatementLine) {
  Error e = render_error("{% for m in messages %}\n{{ m.content + '!' }}\n{% endfor %}",
                         R"({"messages": [{"role": "user"}]})");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.message(), "'dict object' has no attribute 'content'");
  Error raised = render_error("\n\n{{ raise_exception('Only user and assistant roles are supported!') }}");
  EXPECT_EQ(raised.line(), 3);
  EXPECT_FALSE(raised.unsupported());
  EXPECT_NE(raised.message().find("Only user and assistant roles are supported!"), std::string::npos);
  Error method = render_error("{{ 'a'.zfill(3) }}");
  EXPECT_TRUE(method.unsupported());
  EXPECT_NE(method.message().find("'zfill'"), std::string::npos) << method.what();
}

TEST(JinjaGlobals, StrftimeNowFormatsLocalTime) {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char year[8];
  std::strftime(year, sizeof year, "%Y", &local);
  // Renders within the same year unless the test straddles New Year's midnight.
  EXPECT_EQ(render("{{ strftime_now('%Y') }}"), year);
}

TEST(JinjaTemplate, RendersConcurrentlyFromOneParse) {
  const Template t = Template::parse(
      "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + m|length %}{% endfor %}{{ ns.n }}");
  std::vector<std::thread> threads;
  std::vector<std::string> results(8);
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] {
      nlohmann::ordered_json vars = {{"messages", std::vector<std::string>(i + 1, "abc")}};
      for (int k = 0; k < 200; ++k) results[i] = t.render(vars);
    });
  for (auto& th : threads) th.join();
  for (size_t i = 0; i < results.size(); ++i) EXPECT_EQ(results[i], std::to_string(3 * (i + 1)));
}

}  // namespace jinja_test
