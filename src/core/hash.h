// Content hashes for the caches: 128-bit XXH3, printed as 32 hex digits.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace vinci::core {

std::string content_hash(std::string_view data);

// Hash of several parts, each length-prefixed so that ("ab","c") and ("a","bc") differ.
std::string content_hash(std::initializer_list<std::string_view> parts);

}  // namespace vinci::core
