#include "text/jinja_builtins.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <initializer_list>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <utf8proc.h>

namespace vinci::text::jinja {
namespace {

// Python-style argument binding: positional, then keywords; a parameter without a default is
// required.
struct Param {
  const char* name;
  std::optional<Value> fallback;
};

std::vector<Value> bind(std::string_view fn, Args& args, std::initializer_list<Param> params) {
  std::vector<std::optional<Value>> bound(params.size());
  if (args.positional.size() > params.size())
    fail(fmt::format("{}() takes at most {} argument(s) ({} given)", fn, params.size(), args.positional.size()));
  for (size_t i = 0; i < args.positional.size(); ++i) bound[i] = args.positional[i];
  for (auto& [key, value] : args.named) {
    size_t i = 0;
    for (const Param& p : params) {
      if (key == p.name) break;
      ++i;
    }
    if (i == params.size()) fail(fmt::format("{}() got an unexpected keyword argument '{}'", fn, key));
    if (bound[i]) fail(fmt::format("{}() got multiple values for argument '{}'", fn, key));
    bound[i] = value;
  }
  std::vector<Value> out;
  size_t i = 0;
  for (const Param& p : params) {
    if (!bound[i]) {
      if (!p.fallback) fail(fmt::format("{}() missing required argument '{}'", fn, p.name));
      bound[i] = *p.fallback;
    }
    out.push_back(std::move(*bound[i]));
    ++i;
  }
  return out;
}

Value str_value(std::string s) { return Value::string(std::move(s)); }

// Jinja2's message for a failed lookup, e.g. "'dict object' has no attribute 'content'".
Value missing_member(const Value& object, const Value& name) {
  std::string type = object.is_none() ? "None" : type_name(object) + " object";
  if (name.is_string()) return Value::undefined(fmt::format("'{}' has no attribute {}", type, repr(name)));
  return Value::undefined(fmt::format("{} has no element {}", type, repr(name)));
}

const std::string& string_arg(std::string_view fn, const Value& v) {
  require_defined(v);
  if (!v.is_string()) fail(fmt::format("{}() argument must be str, not {}", fn, type_name(v)));
  return v.as_string();
}

int64_t int_arg(std::string_view fn, const Value& v) {
  require_defined(v);
  if (!v.is_int() && !v.is_bool()) fail(fmt::format("{}() argument must be an integer, not {}", fn, type_name(v)));
  return v.as_int();
}

// ---------------------------------------------------------------- str methods

std::u32string strip_set(const Value& chars, std::string_view fn) {
  if (chars.is_none() || chars.is_undefined()) return {};
  return to_code_points(string_arg(fn, chars));
}

std::string strip(const std::string& s, const Value& chars, bool left, bool right, std::string_view fn) {
  std::u32string cps = to_code_points(s);
  std::u32string set = strip_set(chars, fn);
  bool whitespace = chars.is_none() || chars.is_undefined();
  auto strippable = [&](char32_t c) { return whitespace ? is_space(c) : set.find(c) != std::u32string::npos; };
  size_t begin = 0, end = cps.size();
  if (left)
    while (begin < end && strippable(cps[begin])) ++begin;
  if (right)
    while (end > begin && strippable(cps[end - 1])) --end;
  return to_utf8(std::u32string_view(cps).substr(begin, end - begin));
}

Value split(const std::string& s, const Value& sep, int64_t maxsplit, bool from_right) {
  std::vector<Value> parts;
  if (sep.is_none() || sep.is_undefined()) {
    std::u32string cps = to_code_points(s);
    std::vector<std::u32string> words;
    if (!from_right) {
      size_t i = 0;
      while (i < cps.size()) {
        while (i < cps.size() && is_space(cps[i])) ++i;
        if (i == cps.size()) break;
        if (maxsplit >= 0 && static_cast<int64_t>(words.size()) == maxsplit) {
          size_t end = cps.size();
          while (end > i && is_space(cps[end - 1])) --end;
          words.push_back(cps.substr(i, end - i));
          break;
        }
        size_t j = i;
        while (j < cps.size() && !is_space(cps[j])) ++j;
        words.push_back(cps.substr(i, j - i));
        i = j;
      }
    } else {
      size_t i = cps.size();
      while (i > 0) {
        while (i > 0 && is_space(cps[i - 1])) --i;
        if (i == 0) break;
        if (maxsplit >= 0 && static_cast<int64_t>(words.size()) == maxsplit) {
          size_t begin = 0;
          while (begin < i && is_space(cps[begin])) ++begin;
          words.push_back(cps.substr(begin, i - begin));
          break;
        }
        size_t j = i;
        while (j > 0 && !is_space(cps[j - 1])) --j;
        words.push_back(cps.substr(j, i - j));
        i = j;
      }
      std::reverse(words.begin(), words.end());
    }
    for (const auto& w : words) parts.push_back(str_value(to_utf8(w)));
    return Value::list(std::move(parts));
  }
  const std::string& separator = string_arg("split", sep);
  if (separator.empty()) fail("empty separator");
  std::vector<std::string> pieces;
  if (!from_right) {
    size_t start = 0;
    while (true) {
      size_t at = s.find(separator, start);
      if (at == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit)) {
        pieces.push_back(s.substr(start));
        break;
      }
      pieces.push_back(s.substr(start, at - start));
      start = at + separator.size();
    }
  } else {
    size_t end = s.size();
    while (true) {
      size_t at = end < separator.size() ? std::string::npos : s.rfind(separator, end - separator.size());
      if (at == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit)) {
        pieces.push_back(s.substr(0, end));
        break;
      }
      pieces.push_back(s.substr(at + separator.size(), end - at - separator.size()));
      end = at;
    }
    std::reverse(pieces.begin(), pieces.end());
  }
  for (auto& p : pieces) parts.push_back(str_value(std::move(p)));
  return Value::list(std::move(parts));
}

