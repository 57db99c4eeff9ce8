#include "core/utf8.h"

namespace vinci::core {

namespace {

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::string_view utf8_prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = max_bytes;
  while (end > 0 && continuation(s[end])) --end;  // s[end] is the first byte left out
  return s.substr(0, end);
}

std::string_view utf8_suffix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t start = s.size() - max_bytes;
  while (start < s.size() && continuation(s[start])) ++start;
  return s.substr(start);
}

}  // namespace vinci::core
