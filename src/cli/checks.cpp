#include "cli/checks.h"

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

namespace vinci::cli {
namespace {

// The option's text as a number, or the message that says why it is not one.
std::string number_or_why(const std::string& text, double& value) {
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return fmt::format("'{}' is not a number", text);
  if (errno == ERANGE) return fmt::format("{} is out of range", text);
  return "";
}

}  // namespace

CLI::Validator at_least(double lo) {
  return CLI::Validator(
      [lo](std::string& text) {
        double v = 0;
        if (auto why = number_or_why(text, v); !why.empty()) return why;
        return v >= lo ? std::string() : fmt::format("{} is not allowed: the value must be at least {}", text, lo);
      },
      fmt::format(">= {}", lo), "at_least");
}

}  // namespace vinci::cli
