#include "text/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <utf8proc.h>

namespace vinci::text::jinja {

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

void Dict::set(const std::string& key, Value value) {
  for (auto& [k, v] : items)
    if (k == key) {
      v = std::move(value);
      return;
    }
  items.emplace_back(key, std::move(value));
}

Value Value::list(std::vector<Value> items, bool tuple) {
  return Value(std::make_shared<const List>(List{std::move(items), tuple}));
}

Value Value::dict(Dict d) { return Value(std::make_shared<const Dict>(std::move(d))); }

Value Value::function(std::string name, std::function<Value(Args&)> call) {
  return Value(std::make_shared<const Function>(Function{std::move(name), std::move(call)}));
}

bool Value::is_list() const { return std::holds_alternative<std::shared_ptr<const List>>(v_); }

bool Value::is_tuple() const { return is_list() && std::get<std::shared_ptr<const List>>(v_)->tuple; }

int64_t Value::as_int() const { return is_bool() ? (as_bool() ? 1 : 0) : std::get<int64_t>(v_); }

double Value::as_double() const { return is_float() ? std::get<double>(v_) : static_cast<double>(as_int()); }

bool Value::same_object(const Value& other) const {
  if (v_.index() != other.v_.index()) return false;
  if (is_list()) return &items() == &other.items();
  if (is_dict()) return &as_dict() == &other.as_dict();
  if (is_namespace()) return &as_namespace() == &other.as_namespace();
  if (is_function()) return &as_function() == &other.as_function();
  // Python interns small ints, True/False and None, so `is` agrees with == for them.
  return !is_undefined() && equal(*this, other);
}

void fail(std::string message) { throw Error(0, std::move(message)); }

void fail_unsupported(std::string message) { throw Error(0, std::move(message), true); }

void require_defined(const Value& v) {
  if (v.is_undefined()) fail(v.undefined_hint());
}

std::string type_name(const Value& v) {
  if (v.is_undefined()) return "Undefined";
  if (v.is_none()) return "NoneType";
  if (v.is_bool()) return "bool";
  if (v.is_int()) return "int";
  if (v.is_float()) return "float";
  if (v.is_string()) return "str";
  if (v.is_tuple()) return "tuple";
  if (v.is_list()) return "list";
  if (v.is_dict()) return "dict";
  if (v.is_namespace()) return "Namespace";
  return "function";
}

bool truthy(const Value& v) {
  if (v.is_undefined() || v.is_none()) return false;
  if (v.is_bool()) return v.as_bool();
  if (v.is_int()) return v.as_int() != 0;
  if (v.is_float()) return v.as_double() != 0.0;
  if (v.is_string()) return !v.as_string().empty();
  if (v.is_list()) return !v.items().empty();
  if (v.is_dict()) return !v.as_dict().items.empty();
  return true;
}

std::string format_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, res.ptr - buf);  // shortest round trip: "-1.2345e+02", "1e-05"
  std::string out;
  if (sci.front() == '-') {
    out += '-';
    sci.remove_prefix(1);
  }
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits += c;
  int exponent = 0;
  std::string_view exp_text = sci.substr(e + 1);
  if (exp_text.front() == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  // Python's repr switches to exponent notation outside 1e-4 <= |d| < 1e16.
  if (exponent < -4 || exponent >= 16) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    return out + fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  }
  if (exponent < 0) return out + "0." + std::string(-exponent - 1, '0') + digits;
  size_t int_digits = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_digits) return out + digits + std::string(int_digits - digits.size(), '0') + ".0";
  return out + digits.substr(0, int_digits) + "." + digits.substr(int_digits);
}

namespace {

// Python's str.isprintable(), which decides what repr() escapes.
bool printable(char32_t c) {
  if (c == ' ') return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_ZS: return false;
    default: return true;
  }
}

std::string repr_string(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : to_code_points(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x7f && c >= 0x20) {
      out += static_cast<char>(c);
    } else if (c >= 0x80 && printable(c)) {
      append_utf8(out, c);
    } else if (c <= 0xff) {
      out += fmt::format("\\x{:02x}", static_cast<uint32_t>(c));
    } else if (c <= 0xffff) {
      out += fmt::format("\\u{:04x}", static_cast<uint32_t>(c));
    } else {
      out += fmt::format("\\U{:08x}", static_cast<uint32_t>(c));
    }
  }
  return out + quote;
}

}  // namespace