std::string replace(const std::string& s, const std::string& old, const std::string& with, int64_t count) {
  std::string out;
  if (old.empty()) {  // Python inserts `with` before every code point and at the end
    std::u32string cps = to_code_points(s);
    int64_t done = 0;
    for (char32_t c : cps) {
      if (count < 0 || done < count) {
        out += with;
        ++done;
      }
      append_utf8(out, c);
    }
    if (count < 0 || done < count) out += with;
    return out;
  }
  size_t start = 0;
  for (int64_t done = 0; count < 0 || done < count; ++done) {
    size_t at = s.find(old, start);
    if (at == std::string::npos) break;
    out.append(s, start, at - start);
    out += with;
    start = at + old.size();
  }
  out.append(s, start, std::string::npos);
  return out;
}

std::string map_case(const std::string& s, utf8proc_int32_t (*f)(utf8proc_int32_t)) {
  std::string out;
  for (char32_t c : to_code_points(s)) append_utf8(out, static_cast<char32_t>(f(static_cast<utf8proc_int32_t>(c))));
  return out;
}

bool cased(char32_t c) {
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT;
}

std::string title(const std::string& s) {
  std::string out;
  bool previous_cased = false;
  for (char32_t c : to_code_points(s)) {
    auto mapped = previous_cased ? utf8proc_tolower(static_cast<utf8proc_int32_t>(c))
                                 : utf8proc_totitle(static_cast<utf8proc_int32_t>(c));
    append_utf8(out, static_cast<char32_t>(mapped));
    previous_cased = cased(c);
  }
  return out;
}

std::string capitalize(const std::string& s) {
  std::u32string cps = to_code_points(s);
  std::string out;
  for (size_t i = 0; i < cps.size(); ++i) {
    auto c = static_cast<utf8proc_int32_t>(cps[i]);
    append_utf8(out, static_cast<char32_t>(i == 0 ? utf8proc_totitle(c) : utf8proc_tolower(c)));
  }
  return out;
}

// Python's start/end arguments of startswith, find and friends, in code points.
std::u32string window(const std::u32string& cps, const Value& start, const Value& end, std::string_view fn) {
  auto n = static_cast<int64_t>(cps.size());
  auto clamp = [&](const Value& v, int64_t dflt) {
    if (v.is_none() || v.is_undefined()) return dflt;
    int64_t i = int_arg(fn, v);
    if (i < 0) i = std::max<int64_t>(0, i + n);
    return std::min(i, n);
  };
  int64_t from = clamp(start, 0), to = clamp(end, n);
  return from >= to ? std::u32string() : cps.substr(static_cast<size_t>(from), static_cast<size_t>(to - from));
}

bool affix_match(const std::string& s, const Value& affix, const Value& start, const Value& end, bool prefix,
                 std::string_view fn) {
  std::u32string w = window(to_code_points(s), start, end, fn);
  auto test = [&](const Value& candidate) {
    std::u32string a = to_code_points(string_arg(fn, candidate));
    if (a.size() > w.size()) return false;
    return prefix ? w.compare(0, a.size(), a) == 0 : w.compare(w.size() - a.size(), a.size(), a) == 0;
  };
  if (affix.is_list() && affix.is_tuple()) {
    for (const Value& candidate : affix.items())
      if (test(candidate)) return true;
    return false;
  }
  return test(affix);
}

using Method = Value (*)(const std::string& self, Args& args);

