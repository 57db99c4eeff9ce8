// Range checks whose failure message a user can read.
//
// A range check whose failure message a user can read: CLI11's PositiveNumber and
// NonNegativeNumber name the largest double in full as the upper end of the range.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace vinci::cli {

// A number of at least lo.
CLI::Validator at_least(double lo);

}  // namespace vinci::cli