std::string repr(const Value& v) {
  if (v.is_undefined()) return "Undefined";
  if (v.is_string()) return repr_string(v.as_string());
  if (v.is_list()) {
    std::string out = v.is_tuple() ? "(" : "[";
    for (size_t i = 0; i < v.items().size(); ++i) out += (i ? ", " : "") + repr(v.items()[i]);
    if (v.is_tuple() && v.items().size() == 1) out += ",";
    return out + (v.is_tuple() ? ")" : "]");
  }
  if (v.is_dict()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, item] : v.as_dict().items) {
      out += (first ? "" : ", ") + repr_string(k) + ": " + repr(item);
      first = false;
    }
    return out + "}";
  }
  if (v.is_namespace()) return "<Namespace " + repr(Value::dict(v.as_namespace().attributes)) + ">";
  return to_str(v);
}

std::string to_str(const Value& v) {
  if (v.is_undefined()) return "";
  if (v.is_none()) return "None";
  if (v.is_bool()) return v.as_bool() ? "True" : "False";
  if (v.is_int()) return std::to_string(v.as_int());
  if (v.is_float()) return format_float(v.as_double());
  if (v.is_string()) return v.as_string();
  if (v.is_function())
    fail(fmt::format("cannot print the function '{}' (Python would print its address); call it", v.as_function().name));
  return repr(v);
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.is_undefined() || b.is_undefined()) return a.is_undefined() && b.is_undefined();
  if (a.is_none() || b.is_none()) return a.is_none() && b.is_none();
  if (a.is_string() && b.is_string()) return a.as_string() == b.as_string();
  if (a.is_list() && b.is_list()) {
    if (a.is_tuple() != b.is_tuple() || a.items().size() != b.items().size()) return false;
    for (size_t i = 0; i < a.items().size(); ++i)
      if (!equal(a.items()[i], b.items()[i])) return false;
    return true;
  }
  if (a.is_dict() && b.is_dict()) {
    const auto& x = a.as_dict().items;
    if (x.size() != b.as_dict().items.size()) return false;
    for (const auto& [k, item] : x) {
      const Value* other = b.as_dict().find(k);
      if (!other || !equal(item, *other)) return false;
    }
    return true;
  }
  if (a.is_namespace() || a.is_function()) return a.same_object(b);
  return false;
}

namespace {

// Python's three-way comparison for the ordered types; fails for the others.
int order(std::string_view op, const Value& a, const Value& b) {
  require_defined(a);
  require_defined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) {
      double x = a.as_double(), y = b.as_double();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    int64_t x = a.as_int(), y = b.as_int();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  // UTF-8 byte order is code point order, which is Python's string order.
  if (a.is_string() && b.is_string()) {
    int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    const auto &x = a.items(), &y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (!equal(x[i], y[i])) return order(op, x[i], y[i]);
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  fail(fmt::format("'{}' not supported between instances of '{}' and '{}'", op, type_name(a), type_name(b)));
}

}  // namespace

bool compare(std::string_view op, const Value& a, const Value& b) {
  int c = order(op, a, b);
  if (op == "<") return c < 0;
  if (op == "<=") return c <= 0;
  if (op == ">") return c > 0;
  return c >= 0;
}

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string()) fail(fmt::format("'in <string>' requires string as left operand, not {}", type_name(item)));
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.is_dict()) return item.is_string() && container.as_dict().find(item.as_string()) != nullptr;
  for (const Value& v : iterate(container))
    if (equal(v, item)) return true;
  return false;
}

namespace {

[[noreturn]] void unsupported_operands(std::string_view op, const Value& a, const Value& b) {
  fail(fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op, type_name(a), type_name(b)));
}

[[noreturn]] void integer_overflow() { fail("integer overflow (Python's integers are unbounded; these are 64-bit)"); }

int64_t checked_add(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_add_overflow(x, y, &r)) integer_overflow();
  return r;
}

int64_t checked_sub(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_sub_overflow(x, y, &r)) integer_overflow();
  return r;
}

int64_t checked_mul(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_mul_overflow(x, y, &r)) integer_overflow();
  return r;
}

Value repeat(const Value& seq, int64_t times) {
  if (seq.is_string()) {
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += seq.as_string();
    return Value::string(std::move(out));
  }
  std::vector<Value> out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), seq.items().begin(), seq.items().end());
  return Value::list(std::move(out), seq.is_tuple());
}

// CPython's float_divmod, so // and % agree with Python on signs and rounding.
std::pair<double, double> float_divmod(double x, double y) {
  if (y == 0) fail("float division by zero");
  double mod = std::fmod(x, y);
  double div = (x - mod) / y;
  if (mod != 0) {
    if ((y < 0) != (mod < 0)) {
      mod += y;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, y);
  }
  double floordiv;
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, x / y);
  }
  return {floordiv, mod};
}

}  // namespace

