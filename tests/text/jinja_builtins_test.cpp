// Filters, tests, globals and member lookup called directly. Expected values are what jinja2 3.1
// renders for the equivalent template (e.g. {{ "ff"|int(base=16) }} gives 255).
#include "text/jinja_builtins.h"

#include <gtest/gtest.h>

#include "text/jinja_value.h"

namespace jinja_builtins_test {
using namespace vinci::text::jinja;

Value s(std::string v) { return Value::string(std::move(v)); }
Value i(int64_t v) { return Value::integer(v); }

Args args(std::vector<Value> positional, std::vector<std::pair<std::string, Value>> named = {}) {
  return Args{std::move(positional), std::move(named)};
}

std::string filter(std::string_view name, const Value& subject, Args a = {}) {
  return to_str(apply_filter(name, subject, a));
}

Value as_list(const Value& v) {
  Args none;
  return apply_filter("list", v, none);
}

bool test(std::string_view name, const Value& subject, Args a = {}) { return apply_test(name, subject, a); }

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

TEST(JinjaBuiltins, DefaultReplacesUndefinedAndOnlyWithTrueFalsyValues) {
  EXPECT_EQ(filter("default", Value::undefined("x"), args({s("d")})), "d");
  EXPECT_EQ(filter("default", s(""), args({s("d")})), "");
  EXPECT_EQ(filter("default", s(""), args({s("d"), Value::boolean(true)})), "d");
  EXPECT_EQ(filter("d", Value::undefined("x"), args({s("alias")})), "alias");  // d is default's alias
}

TEST(JinjaBuiltins, IntAndFloatConversions) {
  EXPECT_EQ(filter("int", s("12")), "12");
  EXPECT_EQ(filter("int", s("x"), args({i(7)})), "7");
  EXPECT_EQ(filter("int", s("ff"), args({}, {{"base", i(16)}})), "255");
  EXPECT_EQ(filter("int", s("0x1A"), args({}, {{"base", i(16)}})), "26");
  EXPECT_EQ(filter("int", s("3.9")), "3");
  EXPECT_EQ(filter("float", s("3.5")), "3.5");
  EXPECT_EQ(filter("float", s("x")), "0.0");
  EXPECT_EQ(filter("abs", i(-3)), "3");
}

TEST(JinjaBuiltins, SequenceFilters) {
  const Value v = Value::list({i(3), i(1), i(2)});
  EXPECT_EQ(filter("first", v), "3");
  EXPECT_EQ(filter("last", v), "2");
  EXPECT_EQ(filter("join", v, args({s("-")})), "3-1-2");
  EXPECT_EQ(filter("length", s("h\xC3\xA9llo")), "5");
  EXPECT_EQ(filter("capitalize", s("hello World")), "Hello world");
  EXPECT_EQ(filter("upper", s("hi")), "HI");
  Args gt = args({s("gt"), i(1)});
  EXPECT_EQ(repr(as_list(apply_filter("select", v, gt))), "[3, 2]");
}

TEST(JinjaBuiltins, TestsByName) {
  EXPECT_FALSE(test("defined", Value::undefined("x")));
  EXPECT_TRUE(test("undefined", Value::undefined("x")));
  EXPECT_TRUE(test("none", Value::none()));
  EXPECT_TRUE(test("number", i(1)));
  EXPECT_TRUE(test("string", s("a")));
  EXPECT_FALSE(test("string", i(1)));
  EXPECT_TRUE(test("mapping", Value::dict({})));
  EXPECT_TRUE(test("gt", i(2), args({i(1)})));
  EXPECT_TRUE(has_test("equalto"));
  EXPECT_FALSE(has_test("no_such_test"));
  EXPECT_TRUE(has_filter("tojson"));
  EXPECT_FALSE(has_filter("no_such_filter"));
}

TEST(JinjaBuiltins, ItemsCountFromTheEndAndStringsIndexByCodePoint) {
  EXPECT_EQ(to_str(get_item(Value::list({i(1), i(2)}), i(-1))), "2");
  EXPECT_EQ(to_str(get_item(s("ab\xC3\xA9"), i(-1))), "\xC3\xA9");
  EXPECT_TRUE(get_item(Value::list({i(1)}), i(5)).is_undefined());
  Dict d;
  d.set("k", i(1));
  EXPECT_EQ(to_str(get_item(Value::dict(d), s("k"))), "1");
  EXPECT_EQ(to_str(get_attr(Value::dict(d), "k")), "1");
  EXPECT_TRUE(get_item(Value::dict(d), s("missing")).is_undefined());
}

TEST(JinjaBuiltins, StringMethodsAreAttributes) {
  const Value split = get_attr(s("a-b"), "split");
  ASSERT_TRUE(split.is_function());
  Args a = args({s("-")});
  EXPECT_EQ(repr(split.as_function().call(a)), "['a', 'b']");
  Args none;
  EXPECT_EQ(to_str(get_attr(s(" x "), "strip").as_function().call(none)), "x");
  Args prefix = args({s("a")});
  EXPECT_EQ(to_str(get_attr(s("ab"), "startswith").as_function().call(prefix)), "True");
}

TEST(JinjaBuiltins, Globals) {
  Args r = args({i(1), i(7), i(2)});
  EXPECT_EQ(repr(as_list(global("range").as_function().call(r))), "[1, 3, 5]");
  EXPECT_TRUE(global("no_such_global").is_undefined());
  Args message = args({s("bad role")});
  EXPECT_EQ(error_of([&] { global("raise_exception").as_function().call(message); }),
            "the template raised an error: bad role");
  Args underscore = args({}, {{"_hidden", i(1)}});
  EXPECT_NE(error_of([&] { global("namespace").as_function().call(underscore); }).find("'_hidden'"), std::string::npos);
  Args ns_args = args({}, {{"count", i(2)}});
  const Value ns = global("namespace").as_function().call(ns_args);
  EXPECT_EQ(to_str(get_attr(ns, "count")), "2");
}
}  // namespace jinja_builtins_test
