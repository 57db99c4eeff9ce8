#include "text/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fmt/format.h>
#include <pcre2.h>

#include <optional>
#include <stdexcept>

#include "text/unicode.h"

namespace vinci::text {

namespace {

[[noreturn]] void unsupported(std::string_view pattern, size_t at, std::string_view construct, std::string_view why) {
  throw std::invalid_argument(
      fmt::format("regex {:?}: {} at offset {} is not supported ({})", pattern, construct, at, why));
}

// The class items (`\x{..}-\x{..}`) of the code points that Oniguruma puts in `category` (one
// letter, a major class, or two) and PCRE2 does not (`added`), or the reverse.
std::string category_updates(std::string_view category, bool added) {
  const auto in = [&](const char* c) { return std::string_view(c).substr(0, category.size()) == category; };
  std::string items;
  for (const UnicodeUpdate& u : unicode_updates()) {
    const bool oniguruma = in(u.category);
    const bool pcre2 = in(u.pcre2_category);
    if (added ? !oniguruma || pcre2 : !pcre2 || oniguruma) continue;
    items += fmt::format("\\x{{{:X}}}-\\x{{{:X}}}", static_cast<uint32_t>(u.first), static_cast<uint32_t>(u.last));
  }
  return items;
}

bool is_general_category(std::string_view name) {
  static constexpr std::string_view kCategories[] = {
      "L",  "Lu", "Ll", "Lt", "Lm", "Lo", "M",  "Mn", "Mc", "Me", "N", "Nd", "Nl", "No", "P",  "Pc", "Pd",
      "Ps", "Pe", "Pi", "Pf", "Po", "S",  "Sm", "Sc", "Sk", "So", "Z", "Zs", "Zl", "Zp", "Cc", "Cf", "Co"};
  for (const std::string_view c : kCategories)
    if (c == name) return true;
  return false;
}

// Rewrites a property (`\p{..}`, `\P{..}`, `\d`, `\D`) so that PCRE2 matches what Oniguruma
// matches: PCRE2's set, plus the code points it lacks, minus those it has and Oniguruma has not.
std::string property(std::string_view pattern, size_t at, std::string_view name, bool negated, bool in_class) {
  if (!is_general_category(name)) {
    unsupported(
        pattern, at, fmt::format("\\p{{{}}}", name),
        "only general categories are; C and Cn change meaning between Unicode versions and scripts are not translated");
  }
  const std::string plus = category_updates(name, true);
  const std::string minus = category_updates(name, false);
  if (plus.empty() && minus.empty()) return fmt::format("\\{}{{{}}}", negated ? 'P' : 'p', name);
  const std::string base = fmt::format("\\p{{{}}}", name);
  if (in_class) {
    if (negated || !minus.empty()) {
      unsupported(pattern, at, fmt::format("\\{}{{{}}} inside a character class", negated ? 'P' : 'p', name),
                  "PCRE2 cannot subtract code points there; move it out of the class");
    }
    return base + plus;
  }
  if (!negated) return minus.empty() ? "[" + base + plus + "]" : "(?:(?![" + minus + "])[" + base + plus + "])";
  return minus.empty() ? "[^" + base + plus + "]" : "(?:[^" + base + plus + "]|[" + minus + "])";
}

// Oniguruma (Ruby syntax, as HF compiles it) to PCRE2: \s is exactly White_Space (PCRE2 adds
// U+180E), \h is a hex digit (PCRE2: horizontal space), and \p{..}/\d need newer tables.
std::string to_pcre2(std::string_view pattern) {
  std::string out;
  bool in_class = false;
  size_t i = 0;
  while (i < pattern.size()) {
    const char c = pattern[i];
    if (c == '\\') {
      if (i + 1 == pattern.size())
        throw std::invalid_argument(fmt::format("regex {:?} ends with a lone backslash", pattern));
      const char e = pattern[i + 1];
      switch (e) {
        case 's': out += "\\p{White_Space}"; break;
        case 'S': out += "\\P{White_Space}"; break;
        case 'h': out += "\\p{ASCII_Hex_Digit}"; break;
        case 'H': out += "\\P{ASCII_Hex_Digit}"; break;
        case 'd': out += property(pattern, i, "Nd", false, in_class); break;
        case 'D': out += property(pattern, i, "Nd", true, in_class); break;
        case 'p':
        case 'P': {
          const size_t close = pattern.find('}', i);
          if (i + 2 >= pattern.size() || pattern[i + 2] != '{' || close == std::string_view::npos)
            unsupported(pattern, i, "a \\p without {name}", "write \\p{L}");
          std::string_view name = pattern.substr(i + 3, close - i - 3);
          bool negated = e == 'P';
          if (!name.empty() && name.front() == '^') {
            negated = !negated;
            name.remove_prefix(1);
          }
          out += property(pattern, i, name, negated, in_class);
          i = close + 1;
          continue;
        }
        case 'w':
        case 'W':
        case 'b':
        case 'B': unsupported(pattern, i, fmt::format("\\{}", e), "Oniguruma's word characters differ from PCRE2's");
        case 'Q': unsupported(pattern, i, "\\Q", "Oniguruma's Ruby syntax has no quoting");
        default: out += c; out += e;
      }
      i += 2;
      continue;
    }
    if (in_class && c == '[')
      unsupported(pattern, i, "'[' inside a character class",
                  "Oniguruma reads a nested class or a POSIX bracket there");
    if (in_class && c == '&' && i + 1 < pattern.size() && pattern[i + 1] == '&')
      unsupported(pattern, i, "'&&'", "PCRE2 has no class intersection");
    out += c;
    ++i;
    if (c == '[' && !in_class) {
      in_class = true;
      // A ']' right after '[' or '[^' is a literal, not the end of the class.
      if (i < pattern.size() && pattern[i] == '^') out += pattern[i++];
      if (i < pattern.size() && pattern[i] == ']') out += pattern[i++];
    } else if (c == ']' && in_class) {
      in_class = false;
    }
  }
  return out;
}

}  // namespace

Regex::Regex(std::string_view oniguruma_pattern) {
  const std::string translated = to_pcre2(oniguruma_pattern);
  const std::unique_ptr<pcre2_compile_context, decltype(&pcre2_compile_context_free)> context(
      pcre2_compile_context_create(nullptr), pcre2_compile_context_free);
  pcre2_set_newline(context.get(), PCRE2_NEWLINE_LF);
  int error = 0;
  PCRE2_SIZE offset = 0;
  // Ruby's ^ and $ always match at line breaks.
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE, &error, &offset, context.get());
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw std::invalid_argument(fmt::format("regex {:?} does not compile (as {:?}): {} at offset {}", oniguruma_pattern,
                                            translated, reinterpret_cast<const char*>(message), offset));
  }
  code_.reset(code, pcre2_code_free);
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // best effort: the interpreter gives the same matches
}

std::string Regex::escape(std::string_view literal) {
  std::string out;
  for (const char c : literal) {
    const auto u = static_cast<unsigned char>(c);
    const bool plain =
        u >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!plain) out += '\\';
    out += c;
  }
  return out;
}

std::vector<RegexMatch> Regex::find_all(std::string_view utf8) const {
  const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(pcre2_match_data_create(1, nullptr),
                                                                                 pcre2_match_data_free);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(utf8.data());
  std::vector<RegexMatch> matches;
  std::optional<size_t> last_end;
  size_t pos = 0;
  while (pos <= utf8.size()) {
    const int rc = pcre2_match(code_.get(), subject, utf8.size(), pos, PCRE2_NO_UTF_CHECK, data.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof message);
      throw std::runtime_error(fmt::format("regex match failed at byte {} of a {}-byte text: {}", pos, utf8.size(),
                                           reinterpret_cast<const char*>(message)));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    const RegexMatch m{ovector[0], ovector[1]};
    if (m.begin == m.end && last_end == m.end) {
      if (pos == utf8.size()) break;
      next_code_point(utf8, pos);
      continue;
    }
    matches.push_back(m);
    pos = m.end;
    last_end = m.end;
  }
  return matches;
}

}  // namespace vinci::text
