#include "text/jinja_lexer.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <utf8proc.h>

#include "text/jinja.h"
#include "text/jinja_value.h"

namespace vinci::text::jinja {

std::string describe(const Token& t) {
  switch (t.type) {
    case Token::Type::text: return "template text";
    case Token::Type::variable_begin: return "'{{'";
    case Token::Type::variable_end: return "'}}'";
    case Token::Type::block_begin: return "'{%'";
    case Token::Type::block_end: return "'%}'";
    case Token::Type::eof: return "end of template";
    case Token::Type::string: return "a string";
    case Token::Type::integer:
    case Token::Type::floating: return "a number";
    default: return "'" + t.value + "'";
  }
}

namespace {

bool ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Python's str.rstrip(): all Unicode whitespace.
std::string rstrip_space(const std::string& s) {
  std::u32string cps = to_code_points(s);
  size_t end = cps.size();
  while (end > 0 && is_space(cps[end - 1])) --end;
  return to_utf8(std::u32string_view(cps).substr(0, end));
}

bool all_space(std::string_view s) {
  if (s.empty()) return false;  // jinja's whitespace_re is \s+, so an empty run does not match
  for (char32_t c : to_code_points(s))
    if (!is_space(c)) return false;
  return true;
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) {
    // jinja2 splits on \r\n, \r and \n, rejoins with \n, and drops one trailing newline.
    for (size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\r') {
        s_ += '\n';
        if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      } else {
        s_ += source[i];
      }
    }
    if (!s_.empty() && s_.back() == '\n') s_.pop_back();
    check_utf8();
  }

  std::vector<Token> run() {
    bool line_starting = true;
    while (pos_ < s_.size()) {
      size_t tag = find_tag(pos_);
      if (tag == std::string::npos) {
        emit(Token::Type::text, s_.substr(pos_));
        advance_to(s_.size());
        break;
      }
      char kind = s_[tag + 1];
      size_t after = tag + 2;
      char sign = 0;
      if (after < s_.size() && (s_[after] == '-' || s_[after] == '+')) sign = s_[after++];
      std::string text = s_.substr(pos_, tag - pos_);
      if (sign == '-') {
        text = rstrip_space(text);
      } else if (sign != '+' && kind != '{') {  // lstrip_blocks: block and comment tags only
        size_t l = text.rfind('\n');
        l = l == std::string::npos ? 0 : l + 1;
        if ((l > 0 || line_starting) && all_space(std::string_view(text).substr(l))) text.resize(l);
      }
      if (!text.empty()) emit(Token::Type::text, text);
      advance_to(tag);
      if (kind == '#') {
        size_t end = s_.find("#}", after);
        if (end == std::string::npos) throw Error(line_, "missing end of comment tag '#}'");
        size_t stop = end + 2;
        if (end > after && s_[end - 1] == '-')
          stop = skip_space(stop);
        else if (!(end > after && s_[end - 1] == '+') && stop < s_.size() && s_[stop] == '\n')
          ++stop;  // trim_blocks
        line_starting = s_[stop - 1] == '\n';
        advance_to(stop);
        continue;
      }
      bool block = kind == '%';
      emit(block ? Token::Type::block_begin : Token::Type::variable_begin, "");
      advance_to(after);
      line_starting = lex_tag(block);
    }
    emit(Token::Type::eof, "");
    return std::move(out_);
  }

 private:
  std::string s_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> out_;