const std::map<std::string, Method, std::less<>>& string_methods() {
  static const std::map<std::string, Method, std::less<>> methods = {
      {"startswith",
       [](const std::string& s, Args& a) {
         auto p = bind("startswith", a, {{"prefix", {}}, {"start", Value::none()}, {"end", Value::none()}});
         return Value::boolean(affix_match(s, p[0], p[1], p[2], true, "startswith"));
       }},
      {"endswith",
       [](const std::string& s, Args& a) {
         auto p = bind("endswith", a, {{"suffix", {}}, {"start", Value::none()}, {"end", Value::none()}});
         return Value::boolean(affix_match(s, p[0], p[1], p[2], false, "endswith"));
       }},
      {"split",
       [](const std::string& s, Args& a) {
         auto p = bind("split", a, {{"sep", Value::none()}, {"maxsplit", Value::integer(-1)}});
         return split(s, p[0], int_arg("split", p[1]), false);
       }},
      {"rsplit",
       [](const std::string& s, Args& a) {
         auto p = bind("rsplit", a, {{"sep", Value::none()}, {"maxsplit", Value::integer(-1)}});
         return split(s, p[0], int_arg("rsplit", p[1]), true);
       }},
      {"strip",
       [](const std::string& s, Args& a) {
         return str_value(strip(s, bind("strip", a, {{"chars", Value::none()}})[0], true, true, "strip"));
       }},
      {"lstrip",
       [](const std::string& s, Args& a) {
         return str_value(strip(s, bind("lstrip", a, {{"chars", Value::none()}})[0], true, false, "lstrip"));
       }},
      {"rstrip",
       [](const std::string& s, Args& a) {
         return str_value(strip(s, bind("rstrip", a, {{"chars", Value::none()}})[0], false, true, "rstrip"));
       }},
      {"upper",
       [](const std::string& s, Args& a) {
         bind("upper", a, {});
         return str_value(map_case(s, utf8proc_toupper));
       }},
      {"lower",
       [](const std::string& s, Args& a) {
         bind("lower", a, {});
         return str_value(map_case(s, utf8proc_tolower));
       }},
      {"title",
       [](const std::string& s, Args& a) {
         bind("title", a, {});
         return str_value(title(s));
       }},
      {"capitalize",
       [](const std::string& s, Args& a) {
         bind("capitalize", a, {});
         return str_value(capitalize(s));
       }},
      {"replace",
       [](const std::string& s, Args& a) {
         auto p = bind("replace", a, {{"old", {}}, {"new", {}}, {"count", Value::integer(-1)}});
         return str_value(
             replace(s, string_arg("replace", p[0]), string_arg("replace", p[1]), int_arg("replace", p[2])));
       }},
      {"find",
       [](const std::string& s, Args& a) {
         auto p = bind("find", a, {{"sub", {}}, {"start", Value::none()}, {"end", Value::none()}});
         std::u32string cps = to_code_points(s);
         std::u32string w = window(cps, p[1], p[2], "find");
         size_t at = w.find(to_code_points(string_arg("find", p[0])));
         if (at == std::u32string::npos) return Value::integer(-1);
         int64_t offset =
             p[1].is_none() ? 0 : static_cast<int64_t>(cps.size() - window(cps, p[1], Value::none(), "find").size());
         return Value::integer(static_cast<int64_t>(at) + offset);
       }},
      {"count",
       [](const std::string& s, Args& a) {
         auto p = bind("count", a, {{"sub", {}}});
         const std::string& sub = string_arg("count", p[0]);
         if (sub.empty()) return Value::integer(length(Value::string(s)) + 1);
         int64_t n = 0;
         for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
         return Value::integer(n);
       }},
      {"join",
       [](const std::string& s, Args& a) {
         auto p = bind("join", a, {{"iterable", {}}});
         std::string out;
         size_t i = 0;
         for (const Value& item : iterate(p[0])) {
           if (!item.is_string())
             fail(fmt::format("sequence item {}: expected str instance, {} found", i, type_name(item)));
           out += (i++ ? s : "") + item.as_string();
         }
         return str_value(std::move(out));
       }},
      {"removeprefix",
       [](const std::string& s, Args& a) {
         const std::string prefix = string_arg("removeprefix", bind("removeprefix", a, {{"prefix", {}}})[0]);
         return str_value(s.starts_with(prefix) ? s.substr(prefix.size()) : s);
       }},
      {"removesuffix",
       [](const std::string& s, Args& a) {
         const std::string suffix = string_arg("removesuffix", bind("removesuffix", a, {{"suffix", {}}})[0]);
         return str_value(!suffix.empty() && s.ends_with(suffix) ? s.substr(0, s.size() - suffix.size()) : s);
       }},
      {"isspace",
       [](const std::string& s, Args& a) {
         bind("isspace", a, {});
         std::u32string cps = to_code_points(s);
         return Value::boolean(!cps.empty() && std::all_of(cps.begin(), cps.end(), is_space));
       }},
  };
  return methods;
}

