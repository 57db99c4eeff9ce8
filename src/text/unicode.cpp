#include "text/unicode.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <utf8proc.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace vinci::text {

namespace {

// The length of the well-formed prefix of the sequence at `pos` (Unicode's "maximal subpart"),
// or 0 when the sequence is complete and valid; `length` receives the full length when valid.
size_t ill_formed_prefix(std::string_view s, size_t pos, size_t& length) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = at(pos);
  if (lead < 0x80) {
    length = 1;
    return 0;
  }
  size_t width = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    width = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    width = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    width = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // beyond U+10FFFF
  } else {
    return 1;
  }
  for (size_t k = 1; k < width; ++k) {
    if (pos + k >= s.size()) return k;
    const unsigned char c = at(pos + k);
    const unsigned char lo = k == 1 ? low : 0x80;
    const unsigned char hi = k == 1 ? high : 0xBF;
    if (c < lo || c > hi) return k;
  }
  length = width;
  return 0;
}

struct ByteLevelMap {
  std::array<std::string, 256> chars;
  std::array<int16_t, 324> bytes;  // indexed by code point; every mapped code point is below 324
};

const ByteLevelMap& byte_level_map() {
  static const ByteLevelMap map = [] {
    ByteLevelMap m;
    m.bytes.fill(-1);
    const auto printable = [](int b) {
      return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const char32_t cp = printable(b) ? static_cast<char32_t>(b) : static_cast<char32_t>(next++);
      append_utf8(m.chars[b], cp);
      m.bytes[cp] = static_cast<int16_t>(b);
    }
    return m;
  }();
  return map;
}

}  // namespace

std::optional<size_t> find_invalid_utf8(std::string_view bytes) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t length = 0;
    if (ill_formed_prefix(bytes, pos, length) != 0) return pos;
    pos += length;
  }
  return std::nullopt;
}

char32_t next_code_point(std::string_view utf8, size_t& pos) {
  const auto at = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(utf8[k])); };
  const char32_t lead = at(pos);
  if (lead < 0x80) {
    pos += 1;
    return lead;
  }
  if (lead < 0xE0) {
    const char32_t cp = ((lead & 0x1F) << 6) | (at(pos + 1) & 0x3F);
    pos += 2;
    return cp;
  }
  if (lead < 0xF0) {
    const char32_t cp = ((lead & 0x0F) << 12) | ((at(pos + 1) & 0x3F) << 6) | (at(pos + 2) & 0x3F);
    pos += 3;
    return cp;
  }
  const char32_t cp =
      ((lead & 0x07) << 18) | ((at(pos + 1) & 0x3F) << 12) | ((at(pos + 2) & 0x3F) << 6) | (at(pos + 3) & 0x3F);
  pos += 4;
  return cp;
}

char32_t previous_code_point(std::string_view utf8, size_t& end) {
  size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(utf8[start]) & 0xC0) == 0x80) --start;
  size_t pos = start;
  const char32_t cp = next_code_point(utf8, pos);
  end = start;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t length = 0;
    const size_t bad = ill_formed_prefix(bytes, pos, length);
    if (bad == 0) {
      out.append(bytes.substr(pos, length));
      pos += length;
    } else {
      out += "\xEF\xBF\xBD";
      pos += bad;
    }
  }
  return out;
}

std::string nfc(std::string_view utf8) {
  // Every code point below U+0300 is NFC_Quick_Check=Yes and none of them combines with what
  // precedes it, so text made only of them (all of ASCII and Latin-1) is already composed.
  bool below_combining = true;
  for (const char c : utf8) below_combining = below_combining && static_cast<unsigned char>(c) < 0xCC;
  if (below_combining) return std::string(utf8);
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()), static_cast<utf8proc_ssize_t>(utf8.size()),
                   &out, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) throw std::runtime_error(std::string("NFC normalization failed: ") + utf8proc_errmsg(n));
  std::string result(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  std::free(out);
  return result;
}

bool is_white_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool is_word_char(char32_t cp) {
  if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z') || cp == '_';
  for (const UnicodeUpdate& u : unicode_updates()) {
    if (cp < u.first || cp > u.last) continue;
    const std::string_view c = u.category;
    return c[0] == 'L' || c[0] == 'M' || c == "Nd" || c == "Nl" || c == "Pc";
  }
  // Alphabetic is a derived property that utf8proc does not expose; PCRE2 knows it.
  static const std::shared_ptr<pcre2_code> word = [] {
    int error = 0;
    PCRE2_SIZE offset = 0;
    const char* pattern = "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]";
    return std::shared_ptr<pcre2_code>(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                                                     PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr),
                                       pcre2_code_free);
  }();
  std::string encoded;
  append_utf8(encoded, cp);
  const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(pcre2_match_data_create(1, nullptr),
                                                                                  pcre2_match_data_free);
  return pcre2_match(word.get(), reinterpret_cast<PCRE2_SPTR>(encoded.data()), encoded.size(), 0, PCRE2_ANCHORED,
                     match.get(), nullptr) >= 0;
}

std::string_view byte_level_char(uint8_t byte) { return byte_level_map().chars[byte]; }

std::optional<uint8_t> byte_level_byte(char32_t cp) {
  const auto& bytes = byte_level_map().bytes;
  if (cp >= bytes.size() || bytes[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(bytes[cp]);
}

std::string to_byte_level(std::string_view bytes) {
  const auto& chars = byte_level_map().chars;
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) out += chars[static_cast<unsigned char>(c)];
  return out;
}

}  // namespace vinci::text
