// The one way an enum maps to and from its names: a {value, name} table per enum.
//
// The one way an enum maps to and from the names users and files spell it with: a table of
// {value, name} pairs per enum, read by `to_string(E)` and `<enum>_from_string(text)`. A name that
// is not in the table is refused with every accepted spelling listed.
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace vinci::core {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

template <typename E, std::size_t N>
constexpr std::string_view enum_to_string(const std::array<EnumName<E>, N>& names, E value) {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return "?";
}

// `what` names the setting or field in the refusal: "verdict 'x' is not one of correct, ...".
template <typename E, std::size_t N>
E enum_from_string(const std::array<EnumName<E>, N>& names, std::string_view text, std::string_view what) {
  for (const auto& n : names)
    if (n.name == text) return n.value;
  std::array<std::string_view, N> spellings;
  for (std::size_t i = 0; i < N; ++i) spellings[i] = names[i].name;
  throw std::invalid_argument(fmt::format("{} '{}' is not one of {}", what, text, fmt::join(spellings, ", ")));
}

}  // namespace vinci::core