// Python attributes that exist but that this subset does not implement: calling one fails
// clearly instead of quietly rendering something else.
bool python_attribute(std::string_view type, std::string_view name) {
  static const std::vector<std::string_view> str_names = {
      "casefold",   "center",     "encode",    "expandtabs", "format",       "format_map", "index",     "isalnum",
      "isalpha",    "isascii",    "isdecimal", "isdigit",    "isidentifier", "islower",    "isnumeric", "isprintable",
      "istitle",    "isupper",    "ljust",     "maketrans",  "partition",    "rfind",      "rindex",    "rjust",
      "rpartition", "splitlines", "swapcase",  "translate",  "zfill"};
  static const std::vector<std::string_view> dict_names = {"clear",   "copy",       "fromkeys", "pop",
                                                           "popitem", "setdefault", "update"};
  static const std::vector<std::string_view> list_names = {"append", "clear", "copy",   "count",   "extend", "index",
                                                           "insert", "pop",   "remove", "reverse", "sort"};
  const auto& names = type == "str" ? str_names : type == "dict" ? dict_names : list_names;
  return std::find(names.begin(), names.end(), name) != names.end();
}

Value unsupported_method(const std::string& type, const std::string& name) {
  return Value::function(type + "." + name, [type, name](Args&) -> Value {
    fail_unsupported(fmt::format("the {} method '{}' is not supported by vinci's Jinja subset", type, name));
  });
}

Value dict_method(const Value& self, const std::string& name) {
  if (name == "items")
    return Value::function("dict.items", [self](Args& a) {
      bind("items", a, {});
      std::vector<Value> pairs;
      for (const auto& [k, v] : self.as_dict().items) pairs.push_back(Value::list({str_value(k), v}, true));
      return Value::list(std::move(pairs));
    });
  if (name == "keys")
    return Value::function("dict.keys", [self](Args& a) {
      bind("keys", a, {});
      return Value::list(iterate(self));
    });
  if (name == "values")
    return Value::function("dict.values", [self](Args& a) {
      bind("values", a, {});
      std::vector<Value> values;
      for (const auto& item : self.as_dict().items) values.push_back(item.second);
      return Value::list(std::move(values));
    });
  if (name == "get")
    return Value::function("dict.get", [self](Args& a) {
      auto p = bind("get", a, {{"key", {}}, {"default", Value::none()}});
      const Value* found = p[0].is_string() ? self.as_dict().find(p[0].as_string()) : nullptr;
      return found ? *found : p[1];
    });
  if (python_attribute("dict", name)) return unsupported_method("dict", name);
  return Value();
}

// Python attribute lookup (methods) for the types that have methods templates use.
Value python_getattr(const Value& object, const std::string& name) {
  if (object.is_string()) {
    const auto& methods = string_methods();
    if (auto it = methods.find(name); it != methods.end()) {
      Method m = it->second;
      std::string self = object.as_string();
      return Value::function("str." + name, [m, self](Args& a) { return m(self, a); });
    }
    if (python_attribute("str", name)) return unsupported_method("str", name);
  } else if (object.is_dict()) {
    return dict_method(object, name);
  } else if (object.is_list() && python_attribute("list", name)) {
    return unsupported_method(type_name(object), name);
  }
  return Value();
}

// ---------------------------------------------------------------- tests

bool test_impl(std::string_view name, const Value& v, Args& args);

using TestFn = bool (*)(const Value&, Args&);

const std::map<std::string, TestFn, std::less<>>& tests() {
  static const std::map<std::string, TestFn, std::less<>> table = {
      {"defined", [](const Value& v, Args&) { return !v.is_undefined(); }},
      {"undefined", [](const Value& v, Args&) { return v.is_undefined(); }},
      {"none", [](const Value& v, Args&) { return v.is_none(); }},
      {"boolean", [](const Value& v, Args&) { return v.is_bool(); }},
      {"false", [](const Value& v, Args&) { return v.is_bool() && !v.as_bool(); }},
      {"true", [](const Value& v, Args&) { return v.is_bool() && v.as_bool(); }},
      {"integer", [](const Value& v, Args&) { return v.is_int(); }},
      {"float", [](const Value& v, Args&) { return v.is_float(); }},
      {"number", [](const Value& v, Args&) { return v.is_number(); }},
      {"string", [](const Value& v, Args&) { return v.is_string(); }},
      {"mapping", [](const Value& v, Args&) { return v.is_dict(); }},
      // Jinja2's Undefined defines __iter__, __len__ and __getitem__, so it passes both.
      {"iterable",
       [](const Value& v, Args&) { return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict(); }},
      {"sequence",
       [](const Value& v, Args&) { return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict(); }},
      {"callable", [](const Value& v, Args&) { return v.is_function(); }},
      {"sameas",
       [](const Value& v, Args& a) {
         return v.same_object(bind("sameas", a, {{"other", {}}})[0]);
       }},
      {"eq",
       [](const Value& v, Args& a) {
         return equal(v, bind("eq", a, {{"other", {}}})[0]);
       }},
      {"ne",
       [](const Value& v, Args& a) {
         return !equal(v, bind("ne", a, {{"other", {}}})[0]);
       }},
      {"lt",
       [](const Value& v, Args& a) {
         return compare("<", v, bind("lt", a, {{"other", {}}})[0]);
       }},
      {"le",
       [](const Value& v, Args& a) {
         return compare("<=", v, bind("le", a, {{"other", {}}})[0]);
       }},
      {"gt",
       [](const Value& v, Args& a) {
         return compare(">", v, bind("gt", a, {{"other", {}}})[0]);
       }},
      {"ge",
       [](const Value& v, Args& a) {
         return compare(">=", v, bind("ge", a, {{"other", {}}})[0]);
       }},
      {"in",
       [](const Value& v, Args& a) {
         return contains(bind("in", a, {{"seq", {}}})[0], v);
       }},
      {"odd",
       [](const Value& v, Args& a) {
         bind("odd", a, {});
         return equal(arithmetic("%", v, Value::integer(2)), Value::integer(1));
       }},
      {"even",
       [](const Value& v, Args& a) {
         bind("even", a, {});
         return equal(arithmetic("%", v, Value::integer(2)), Value::integer(0));
       }},
      {"divisibleby",
       [](const Value& v, Args& a) {
         return equal(arithmetic("%", v, bind("divisibleby", a, {{"num", {}}})[0]), Value::integer(0));
       }},
  };
  return table;
}

