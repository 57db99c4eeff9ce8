// What a template reaches beyond its variables: filters, tests, globals, attributes.
//
// What a template can reach beyond its own variables: filters, tests, global functions, and the
// attributes and items of values (dict members, string and dict methods), looked up with
// Jinja2's rules (obj.x tries the Python attribute before the item, obj['x'] the reverse).
#pragma once

#include <string>
#include <string_view>

#include "text/jinja_value.h"

namespace vinci::text::jinja {

bool has_filter(std::string_view name);
bool has_test(std::string_view name);
Value apply_filter(std::string_view name, const Value& subject, Args& args);
bool apply_test(std::string_view name, const Value& subject, Args& args);

// raise_exception, strftime_now, namespace, dict, range; undefined for any other name.
Value global(const std::string& name);

Value get_attr(const Value& object, const std::string& name);
Value get_item(const Value& object, const Value& key);

}  // namespace vinci::text::jinja
