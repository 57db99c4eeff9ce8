#include "skills/code_tokenizer.h"

namespace vinci::skills {

namespace {

bool is_upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(unsigned char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_high(unsigned char c) { return c >= 0x80; }
bool is_word(unsigned char c) { return is_upper(c) || is_lower(c) || is_digit(c) || c == '_' || is_high(c); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (is_upper(static_cast<unsigned char>(c))) c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Splits a run without '_' into camelCase / acronym / digit / non-ASCII parts.
void split_camel(std::string_view s, std::vector<std::string>& parts) {
  size_t i = 0;
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  while (i < s.size()) {
    size_t j = i + 1;
    if (is_upper(at(i))) {
      while (j < s.size() && is_upper(at(j))) ++j;
      if (j < s.size() && is_lower(at(j))) {
        if (j - i > 1) {
          j -= 1;  // an acronym ends where the next capitalised word begins: HTTP|Server
        } else {
          while (j < s.size() && is_lower(at(j))) ++j;  // Capitalised word
        }
      }
    } else if (is_lower(at(i))) {
      while (j < s.size() && is_lower(at(j))) ++j;
    } else if (is_digit(at(i))) {
      while (j < s.size() && is_digit(at(j))) ++j;
    } else {
      while (j < s.size() && is_high(at(j))) ++j;
    }
    parts.push_back(lower(s.substr(i, j - i)));
    i = j;
  }
}

void emit_word(std::string_view word, std::vector<std::string>& tokens) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= word.size()) {
    const size_t end = std::min(word.find('_', start), word.size());
    if (end > start) split_camel(word.substr(start, end - start), parts);
    start = end + 1;
  }
  if (parts.empty()) return;  // only underscores
  std::string whole = lower(word);
  if (parts.size() != 1 || parts.front() != whole) tokens.push_back(std::move(whole));
  for (auto& p : parts) tokens.push_back(std::move(p));
}

}  // namespace

std::vector<std::string> tokenize_code_text(std::string_view text) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < text.size()) {
    if (!is_word(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && is_word(static_cast<unsigned char>(text[j]))) ++j;
    emit_word(text.substr(i, j - i), tokens);
    i = j;
  }
  return tokens;
}

}  // namespace vinci::skills