const std::map<std::string, std::string, std::less<>>& test_aliases() {
  static const std::map<std::string, std::string, std::less<>> aliases = {
      {"equalto", "eq"}, {"==", "eq"},          {"!=", "ne"}, {"lessthan", "lt"}, {"<", "lt"},
      {"<=", "le"},      {"greaterthan", "gt"}, {">", "gt"},  {">=", "ge"}};
  return aliases;
}

std::string_view canonical_test(std::string_view name) {
  const auto& aliases = test_aliases();
  if (auto it = aliases.find(name); it != aliases.end()) return it->second;
  return name;
}

bool test_impl(std::string_view name, const Value& v, Args& args) {
  const auto& table = tests();
  auto it = table.find(canonical_test(name));
  if (it == table.end()) fail(fmt::format("no test named '{}'", name));
  return it->second(v, args);
}

// ---------------------------------------------------------------- filters

// Jinja2's make_attrgetter: "a.b.0" walks attributes, integers index.
Value attribute_path(const Value& item, const Value& path) {
  if (!path.is_string()) return get_item(item, path);
  Value v = item;
  std::string_view rest = path.as_string();
  while (true) {
    size_t dot = rest.find('.');
    std::string part(rest.substr(0, dot));
    bool numeric = !part.empty() && std::all_of(part.begin(), part.end(),
                                                [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    v = get_item(v, numeric ? Value::integer(std::strtoll(part.c_str(), nullptr, 10)) : str_value(part));
    if (dot == std::string_view::npos) return v;
    rest.remove_prefix(dot + 1);
  }
}

// select, reject, selectattr, rejectattr share one shape: keep the items whose (attribute's)
// test result, or truth value without a test, equals `keep`.
Value select_items(const Value& seq, Args& args, bool by_attribute, bool keep) {
  std::optional<Value> attribute;
  size_t next = 0;
  if (by_attribute) {
    if (args.positional.empty()) fail("selectattr/rejectattr need an attribute name");
    attribute = args.positional[0];
    next = 1;
  }
  std::optional<std::string> test;
  Args test_args;
  if (next < args.positional.size()) {
    if (!args.positional[next].is_string()) fail("the test name of select/reject must be a string");
    test = args.positional[next].as_string();
    if (!has_test(*test)) fail_unsupported(fmt::format("test '{}' is not in vinci's Jinja subset", *test));
    test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(next + 1), args.positional.end());
  }
  test_args.named = args.named;
  std::vector<Value> out;
  for (const Value& item : iterate(seq)) {
    Value subject = attribute ? attribute_path(item, *attribute) : item;
    Args a = test_args;
    bool passed = test ? test_impl(*test, subject, a) : truthy(subject);
    if (passed == keep) out.push_back(item);
  }
  return Value::list(std::move(out));
}

std::optional<double> parse_python_float(const std::string& text) {
  std::string s = strip(text, Value::none(), true, true, "float");
  std::string digits;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && i > 0 && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
        std::isdigit(static_cast<unsigned char>(s[i + 1])))
      continue;
    digits += s[i];
  }
  if (digits.empty()) return std::nullopt;
  std::string lower = map_case(digits, utf8proc_tolower);
  std::string_view body = lower;
  double sign = 1;
  if (body.front() == '+' || body.front() == '-') {
    sign = body.front() == '-' ? -1 : 1;
    body.remove_prefix(1);
  }
  if (body == "inf" || body == "infinity") return sign * HUGE_VAL;
  if (body == "nan") return std::nan("");
  if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body.front())) || body.front() == '.'))
    return std::nullopt;
  char* end = nullptr;
  double d = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || lower.find('x') != std::string::npos) return std::nullopt;
  return d;
}

