// Cutting text by bytes without splitting a UTF-8 character, so cut text stays valid JSON.
//
// Cutting text by bytes without splitting a UTF-8 character: a cut one would leave an invalid
// sequence, and JSON writers refuse those (an episode or a journal line would be lost).
#pragma once

#include <string_view>

namespace vinci::core {

// The longest prefix of s of at most max_bytes bytes that ends on a character boundary.
std::string_view utf8_prefix(std::string_view s, size_t max_bytes);
// The longest suffix of s of at most max_bytes bytes that starts on a character boundary.
std::string_view utf8_suffix(std::string_view s, size_t max_bytes);

}  // namespace vinci::core