  void check_utf8() {
    const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s_.data());
    utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(s_.size());
    int line = 1;
    while (left > 0) {
      utf8proc_int32_t c = 0;
      utf8proc_ssize_t n = utf8proc_iterate(p, left, &c);
      if (n <= 0) throw Error(line, "the template is not valid UTF-8");
      if (c == '\n') ++line;
      p += n;
      left -= n;
    }
  }

  size_t find_tag(size_t from) const {
    for (size_t i = s_.find('{', from); i != std::string::npos && i + 1 < s_.size(); i = s_.find('{', i + 1))
      if (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#') return i;
    return std::string::npos;
  }

  void advance_to(size_t p) {
    line_ += static_cast<int>(
        std::count(s_.begin() + static_cast<std::ptrdiff_t>(pos_), s_.begin() + static_cast<std::ptrdiff_t>(p), '\n'));
    pos_ = p;
  }

  size_t skip_space(size_t p) const {
    while (p < s_.size()) {
      utf8proc_int32_t c = 0;
      utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s_.data() + p),
                                            static_cast<utf8proc_ssize_t>(s_.size() - p), &c);
      if (n <= 0 || !is_space(static_cast<char32_t>(c))) break;
      p += static_cast<size_t>(n);
    }
    return p;
  }

  Token& emit(Token::Type type, std::string value) {
    out_.push_back(Token{type, std::move(value), line_});
    return out_.back();
  }

  bool starts_with(std::string_view prefix) const { return std::string_view(s_).substr(pos_).starts_with(prefix); }

  // Lexes the inside of {% %} or {{ }} through its end marker; returns whether the text consumed
  // last ends a line (jinja's line_starting, which lstrip_blocks reads at the next tag).
  bool lex_tag(bool block) {
    std::string closers;  // jinja only ends a tag while brackets are balanced
    while (true) {
      if (closers.empty()) {
        size_t stop = std::string::npos;
        if (block) {
          if (starts_with("-%}"))
            stop = skip_space(pos_ + 3);
          else if (starts_with("+%}"))
            stop = pos_ + 3;
          else if (starts_with("%}"))
            stop = pos_ + 2 + (pos_ + 2 < s_.size() && s_[pos_ + 2] == '\n' ? 1 : 0);  // trim_blocks
        } else if (starts_with("-}}")) {
          stop = skip_space(pos_ + 3);
        } else if (starts_with("}}")) {
          stop = pos_ + 2;
        }
        if (stop != std::string::npos) {
          emit(block ? Token::Type::block_end : Token::Type::variable_end, "");
          bool ends_line = s_[stop - 1] == '\n';
          advance_to(stop);
          return ends_line;
        }
      }
      if (pos_ >= s_.size())
        throw Error(line_,
                    fmt::format("unexpected end of template: a tag is missing its closing '{}'", block ? "%}" : "}}"));
      char c = s_[pos_];
      if (ascii_space(c)) {
        advance_to(pos_ + 1);
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        lex_number();
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t end = pos_ + 1;
        while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) ++end;
        emit(Token::Type::name, s_.substr(pos_, end - pos_));
        advance_to(end);
      } else if (c == '\'' || c == '"') {
        lex_string(c);
      } else {
        lex_operator(closers);
      }
    }
  }

  static bool digits_run(std::string_view s, size_t& i, int (*is_digit)(int)) {
    // (\d+_)*\d+ : digits, with single underscores between groups
    if (i >= s.size() || !is_digit(static_cast<unsigned char>(s[i]))) return false;
    while (i < s.size()) {
      if (is_digit(static_cast<unsigned char>(s[i]))) {
        ++i;
      } else if (s[i] == '_' && i + 1 < s.size() && is_digit(static_cast<unsigned char>(s[i + 1]))) {
        ++i;
      } else {
        break;
      }
    }
    return true;
  }

  void lex_number() {
    std::string_view s(s_);
    auto clean = [](std::string_view text) {
      std::string out;
      for (char c : text)
        if (c != '_') out += c;
      return out;
    };
    // float first, as jinja tries it before integer; not right after a '.', so x.0.1 stays items
    if (pos_ == 0 || s[pos_ - 1] != '.') {
      size_t i = pos_;
      digits_run(s, i, isdigit);
      bool fraction = false;
      if (i < s.size() && s[i] == '.') {
        size_t j = i + 1;
        if (digits_run(s, j, isdigit)) {
          fraction = true;
          i = j;
        }
      }
      bool exponent = false;
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
        if (digits_run(s, j, isdigit)) {
          exponent = true;
          i = j;
        }
      }
      if (fraction || exponent) {
        Token& t = emit(Token::Type::floating, clean(s.substr(pos_, i - pos_)));
        t.floating = std::strtod(t.value.c_str(), nullptr);
        advance_to(i);
        return;
      }
    }
    size_t i = pos_;
    int base = 10;
    if (s[i] == '0' && i + 1 < s.size() && std::strchr("bBoOxX", s[i + 1]) && s[i + 1] != '\0') {
      base = std::tolower(static_cast<unsigned char>(s[i + 1])) == 'b'   ? 2
             : std::tolower(static_cast<unsigned char>(s[i + 1])) == 'o' ? 8
                                                                         : 16;
      size_t j = i + 2;
      auto valid = [base](char c) {
        int v = std::isdigit(static_cast<unsigned char>(c))    ? c - '0'
                : std::isxdigit(static_cast<unsigned char>(c)) ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                                                               : 99;
        return v < base;
      };
      size_t start = j;
      while (j < s.size() && (valid(s[j]) || (s[j] == '_' && j + 1 < s.size() && valid(s[j + 1])))) ++j;
      if (j == start)
        base = 10;
      else
        i = j;
    }
    if (base == 10) {
      if (s[i] == '0') {  // 0(_?0)*
        ++i;
        while (i < s.size() && (s[i] == '0' || (s[i] == '_' && i + 1 < s.size() && s[i + 1] == '0'))) ++i;
      } else {
        digits_run(s, i, isdigit);
      }
    }
    std::string digits = clean(s.substr(pos_, i - pos_));
    Token& t = emit(Token::Type::integer, digits);
    errno = 0;
    t.integer = std::strtoll(base == 10 ? digits.c_str() : digits.c_str() + 2, nullptr, base);
    if (errno == ERANGE) throw Error(line_, fmt::format("integer literal {} does not fit in 64 bits", digits));
    advance_to(i);
  }

  // Python's unicode-escape decoding, which jinja applies to string literals.
  void lex_string(char quote) {
    int line = line_;
    size_t i = pos_ + 1;
    std::string out;
    auto hex = [&](size_t at, int n) {
      if (at + static_cast<size_t>(n) > s_.size()) throw Error(line, "truncated \\x, \\u or \\U escape in a string");
      uint32_t v = 0;
      for (int k = 0; k < n; ++k) {
        char c = s_[at + static_cast<size_t>(k)];
        if (!std::isxdigit(static_cast<unsigned char>(c)))
          throw Error(line, "truncated \\x, \\u or \\U escape in a string");
        v = v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(c))
                                               ? c - '0'
                                               : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
      }
      return v;
    };
    while (true) {
      if (i >= s_.size()) throw Error(line, "unterminated string literal");
      char c = s_[i];
      if (c == quote) break;
      if (c != '\\') {
        out += c;
        ++i;
        continue;
      }
      if (i + 1 >= s_.size()) throw Error(line, "unterminated string literal");
      char e = s_[i + 1];
      i += 2;
      switch (e) {
        case '\n': break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x':
          append_utf8(out, hex(i, 2));
          i += 2;
          break;
        case 'u':
          append_utf8(out, hex(i, 4));
          i += 4;
          break;
        case 'U': {
          uint32_t v = hex(i, 8);
          if (v > 0x10ffff) throw Error(line, "\\U escape out of the Unicode range");
          append_utf8(out, v);
          i += 8;
          break;
        }
        case 'N': throw Error(line, "unsupported construct: \\N{...} escapes; write the character itself", true);
        default:
          if (e >= '0' && e <= '7') {
            uint32_t v = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && i < s_.size() && s_[i] >= '0' && s_[i] <= '7'; ++k)
              v = v * 8 + static_cast<uint32_t>(s_[i++] - '0');
            append_utf8(out, v);
          } else {  // unknown escapes keep their backslash in Python
            out += '\\';
            out += e;
          }
      }
    }
    Token& t = emit(Token::Type::string, std::move(out));
    t.line = line;
    advance_to(i + 1);
  }

  void lex_operator(std::string& closers) {
    static constexpr std::array<std::string_view, 6> two = {"//", "**", "==", "!=", ">=", "<="};
    std::string_view rest = std::string_view(s_).substr(pos_);
    for (auto op : two)
      if (rest.starts_with(op)) {
        emit(Token::Type::op, std::string(op));
        advance_to(pos_ + 2);
        return;
      }
    char c = rest.front();
    if (!std::strchr("+-/*%~[](){}><=.:|,;", c)) {
      int cp_len = 1;
      utf8proc_int32_t cp = 0;
      if (utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(rest.data()),
                                                static_cast<utf8proc_ssize_t>(rest.size()), &cp);
          n > 0)
        cp_len = static_cast<int>(n);
      throw Error(line_,
                  fmt::format("unexpected character '{}' inside a tag", rest.substr(0, static_cast<size_t>(cp_len))));
    }
    if (c == '(') closers += ')';
    if (c == '[') closers += ']';
    if (c == '{') closers += '}';
    if (c == ')' || c == ']' || c == '}') {
      if (closers.empty()) throw Error(line_, fmt::format("unexpected '{}'", c));
      if (closers.back() != c) throw Error(line_, fmt::format("unexpected '{}', expected '{}'", c, closers.back()));
      closers.pop_back();
    }
    emit(Token::Type::op, std::string(1, c));
    advance_to(pos_ + 1);
  }
};

}  // namespace

std::vector<Token> lex(std::string_view source) { return Lexer(source).run(); }

}  // namespace vinci::text::jinja