std::optional<int64_t> parse_python_int(const std::string& text, int base) {
  std::string s = strip(text, Value::none(), true, true, "int");
  std::string clean;
  for (char c : s)
    if (c != '_') clean += c;
  if (clean.empty()) return std::nullopt;
  std::string_view body = clean;
  bool negative = false;
  if (body.front() == '+' || body.front() == '-') {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  if (body.size() > 2 && body[0] == '0') {
    char p = static_cast<char>(std::tolower(static_cast<unsigned char>(body[1])));
    if ((p == 'x' && base == 16) || (p == 'o' && base == 8) || (p == 'b' && base == 2)) body.remove_prefix(2);
  }
  if (body.empty()) return std::nullopt;
  std::string digits(body);
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(digits.c_str(), &end, base);
  if (end != digits.c_str() + digits.size() || errno == ERANGE || !std::isalnum(static_cast<unsigned char>(digits[0])))
    return std::nullopt;
  return negative ? -v : v;
}

using FilterFn = Value (*)(const Value&, Args&);

const std::map<std::string, FilterFn, std::less<>>& filters() {
  static const std::map<std::string, FilterFn, std::less<>> table = {
      {"abs",
       [](const Value& v, Args& a) {
         bind("abs", a, {});
         require_defined(v);
         if (v.is_float()) return Value::floating(std::fabs(v.as_double()));
         if (v.is_number()) return v.as_int() < 0 ? negate(v) : Value::integer(v.as_int());
         fail(fmt::format("bad operand type for abs(): '{}'", type_name(v)));
       }},
      {"capitalize",
       [](const Value& v, Args& a) {
         bind("capitalize", a, {});
         return str_value(capitalize(to_str(v)));
       }},
      {"length",
       [](const Value& v, Args& a) {
         bind("length", a, {});
         return Value::integer(length(v));
       }},
      {"default",
       [](const Value& v, Args& a) {
         auto p = bind("default", a, {{"default_value", str_value("")}, {"boolean", Value::boolean(false)}});
         bool use_default = v.is_undefined() || (truthy(p[1]) && !truthy(v));
         return use_default ? p[0] : v;
       }},
      {"first",
       [](const Value& v, Args& a) {
         bind("first", a, {});
         std::vector<Value> items = iterate(v);
         return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
       }},
      {"last",
       [](const Value& v, Args& a) {
         bind("last", a, {});
         std::vector<Value> items = iterate(v);
         return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
       }},
      {"float",
       [](const Value& v, Args& a) {
         auto p = bind("float", a, {{"default", Value::floating(0.0)}});
         if (v.is_number()) return Value::floating(v.as_double());
         if (v.is_string())
           if (auto d = parse_python_float(v.as_string())) return Value::floating(*d);
         return p[0];
       }},
      {"int",
       [](const Value& v, Args& a) {
         auto p = bind("int", a, {{"default", Value::integer(0)}, {"base", Value::integer(10)}});
         if (v.is_float()) {
           double d = v.as_double();
           if (std::isfinite(d)) return Value::integer(static_cast<int64_t>(std::trunc(d)));
           return p[0];
         }
         if (v.is_number()) return Value::integer(v.as_int());
         if (v.is_string()) {
           if (auto i = parse_python_int(v.as_string(), static_cast<int>(int_arg("int", p[1]))))
             return Value::integer(*i);
           if (auto d = parse_python_float(v.as_string()); d && std::isfinite(*d))
             return Value::integer(static_cast<int64_t>(std::trunc(*d)));
         }
         return p[0];
       }},
      {"items",
       [](const Value& v, Args& a) {
         bind("items", a, {});
         if (v.is_undefined()) return Value::list({});
         if (!v.is_dict()) fail("Can only get item pairs from a mapping.");
         std::vector<Value> pairs;
         for (const auto& [k, item] : v.as_dict().items) pairs.push_back(Value::list({str_value(k), item}, true));
         return Value::list(std::move(pairs));
       }},
      {"join",
       [](const Value& v, Args& a) {
         auto p = bind("join", a, {{"d", str_value("")}, {"attribute", Value::none()}});
         std::string separator = to_str(p[0]), out;
         size_t i = 0;
         for (const Value& item : iterate(v))
           out += (i++ ? separator : "") + to_str(p[1].is_none() ? item : attribute_path(item, p[1]));
         return str_value(std::move(out));
       }},
      {"list",
       [](const Value& v, Args& a) {
         bind("list", a, {});
         return Value::list(iterate(v));
       }},
      {"lower",
       [](const Value& v, Args& a) {
         bind("lower", a, {});
         return str_value(map_case(to_str(v), utf8proc_tolower));
       }},
      {"upper",
       [](const Value& v, Args& a) {
         bind("upper", a, {});
         return str_value(map_case(to_str(v), utf8proc_toupper));
       }},
      {"map",
       [](const Value& v, Args& a) {
         std::vector<Value> out;
         if (!a.positional.empty()) {  // map('filter', args...)
           if (!a.positional[0].is_string()) fail("map() takes a filter name or attribute=");
           std::string name = a.positional[0].as_string();
           if (!has_filter(name)) fail_unsupported(fmt::format("filter '{}' is not in vinci's Jinja subset", name));
           Args rest;
           rest.positional.assign(a.positional.begin() + 1, a.positional.end());
           rest.named = a.named;
           for (const Value& item : iterate(v)) {
             Args call = rest;
             out.push_back(apply_filter(name, item, call));
           }
           return Value::list(std::move(out));
         }
         auto p = bind("map", a, {{"attribute", {}}, {"default", Value()}});
         for (const Value& item : iterate(v)) {
           Value got = attribute_path(item, p[0]);
           out.push_back(got.is_undefined() && !p[1].is_undefined() ? p[1] : got);
         }
         return Value::list(std::move(out));
       }},
      {"select", [](const Value& v, Args& a) { return select_items(v, a, false, true); }},
      {"reject", [](const Value& v, Args& a) { return select_items(v, a, false, false); }},
      {"selectattr", [](const Value& v, Args& a) { return select_items(v, a, true, true); }},
      {"rejectattr", [](const Value& v, Args& a) { return select_items(v, a, true, false); }},
      {"replace",
       [](const Value& v, Args& a) {
         auto p = bind("replace", a, {{"old", {}}, {"new", {}}, {"count", Value::none()}});
         int64_t count = p[2].is_none() ? -1 : int_arg("replace", p[2]);
         return str_value(replace(to_str(v), to_str(p[0]), to_str(p[1]), count));
       }},
      {"reverse",
       [](const Value& v, Args& a) {
         bind("reverse", a, {});
         if (v.is_string()) return slice(v, Value::none(), Value::none(), Value::integer(-1));
         std::vector<Value> items = iterate(v);
         std::reverse(items.begin(), items.end());
         return Value::list(std::move(items));
       }},
      {"safe",
       [](const Value& v, Args& a) {
         bind("safe", a, {});
         return str_value(to_str(v));
       }},
      {"string",
       [](const Value& v, Args& a) {
         bind("string", a, {});
         return str_value(to_str(v));
       }},
      {"trim",
       [](const Value& v, Args& a) {
         auto p = bind("trim", a, {{"chars", Value::none()}});
         return str_value(strip(to_str(v), p[0], true, true, "trim"));
       }},
      // transformers replaces Jinja2's tojson: json.dumps without HTML escaping or key sorting.
      {"tojson",
       [](const Value& v, Args& a) {
         auto p = bind("tojson", a,
                       {{"ensure_ascii", Value::boolean(false)},
                        {"indent", Value::none()},
                        {"separators", Value::none()},
                        {"sort_keys", Value::boolean(false)}});
         JsonStyle style;
         style.ensure_ascii = truthy(p[0]);
         style.sort_keys = truthy(p[3]);
         if (p[1].is_string()) {
           style.indent = p[1].as_string();
         } else if (!p[1].is_none()) {
           int64_t n = int_arg("tojson", p[1]);
           style.indent = std::string(static_cast<size_t>(std::max<int64_t>(n, 0)), ' ');
         }
         if (style.indent) style.item_separator = ",";
         if (!p[2].is_none()) {
           if (!p[2].is_list() || p[2].items().size() != 2 || !p[2].items()[0].is_string() ||
               !p[2].items()[1].is_string())
             fail("tojson separators must be a pair of strings");
           style.item_separator = p[2].items()[0].as_string();
           style.key_separator = p[2].items()[1].as_string();
         }
         return str_value(to_json(v, style));
       }},
  };
  return table;
}

const std::map<std::string, std::string, std::less<>>& filter_aliases() {
  static const std::map<std::string, std::string, std::less<>> aliases = {{"count", "length"}, {"d", "default"}};
  return aliases;
}

std::string_view canonical_filter(std::string_view name) {
  const auto& aliases = filter_aliases();
  if (auto it = aliases.find(name); it != aliases.end()) return it->second;
  return name;
}

// ---------------------------------------------------------------- globals

Value make_range(Args& args) {
  for (const Value& v : args.positional) int_arg("range", v);
  if (!args.named.empty()) fail("range() takes no keyword arguments");
  int64_t start = 0, stop = 0, step = 1;
  if (args.positional.size() == 1) {
    stop = args.positional[0].as_int();
  } else if (args.positional.size() == 2 || args.positional.size() == 3) {
    start = args.positional[0].as_int();
    stop = args.positional[1].as_int();
    if (args.positional.size() == 3) step = args.positional[2].as_int();
  } else {
    fail(fmt::format("range expected 1 to 3 arguments, got {}", args.positional.size()));
  }
  if (step == 0) fail("range() arg 3 must not be zero");
  std::vector<Value> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (out.size() >= 100000) fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    out.push_back(Value::integer(i));
  }
  return Value::list(std::move(out));
}