Value arithmetic(std::string_view op, const Value& a, const Value& b) {
  require_defined(a);
  require_defined(b);
  if (a.is_number() && b.is_number()) {
    bool floating = a.is_float() || b.is_float();
    if (op == "/") {
      if (b.as_double() == 0) fail("division by zero");
      return Value::floating(a.as_double() / b.as_double());
    }
    if (op == "**") {
      if (!floating && b.as_int() >= 0) {
        int64_t result = 1, base = a.as_int();
        for (int64_t e = b.as_int(); e > 0; e >>= 1) {
          if (e & 1) result = checked_mul(result, base);
          if (e > 1) base = checked_mul(base, base);
        }
        return Value::integer(result);
      }
      if (a.as_double() == 0 && b.as_double() < 0) fail("0.0 cannot be raised to a negative power");
      return Value::floating(std::pow(a.as_double(), b.as_double()));
    }
    if (floating) {
      double x = a.as_double(), y = b.as_double();
      if (op == "+") return Value::floating(x + y);
      if (op == "-") return Value::floating(x - y);
      if (op == "*") return Value::floating(x * y);
      if (op == "//") return Value::floating(float_divmod(x, y).first);
      return Value::floating(float_divmod(x, y).second);
    }
    const int64_t x = a.as_int(), y = b.as_int();
    if (op == "+") return Value::integer(checked_add(x, y));
    if (op == "-") return Value::integer(checked_sub(x, y));
    if (op == "*") return Value::integer(checked_mul(x, y));
    if (y == 0) fail(op == "//" ? "integer division by zero" : "integer modulo by zero");
    if (x == INT64_MIN && y == -1) integer_overflow();
    int64_t q = x / y, m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) {
      q -= 1;
      m += y;
    }
    return Value::integer(op == "//" ? q : m);
  }
  if (op == "+") {
    if (a.is_string() && b.is_string()) return Value::string(a.as_string() + b.as_string());
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
      std::vector<Value> out = a.items();
      out.insert(out.end(), b.items().begin(), b.items().end());
      return Value::list(std::move(out), a.is_tuple());
    }
    if (a.is_string() || a.is_list())
      fail(fmt::format("can only concatenate {} (not \"{}\") to {}", type_name(a), type_name(b), type_name(a)));
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && (b.is_int() || b.is_bool())) return repeat(a, b.as_int());
    if ((b.is_string() || b.is_list()) && (a.is_int() || a.is_bool())) return repeat(b, a.as_int());
  }
  if (op == "%" && a.is_string())
    fail_unsupported("string formatting with % is not supported; use ~ or + to build strings");
  unsupported_operands(op, a, b);
}

Value negate(const Value& v) {
  require_defined(v);
  if (v.is_float()) return Value::floating(-v.as_double());
  if (v.is_number()) return Value::integer(checked_sub(0, v.as_int()));
  fail(fmt::format("bad operand type for unary -: '{}'", type_name(v)));
}

namespace {

int64_t slice_bound(const Value& bound, const char* what) {
  if (bound.is_int() || bound.is_bool()) return bound.as_int();
  fail(fmt::format("slice {} must be an integer or None, not {}", what, type_name(bound)));
}

}  // namespace

Value slice(const Value& seq, const Value& start, const Value& stop, const Value& step) {
  require_defined(seq);
  auto omitted = [](const Value& v) { return v.is_none() || v.is_undefined(); };
  int64_t st = omitted(step) ? 1 : slice_bound(step, "step");
  if (st == 0) fail("slice step cannot be zero");
  std::u32string code_points;
  int64_t n = 0;
  if (seq.is_string()) {
    code_points = to_code_points(seq.as_string());
    n = static_cast<int64_t>(code_points.size());
  } else if (seq.is_list()) {
    n = static_cast<int64_t>(seq.items().size());
  } else {
    fail(fmt::format("'{}' object is not subscriptable with a slice", type_name(seq)));
  }
  // CPython's PySlice_AdjustIndices.
  int64_t lower = st < 0 ? -1 : 0, upper = st < 0 ? n - 1 : n;
  auto adjust = [&](const Value& bound, int64_t dflt, const char* what) {
    if (omitted(bound)) return dflt;
    int64_t i = slice_bound(bound, what);
    if (i < 0) {
      i += n;
      if (i < lower) i = lower;
    } else if (i > upper) {
      i = upper;
    }
    return i;
  };
  int64_t from = adjust(start, st < 0 ? upper : lower, "start");
  int64_t to = adjust(stop, st < 0 ? lower : upper, "stop");
  if (seq.is_string()) {
    std::u32string out;
    for (int64_t i = from; st > 0 ? i < to : i > to; i += st) out += code_points[static_cast<size_t>(i)];
    return Value::string(to_utf8(out));
  }
  std::vector<Value> out;
  for (int64_t i = from; st > 0 ? i < to : i > to; i += st) out.push_back(seq.items()[static_cast<size_t>(i)]);
  return Value::list(std::move(out), seq.is_tuple());
}

