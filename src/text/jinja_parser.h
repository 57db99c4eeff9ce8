// The parsed form of a template from its source.
#pragma once

#include <string_view>

#include "text/jinja_ast.h"

namespace vinci::text::jinja {

// Throws Error naming the line for syntax errors and for constructs outside the subset.
Body parse_template(std::string_view source);

}  // namespace vinci::text::jinja