Dict dict_from_args(std::string_view fn, Args& args) {
  Dict d;
  if (args.positional.size() > 1) fail(fmt::format("{} expected at most 1 positional argument", fn));
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (source.is_dict()) {
      d = source.as_dict();
    } else {
      for (const Value& pair : iterate(source)) {
        std::vector<Value> kv = iterate(pair);
        if (kv.size() != 2 || !kv[0].is_string()) fail(fmt::format("{} takes a mapping or (key, value) pairs", fn));
        d.set(kv[0].as_string(), kv[1]);
      }
    }
  }
  for (auto& [k, v] : args.named) d.set(k, v);
  return d;
}

Value strftime_now(Args& args) {
  // A copy: bind() returns a temporary, so a reference into it would dangle.
  const std::string format = string_arg("strftime_now", bind("strftime_now", args, {{"format", {}}})[0]);
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  for (size_t size = 256; size <= 65536; size *= 4) {
    std::string buf(size, '\0');
    size_t n = std::strftime(buf.data(), buf.size(), format.c_str(), &local);
    if (n > 0 || format.empty()) return str_value(buf.substr(0, n));
  }
  fail("strftime_now() produced no output for this format");
}

}  // namespace

bool has_filter(std::string_view name) { return filters().count(canonical_filter(name)) > 0; }