std::vector<Value> iterate(const Value& v) {
  if (v.is_undefined()) return {};
  if (v.is_list()) return v.items();
  std::vector<Value> out;
  if (v.is_dict()) {
    for (const auto& item : v.as_dict().items) out.push_back(Value::string(item.first));
  } else if (v.is_string()) {
    for (char32_t c : to_code_points(v.as_string())) out.push_back(Value::string(to_utf8(std::u32string(1, c))));
  } else {
    fail(fmt::format("'{}' object is not iterable", type_name(v)));
  }
  return out;
}

int64_t length(const Value& v) {
  if (v.is_undefined()) return 0;
  if (v.is_string()) return static_cast<int64_t>(to_code_points(v.as_string()).size());
  if (v.is_list()) return static_cast<int64_t>(v.items().size());
  if (v.is_dict()) return static_cast<int64_t>(v.as_dict().items.size());
  fail(fmt::format("object of type '{}' has no len()", type_name(v)));
}

namespace {

void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  for (char32_t c : to_code_points(s)) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || (ensure_ascii && c >= 0x7f)) {
          if (c >= 0x10000) {
            char32_t v = c - 0x10000;
            out += fmt::format("\\u{:04x}\\u{:04x}", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
          } else {
            out += fmt::format("\\u{:04x}", static_cast<uint32_t>(c));
          }
        } else {
          append_utf8(out, c);
        }
    }
  }
  out += '"';
}

// Python's json encoder (_make_iterencode), including where it puts newlines under indent.
void write_json(std::string& out, const Value& v, const JsonStyle& style, int depth) {
  if (v.is_none()) {
    out += "null";
  } else if (v.is_bool()) {
    out += v.as_bool() ? "true" : "false";
  } else if (v.is_int()) {
    out += std::to_string(v.as_int());
  } else if (v.is_float()) {
    double d = v.as_double();
    out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : format_float(d);
  } else if (v.is_string()) {
    json_string(out, v.as_string(), style.ensure_ascii);
  } else if (v.is_list() || v.is_dict()) {
    bool is_dict = v.is_dict();
    size_t size = is_dict ? v.as_dict().items.size() : v.items().size();
    if (size == 0) {
      out += is_dict ? "{}" : "[]";
      return;
    }
    std::string newline_indent;
    if (style.indent) {
      newline_indent = "\n";
      for (int i = 0; i <= depth; ++i) newline_indent += *style.indent;
    }
    out += is_dict ? "{" : "[";
    out += newline_indent;
    if (is_dict) {
      std::vector<const std::pair<std::string, Value>*> members;
      for (const auto& m : v.as_dict().items) members.push_back(&m);
      if (style.sort_keys)
        std::stable_sort(members.begin(), members.end(), [](auto* x, auto* y) { return x->first < y->first; });
      for (size_t i = 0; i < members.size(); ++i) {
        if (i) out += style.item_separator + newline_indent;
        json_string(out, members[i]->first, style.ensure_ascii);
        out += style.key_separator;
        write_json(out, members[i]->second, style, depth + 1);
      }
    } else {
      for (size_t i = 0; i < size; ++i) {
        if (i) out += style.item_separator + newline_indent;
        write_json(out, v.items()[i], style, depth + 1);
      }
    }
    if (style.indent) {
      out += "\n";
      for (int i = 0; i < depth; ++i) out += *style.indent;
    }
    out += is_dict ? "}" : "]";
  } else {
    fail(fmt::format("Object of type {} is not JSON serializable", type_name(v)));
  }
}

}  // namespace

std::string to_json(const Value& v, const JsonStyle& style) {
  std::string out;
  write_json(out, v, style, 0);
  return out;
}

Value from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail(fmt::format("integer {} does not fit in 64 bits", u));
      return Value::integer(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::floating(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      for (const auto& item : j) items.push_back(from_json(item));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict d;
      for (const auto& [k, item] : j.items()) d.items.emplace_back(k, from_json(item));
      return Value::dict(std::move(d));
    }
    default: fail("binary JSON values cannot be passed to a template");
  }
}

std::u32string to_code_points(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(utf8.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(utf8.size());
  while (left > 0) {
    utf8proc_int32_t c = 0;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &c);
    if (n <= 0) {  // invalid UTF-8 decodes as U+FFFD, as Python's errors="replace" would
      c = 0xfffd;
      n = 1;
    }
    out += static_cast<char32_t>(c);
    p += n;
    left -= n;
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  utf8proc_uint8_t buf[4];
  utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

std::string to_utf8(std::u32string_view code_points) {
  std::string out;
  out.reserve(code_points.size());
  for (char32_t c : code_points) append_utf8(out, c);
  return out;
}

bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

}  // namespace vinci::text::jinja
