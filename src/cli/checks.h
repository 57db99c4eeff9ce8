// Range checks for options whose failure messages a user can read: CLI11's PositiveNumber and
// NonNegativeNumber name the largest double in full as the upper end of the range.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace vinci::cli {

// A number of at least zero.
CLI::Validator non_negative();
// A whole number of at least lo.
CLI::Validator at_least(long long lo);

}  // namespace vinci::cli