bool has_test(std::string_view name) { return tests().count(canonical_test(name)) > 0; }

Value apply_filter(std::string_view name, const Value& subject, Args& args) {
  const auto& table = filters();
  auto it = table.find(canonical_filter(name));
  if (it == table.end()) fail(fmt::format("no filter named '{}'", name));
  return it->second(subject, args);
}

bool apply_test(std::string_view name, const Value& subject, Args& args) { return test_impl(name, subject, args); }

Value global(const std::string& name) {
  if (name == "range") return Value::function("range", make_range);
  if (name == "dict") return Value::function("dict", [](Args& a) { return Value::dict(dict_from_args("dict", a)); });
  if (name == "namespace")
    return Value::function("namespace", [](Args& a) {
      auto ns = std::make_shared<Namespace>();
      ns->attributes = dict_from_args("namespace", a);
      for (const auto& [k, v] : ns->attributes.items)
        if (k.starts_with("_"))
          fail(fmt::format("chat templates cannot store underscore-prefixed attributes on a namespace, but got '{}'",
                           k));
      return Value::names(std::move(ns));
    });
  if (name == "raise_exception")
    return Value::function("raise_exception", [](Args& a) -> Value {
      fail(fmt::format("the template raised an error: {}", to_str(bind("raise_exception", a, {{"message", {}}})[0])));
    });
  if (name == "strftime_now") return Value::function("strftime_now", strftime_now);
  return Value();
}

Value get_attr(const Value& object, const std::string& name) {
  require_defined(object);
  if (object.is_namespace()) {
    if (const Value* v = object.as_namespace().attributes.find(name)) return *v;
    return missing_member(object, str_value(name));
  }
  Value method = python_getattr(object, name);
  if (!method.is_undefined()) return method;
  if (object.is_dict())
    if (const Value* v = object.as_dict().find(name)) return *v;
  return missing_member(object, str_value(name));
}

Value get_item(const Value& object, const Value& key) {
  require_defined(object);
  if (object.is_dict() && key.is_string()) {
    if (const Value* v = object.as_dict().find(key.as_string())) return *v;
  } else if ((object.is_list() || object.is_string()) && (key.is_int() || key.is_bool())) {
    int64_t n = length(object), i = key.as_int();
    if (i < 0) i += n;
    if (i >= 0 && i < n) {
      if (object.is_list()) return object.items()[static_cast<size_t>(i)];
      return slice(object, Value::integer(i), Value::integer(i + 1), Value::none());
    }
  }
  if (key.is_string()) {  // obj['x'] falls back to the attribute, as Jinja2's getitem does
    if (object.is_namespace()) return get_attr(object, key.as_string());
    Value method = python_getattr(object, key.as_string());
    if (!method.is_undefined()) return method;
  }
  return missing_member(object, key);
}

}  // namespace vinci::text::jinja
