// The values a chat template computes with, and Python's operators on them. Templates observe
// Python's data model (None versus undefined, bool versus int versus float, insertion-ordered
// dicts, strings of code points, str() and repr() spellings), so this models exactly that much.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/jinja.h"

namespace vinci::text::jinja {

class Value;

// What a lookup did not find. Like Jinja2's Undefined it prints as "", is false, iterates as
// empty and passes `is defined` tests; any other use fails with `hint`.
struct Undefined {
  std::string hint;
};
struct None {};
struct List {
  std::vector<Value> items;
  bool tuple = false;  // only repr() and equality tell a tuple from a list
};
// String keys only: JSON objects and the templates we render have no others.
struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  const Value* find(std::string_view key) const;
  void set(const std::string& key, Value value);
};
// namespace(): the only mutable value, shared by reference like the Python object.
struct Namespace {
  Dict attributes;
};
struct Args {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> named;
};
struct Function {
  std::string name;
  std::function<Value(Args&)> call;
};

class Value {
 public:
  Value() : v_(Undefined{}) {}
  static Value undefined(std::string hint) { return Value(Undefined{std::move(hint)}); }
  static Value none() { return Value(None{}); }
  static Value boolean(bool b) { return Value(b); }
  static Value integer(int64_t i) { return Value(i); }
  static Value floating(double d) { return Value(d); }
  static Value string(std::string s) { return Value(std::move(s)); }
  static Value list(std::vector<Value> items, bool tuple = false);
  static Value dict(Dict d);
  static Value names(std::shared_ptr<Namespace> ns) { return Value(std::move(ns)); }
  static Value function(std::string name, std::function<Value(Args&)> call);

  bool is_undefined() const { return std::holds_alternative<Undefined>(v_); }
  bool is_none() const { return std::holds_alternative<None>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<int64_t>(v_); }  // bool excluded
  bool is_float() const { return std::holds_alternative<double>(v_); }
  bool is_number() const { return is_bool() || is_int() || is_float(); }  // Python's numbers.Number
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_list() const;  // list or tuple
  bool is_tuple() const;
  bool is_dict() const { return std::holds_alternative<std::shared_ptr<const Dict>>(v_); }
  bool is_namespace() const { return std::holds_alternative<std::shared_ptr<Namespace>>(v_); }
  bool is_function() const { return std::holds_alternative<std::shared_ptr<const Function>>(v_); }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const;    // int or bool
  double as_double() const;  // any number
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const std::vector<Value>& items() const { return std::get<std::shared_ptr<const List>>(v_)->items; }
  const Dict& as_dict() const { return *std::get<std::shared_ptr<const Dict>>(v_); }
  Namespace& as_namespace() const { return *std::get<std::shared_ptr<Namespace>>(v_); }
  const Function& as_function() const { return *std::get<std::shared_ptr<const Function>>(v_); }
  const std::string& undefined_hint() const { return std::get<Undefined>(v_).hint; }

  bool same_object(const Value& other) const;  // Python's `is`, for the sameas test

 private:
  using Storage =
      std::variant<Undefined, None, bool, int64_t, double, std::string, std::shared_ptr<const List>,
                   std::shared_ptr<const Dict>, std::shared_ptr<Namespace>, std::shared_ptr<const Function>>;
  template <typename T>
  explicit Value(T v) : v_(std::move(v)) {}
  Storage v_;
};

// Failures inside the value layer carry no line; the statement that triggered them adds it.
[[noreturn]] void fail(std::string message);
[[noreturn]] void fail_unsupported(std::string message);
// Throws the undefined value's hint; does nothing for other values.
void require_defined(const Value& v);

std::string type_name(const Value& v);  // Python's: 'str', 'int', 'NoneType', 'dict', ...
bool truthy(const Value& v);
std::string to_str(const Value& v);  // str(): what {{ }}, ~, join and |string produce
std::string repr(const Value& v);
std::string format_float(double d);  // repr(float): shortest round trip, '1e-05', '1.0'

bool equal(const Value& a, const Value& b);
// `op` is one of < <= > >=; fails, as Python does, for types without an order.
bool compare(std::string_view op, const Value& a, const Value& b);
bool contains(const Value& container, const Value& item);               // Python's `in`
Value arithmetic(std::string_view op, const Value& a, const Value& b);  // + - * / // % **
Value negate(const Value& v);
// Python's seq[start:stop:step]; each bound is None (or undefined) when omitted.
Value slice(const Value& seq, const Value& start, const Value& stop, const Value& step);
// What `for` walks: items, dict keys, code points; undefined walks as empty.
std::vector<Value> iterate(const Value& v);
int64_t length(const Value& v);  // len()

// json.dumps's options, as transformers' tojson exposes them.
struct JsonStyle {
  std::optional<std::string> indent;  // None: one line
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool ensure_ascii = false;
  bool sort_keys = false;
};
std::string to_json(const Value& v, const JsonStyle& style);
Value from_json(const nlohmann::ordered_json& j);

// Strings as Python sees them: sequences of code points; is_space is str.isspace().
std::u32string to_code_points(std::string_view utf8);
std::string to_utf8(std::u32string_view code_points);
void append_utf8(std::string& out, char32_t c);
bool is_space(char32_t c);

}  // namespace vinci::text::jinja
