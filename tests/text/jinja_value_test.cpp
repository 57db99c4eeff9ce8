// Python's data model as templates see it. Each expected value is what CPython 3.11 prints for
// the same expression (repr, str, operators, slices, json.dumps).
#include "text/jinja_value.h"

#include <gtest/gtest.h>

namespace jinja_value_test {
using namespace vinci::text::jinja;

Value i(int64_t v) { return Value::integer(v); }
Value f(double v) { return Value::floating(v); }
Value s(std::string v) { return Value::string(std::move(v)); }
Value list(std::vector<Value> items) { return Value::list(std::move(items)); }
Value none() { return Value::none(); }

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

TEST(JinjaValue, FloatReprIsPythons) {
  EXPECT_EQ(format_float(1e-05), "1e-05");
  EXPECT_EQ(format_float(1.0), "1.0");
  EXPECT_EQ(format_float(1e16), "1e+16");
  EXPECT_EQ(format_float(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(format_float(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(format_float(1.5e-7), "1.5e-07");
  EXPECT_EQ(format_float(-0.0), "-0.0");
  EXPECT_EQ(format_float(1.0 / 0.0), "inf");
}

TEST(JinjaValue, ReprAndStrOfContainers) {
  Dict d;
  d.set("a", Value::list({i(1)}, true));
  d.set("b", list({none(), Value::boolean(true), s("it's"), s("q\"")}));
  EXPECT_EQ(repr(Value::dict(d)), "{'a': (1,), 'b': [None, True, \"it's\", 'q\"']}");
  EXPECT_EQ(repr(Value::list({s("x")}, true)), "('x',)");
  EXPECT_EQ(repr(Value::list({}, true)), "()");
  EXPECT_EQ(to_str(s("plain")), "plain");
  EXPECT_EQ(repr(s("plain")), "'plain'");
  EXPECT_EQ(to_str(none()), "None");
  EXPECT_EQ(to_str(Value::boolean(false)), "False");
  EXPECT_EQ(to_str(Value::undefined("x is undefined")), "");
}

TEST(JinjaValue, TypeNamesAndTruth) {
  EXPECT_EQ(type_name(s("")), "str");
  EXPECT_EQ(type_name(i(1)), "int");
  EXPECT_EQ(type_name(Value::boolean(true)), "bool");
  EXPECT_EQ(type_name(none()), "NoneType");
  EXPECT_EQ(type_name(Value::list({}, true)), "tuple");
  for (const Value& v : {s(""), i(0), f(0.0), none(), list({}), Value::dict({}), Value::undefined("")})
    EXPECT_FALSE(truthy(v)) << repr(v);
  for (const Value& v : {s("0"), i(-1), f(0.5), list({none()})}) EXPECT_TRUE(truthy(v)) << repr(v);
}

TEST(JinjaValue, IntegerDivisionAndModuloFloorAsInPython) {
  EXPECT_EQ(arithmetic("//", i(7), i(-2)).as_int(), -4);
  EXPECT_EQ(arithmetic("%", i(-7), i(3)).as_int(), 2);
  EXPECT_EQ(arithmetic("%", i(7), i(-3)).as_int(), -2);
  const Value q = arithmetic("//", f(-7.5), i(2));
  EXPECT_TRUE(q.is_float());
  EXPECT_EQ(q.as_double(), -4.0);
  const Value d = arithmetic("/", i(7), i(2));  // true division is always a float
  EXPECT_TRUE(d.is_float());
  EXPECT_EQ(d.as_double(), 3.5);
  EXPECT_EQ(arithmetic("**", i(2), i(10)).as_int(), 1024);
  EXPECT_EQ(arithmetic("**", i(2), i(-1)).as_double(), 0.5);
  EXPECT_EQ(arithmetic("*", s("ab"), i(3)).as_string(), "ababab");
  EXPECT_EQ(arithmetic("+", Value::boolean(true), i(1)).as_int(), 2);  // bool is an int
}

TEST(JinjaValue, ArithmeticErrorsReadAsPythons) {
  EXPECT_EQ(error_of([] { arithmetic("//", i(1), i(0)); }), "integer division by zero");
  EXPECT_EQ(error_of([] { arithmetic("%", i(1), i(0)); }), "integer modulo by zero");
  EXPECT_EQ(error_of([] { arithmetic("/", i(1), i(0)); }), "division by zero");
  EXPECT_EQ(error_of([] { arithmetic("+", s("a"), i(1)); }), "can only concatenate str (not \"int\") to str");
  EXPECT_EQ(error_of([] { arithmetic("-", s("a"), s("b")); }), "unsupported operand type(s) for -: 'str' and 'str'");
  EXPECT_EQ(error_of([] { negate(s("a")); }), "bad operand type for unary -: 'str'");
  EXPECT_NE(error_of([] { arithmetic("*", i(INT64_MAX), i(2)); }).find("integer overflow"), std::string::npos);
}

TEST(JinjaValue, ComparisonsFollowPythonsTypes) {
  EXPECT_TRUE(equal(i(1), f(1.0)));
  EXPECT_TRUE(equal(Value::boolean(true), i(1)));
  EXPECT_FALSE(equal(s("1"), i(1)));
  EXPECT_FALSE(equal(none(), Value::boolean(false)));
  EXPECT_TRUE(equal(list({i(1), s("a")}), list({f(1.0), s("a")})));
  EXPECT_TRUE(compare("<", s("a"), s("b")));
  EXPECT_TRUE(compare("<", list({i(1), i(2)}), list({i(1), i(3)})));
  EXPECT_TRUE(compare(">=", f(2.5), i(2)));
  EXPECT_EQ(error_of([] { compare("<", s("a"), i(1)); }), "'<' not supported between instances of 'str' and 'int'");
}

TEST(JinjaValue, MembershipTests) {
  EXPECT_TRUE(contains(s("hello"), s("ell")));
  EXPECT_TRUE(contains(list({i(1), i(2)}), f(2.0)));
  Dict d;
  d.set("k", i(1));
  EXPECT_TRUE(contains(Value::dict(d), s("k")));
  EXPECT_FALSE(contains(Value::dict(d), i(1)));  // a dict's membership is by key
  EXPECT_EQ(error_of([] { contains(s("abc"), i(1)); }), "'in <string>' requires string as left operand, not int");
}

TEST(JinjaValue, SlicesClampAndStep) {
  const Value five = list({i(1), i(2), i(3), i(4), i(5)});
  EXPECT_EQ(repr(slice(five, none(), none(), i(-2))), "[5, 3, 1]");
  EXPECT_EQ(to_str(slice(s("hello"), i(1), i(-1), none())), "ell");
  EXPECT_EQ(to_str(slice(s("hello"), i(-100), i(2), none())), "he");
  EXPECT_EQ(repr(slice(list({i(1), i(2), i(3)}), i(5), none(), none())), "[]");
  // Strings slice by code point, not by byte.
  EXPECT_EQ(to_str(slice(s("h\xC3\xA9llo"), i(1), i(2), none())), "\xC3\xA9");
  EXPECT_EQ(error_of([&] { slice(five, none(), none(), i(0)); }), "slice step cannot be zero");
}

TEST(JinjaValue, LengthAndIterationCountCodePoints) {
  EXPECT_EQ(length(s("h\xC3\xA9")), 2);
  EXPECT_EQ(iterate(s("h\xC3\xA9")).size(), 2u);
  EXPECT_TRUE(iterate(Value::undefined("u")).empty());
  Dict d;
  d.set("b", i(1));
  d.set("a", i(2));
  const auto keys = iterate(Value::dict(d));  // dicts walk their keys in insertion order
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].as_string(), "b");
  EXPECT_EQ(error_of([] { length(i(3)); }), "object of type 'int' has no len()");
}

TEST(JinjaValue, JsonLikeJsonDumps) {
  Dict d;
  d.set("b", i(1));
  d.set("a", list({i(1), f(2.0), none(), Value::boolean(true), s("\xC3\xA9\n")}));
  const Value v = Value::dict(d);
  EXPECT_EQ(to_json(v, {}), "{\"b\": 1, \"a\": [1, 2.0, null, true, \"\xC3\xA9\\n\"]}");
  JsonStyle ascii;
  ascii.ensure_ascii = true;
  EXPECT_EQ(to_json(s("\xC3\xA9"), ascii), "\"\\u00e9\"");
  JsonStyle pretty;
  pretty.indent = "  ";
  pretty.sort_keys = true;
  pretty.item_separator = ",";  // what json.dumps uses once there is an indent
  Dict small;
  small.set("b", i(1));
  small.set("a", list({i(1), i(2)}));
  EXPECT_EQ(to_json(Value::dict(small), pretty), "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": 1\n}");
}

TEST(JinjaValue, FromJsonKeepsTypesAndOrder) {
  const Value v = from_json(nlohmann::ordered_json::parse(R"({"z": 1, "a": [1.5, null, false, "s"]})"));
  ASSERT_TRUE(v.is_dict());
  EXPECT_EQ(v.as_dict().items[0].first, "z");
  EXPECT_TRUE(v.as_dict().find("z")->is_int());
  const auto& a = v.as_dict().find("a")->items();
  EXPECT_TRUE(a[0].is_float());
  EXPECT_TRUE(a[1].is_none());
  EXPECT_TRUE(a[2].is_bool());
  EXPECT_EQ(a[3].as_string(), "s");
  EXPECT_EQ(v.as_dict().find("missing"), nullptr);
}
}  // namespace jinja_value_test
