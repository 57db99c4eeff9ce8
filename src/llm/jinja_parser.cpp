// Lexing and parsing follow jinja2's lexer.py and parser.py rule for rule, because whitespace
// control (trim_blocks, lstrip_blocks, "-" and "+" markers) and operator precedence are where a
// re-implementation silently drifts from Python's output.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <initializer_list>

#include <fmt/format.h>
#include <utf8proc.h>

#include "llm/jinja_ast.h"
#include "llm/jinja_builtins.h"

namespace vinci::llm::jinja {
namespace {

struct Token {
  enum class Type { text, variable_begin, variable_end, block_begin, block_end, name, string, integer, floating, op, eof };
  Type type;
  std::string value;  // text, name, operator, or the decoded string literal
  int line;
  int64_t integer = 0;
  double floating = 0;
};

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
    line_ += static_cast<int>(std::count(s_.begin() + static_cast<std::ptrdiff_t>(pos_),
                                         s_.begin() + static_cast<std::ptrdiff_t>(p), '\n'));
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
        throw Error(line_, fmt::format("unexpected end of template: a tag is missing its closing '{}'",
                                       block ? "%}" : "}}"));
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
      base = std::tolower(static_cast<unsigned char>(s[i + 1])) == 'b' ? 2 : std::tolower(static_cast<unsigned char>(s[i + 1])) == 'o' ? 8 : 16;
      size_t j = i + 2;
      auto valid = [base](char c) {
        int v = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                : std::isxdigit(static_cast<unsigned char>(c)) ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                                                               : 99;
        return v < base;
      };
      size_t start = j;
      while (j < s.size() && (valid(s[j]) || (s[j] == '_' && j + 1 < s.size() && valid(s[j + 1])))) ++j;
      if (j == start) base = 10;
      else i = j;
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
        if (!std::isxdigit(static_cast<unsigned char>(c))) throw Error(line, "truncated \\x, \\u or \\U escape in a string");
        v = v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
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
        case 'x': append_utf8(out, hex(i, 2)); i += 2; break;
        case 'u': append_utf8(out, hex(i, 4)); i += 4; break;
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
            for (int k = 0; k < 2 && i < s_.size() && s_[i] >= '0' && s_[i] <= '7'; ++k) v = v * 8 + static_cast<uint32_t>(s_[i++] - '0');
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
      throw Error(line_, fmt::format("unexpected character '{}' inside a tag", rest.substr(0, static_cast<size_t>(cp_len))));
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

const std::vector<std::string_view> kUnsupportedTags = {
    "macro", "call", "filter", "block", "extends", "include", "import", "from", "raw",
    "with", "autoescape", "do", "trans", "pluralize"};

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Body parse() {
    std::string end;
    Body body = parse_body({}, end);
    return body;
  }

 private:
  std::vector<Token> t_;
  size_t i_ = 0;
  int loop_depth_ = 0;

  const Token& cur() const { return t_[i_]; }
  const Token& look(size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  void next() {
    if (i_ + 1 < t_.size()) ++i_;
  }
  bool op(std::string_view o) const { return cur().type == Token::Type::op && cur().value == o; }
  bool name(std::string_view n) const { return cur().type == Token::Type::name && cur().value == n; }

  [[noreturn]] void fail(const std::string& message) const { throw Error(cur().line, message); }
  [[noreturn]] void unsupported(const std::string& message) const { throw Error(cur().line, "unsupported construct: " + message, true); }

  void expect_op(std::string_view o) {
    if (!op(o)) fail(fmt::format("expected '{}', got {}", o, describe(cur())));
    next();
  }
  void expect_name(std::string_view n) {
    if (!name(n)) fail(fmt::format("expected '{}', got {}", n, describe(cur())));
    next();
  }
  std::string take_name(const char* what) {
    if (cur().type != Token::Type::name) fail(fmt::format("expected {}, got {}", what, describe(cur())));
    std::string n = cur().value;
    next();
    return n;
  }
  void expect_block_end() {
    if (cur().type != Token::Type::block_end) fail(fmt::format("expected '%}}', got {}", describe(cur())));
    next();
  }

  // Statements until a {% tag %} whose name is in `ends`; the tag's name is stored in `found`
  // and consumed, its arguments and %} are left to the caller.
  Body parse_body(std::initializer_list<std::string_view> ends, std::string& found, int opened_at = 0,
                  std::string_view opener = "") {
    Body body;
    while (true) {
      const Token& t = cur();
      if (t.type == Token::Type::eof) {
        if (ends.size() == 0) return body;
        // Name the closing tag ("endfor"), not an intermediate one ("else") the block may also take.
        auto closer = std::find_if(ends.begin(), ends.end(), [](std::string_view e) { return e.starts_with("end"); });
        throw Error(opened_at, fmt::format("{{% {} %}} is never closed: expected {{% {} %}} before the end of the template",
                                           opener, closer != ends.end() ? *closer : *std::prev(ends.end())));
      }
      if (t.type == Token::Type::text) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::text;
        s->line = t.line;
        s->text = t.value;
        body.push_back(std::move(s));
        next();
      } else if (t.type == Token::Type::variable_begin) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::output;
        s->line = t.line;
        next();
        s->expr = parse_tuple(true);
        if (cur().type != Token::Type::variable_end) fail(fmt::format("expected '}}}}', got {}", describe(cur())));
        next();
        body.push_back(std::move(s));
      } else if (t.type == Token::Type::block_begin) {
        next();
        if (cur().type != Token::Type::name) fail(fmt::format("expected a tag name after '{{%', got {}", describe(cur())));
        const std::string tag = cur().value;
        if (std::find(ends.begin(), ends.end(), tag) != ends.end()) {
          found = tag;
          next();
          return body;
        }
        body.push_back(parse_statement());
      } else {
        fail(fmt::format("unexpected {}", describe(t)));
      }
    }
  }

  std::unique_ptr<Stmt> parse_statement() {
    const std::string tag = cur().value;
    const int line = cur().line;
    auto s = std::make_unique<Stmt>();
    s->line = line;
    if (tag == "if") {
      s->kind = Stmt::Kind::if_;
      next();
      std::string found = "if";
      while (found != "endif") {
        Branch b;
        bool is_else = found == "else";
        if (!is_else) b.condition = parse_tuple(false);
        expect_block_end();
        if (is_else)
          b.body = parse_body({"endif"}, found, line, "if");
        else
          b.body = parse_body({"elif", "else", "endif"}, found, line, "if");
        s->branches.push_back(std::move(b));
      }
      expect_block_end();
    } else if (tag == "for") {
      s->kind = Stmt::Kind::for_;
      next();
      s->targets = parse_targets("in");
      expect_name("in");
      s->expr = parse_tuple(false, {"recursive"});
      if (name("if")) {
        next();
        s->filter = parse_expression(true);
      }
      if (name("recursive")) unsupported("recursive for loops ({% for ... recursive %})");
      expect_block_end();
      ++loop_depth_;
      std::string found;
      s->body = parse_body({"endfor", "else"}, found, line, "for");
      --loop_depth_;
      if (found == "else") {
        expect_block_end();
        s->else_body = parse_body({"endfor"}, found, line, "for");
      }
      expect_block_end();
    } else if (tag == "set") {
      next();
      if (cur().type == Token::Type::name && look().type == Token::Type::op && look().value == ".") {
        s->targets = {cur().value};
        next();
        next();
        s->attribute = take_name("an attribute name");
      } else {
        s->targets = parse_targets("=");
      }
      if (op("=")) {
        next();
        s->kind = Stmt::Kind::set;
        s->expr = parse_tuple(true);
        expect_block_end();
      } else {
        if (op("|")) unsupported("filtered block assignment ({% set x | filter %})");
        if (!s->attribute.empty() || s->targets.size() != 1) fail("a block assignment ({% set x %}...{% endset %}) takes one plain name");
        s->kind = Stmt::Kind::set_block;
        expect_block_end();
        std::string found;
        s->body = parse_body({"endset"}, found, line, "set");
        expect_block_end();
      }
    } else if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) fail(fmt::format("{{% {} %}} outside a for loop", tag));
      s->kind = tag == "break" ? Stmt::Kind::break_ : Stmt::Kind::continue_;
      next();
      expect_block_end();
    } else if (tag == "generation") {
      s->kind = Stmt::Kind::scope;
      next();
      expect_block_end();
      std::string found;
      s->body = parse_body({"endgeneration"}, found, line, "generation");
      expect_block_end();
    } else if (std::find(kUnsupportedTags.begin(), kUnsupportedTags.end(), tag) != kUnsupportedTags.end()) {
      unsupported(fmt::format("{{% {} %}} (vinci's Jinja subset covers the tags if, for, set, break, continue "
                              "and generation)",
                              tag));
    } else if (tag.starts_with("end") || tag == "elif" || tag == "else") {
      fail(fmt::format("unexpected {{% {} %}}: there is no open block it could close", tag));
    } else {
      fail(fmt::format("unknown tag {{% {} %}}", tag));
    }
    return s;
  }

  // Names (or a flat tuple of names, with or without parentheses) before `stop`.
  std::vector<std::string> parse_targets(std::string_view stop) {
    std::vector<std::string> names;
    bool parens = op("(");
    if (parens) next();
    while (true) {
      names.push_back(take_name("a variable name"));
      if (!op(",")) break;
      next();
      if ((parens && op(")")) || name(stop) || op(stop)) break;
    }
    if (parens) expect_op(")");
    return names;
  }

  std::unique_ptr<Expr> node(Expr::Kind kind, int line, std::vector<ExprPtr> operands) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    e->operands = std::move(operands);
    return e;
  }

  static std::vector<ExprPtr> ops(ExprPtr a) {
    std::vector<ExprPtr> v;
    v.push_back(std::move(a));
    return v;
  }
  static std::vector<ExprPtr> ops(ExprPtr a, ExprPtr b) {
    std::vector<ExprPtr> v = ops(std::move(a));
    v.push_back(std::move(b));
    return v;
  }

  bool tuple_end(std::initializer_list<std::string_view> extra_ends) const {
    if (cur().type == Token::Type::variable_end || cur().type == Token::Type::block_end || op(")")) return true;
    for (auto e : extra_ends)
      if (name(e)) return true;
    return false;
  }

  // jinja's parse_tuple: "a, b" is a tuple without parentheses in {{ }}, set and for.
  ExprPtr parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> extra_ends = {},
                      bool explicit_parentheses = false) {
    int line = cur().line;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) expect_op(",");
      if (tuple_end(extra_ends)) break;
      items.push_back(parse_expression(with_condexpr));
      if (op(",")) is_tuple = true;
      else break;
    }
    if (!is_tuple) {
      if (!items.empty()) return std::move(items[0]);
      if (!explicit_parentheses) fail(fmt::format("expected an expression, got {}", describe(cur())));
    }
    return node(Expr::Kind::tuple, line, std::move(items));
  }

  ExprPtr parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }

  ExprPtr parse_condexpr() {
    int line = cur().line;
    ExprPtr expr = parse_or();
    while (name("if")) {
      next();
      ExprPtr condition = parse_or();
      ExprPtr otherwise;
      if (name("else")) {
        next();
        otherwise = parse_condexpr();
      }
      std::vector<ExprPtr> v = ops(std::move(expr), std::move(condition));
      v.push_back(std::move(otherwise));
      expr = node(Expr::Kind::cond, line, std::move(v));
    }
    return expr;
  }

  ExprPtr parse_or() {
    int line = cur().line;
    ExprPtr left = parse_and();
    while (name("or")) {
      next();
      left = node(Expr::Kind::or_, line, ops(std::move(left), parse_and()));
    }
    return left;
  }

  ExprPtr parse_and() {
    int line = cur().line;
    ExprPtr left = parse_not();
    while (name("and")) {
      next();
      left = node(Expr::Kind::and_, line, ops(std::move(left), parse_not()));
    }
    return left;
  }

  ExprPtr parse_not() {
    if (name("not")) {
      int line = cur().line;
      next();
      return node(Expr::Kind::not_, line, ops(parse_not()));
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    int line = cur().line;
    ExprPtr first = parse_math1();
    std::vector<ExprPtr> operands;
    std::vector<std::string> comparisons;
    while (true) {
      std::string o;
      if (cur().type == Token::Type::op &&
          (op("==") || op("!=") || op("<") || op("<=") || op(">") || op(">="))) {
        o = cur().value;
        next();
      } else if (name("in")) {
        o = "in";
        next();
      } else if (name("not") && look().type == Token::Type::name && look().value == "in") {
        o = "not in";
        next();
        next();
      } else {
        break;
      }
      comparisons.push_back(o);
      operands.push_back(parse_math1());
    }
    if (comparisons.empty()) return first;
    operands.insert(operands.begin(), std::move(first));
    auto e = node(Expr::Kind::compare, line, std::move(operands));
    e->ops = std::move(comparisons);
    return e;
  }

  ExprPtr binary(std::string o, ExprPtr a, ExprPtr b, int line) {
    auto e = node(Expr::Kind::binary, line, ops(std::move(a), std::move(b)));
    e->name = std::move(o);
    return e;
  }

  ExprPtr parse_math1() {
    int line = cur().line;
    ExprPtr left = parse_concat();
    while (op("+") || op("-")) {
      std::string o = cur().value;
      next();
      left = binary(o, std::move(left), parse_concat(), line);
    }
    return left;
  }

  ExprPtr parse_concat() {
    int line = cur().line;
    std::vector<ExprPtr> args;
    args.push_back(parse_math2());
    while (op("~")) {
      next();
      args.push_back(parse_math2());
    }
    if (args.size() == 1) return std::move(args[0]);
    return node(Expr::Kind::concat, line, std::move(args));
  }

  ExprPtr parse_math2() {
    int line = cur().line;
    ExprPtr left = parse_pow();
    while (op("*") || op("/") || op("//") || op("%")) {
      std::string o = cur().value;
      next();
      left = binary(o, std::move(left), parse_pow(), line);
    }
    return left;
  }

  ExprPtr parse_pow() {
    int line = cur().line;
    ExprPtr left = parse_unary(true);
    while (op("**")) {
      next();
      left = binary("**", std::move(left), parse_unary(true), line);
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    int line = cur().line;
    ExprPtr e;
    if (op("-") || op("+")) {
      bool minus = op("-");
      next();
      e = node(minus ? Expr::Kind::negate : Expr::Kind::plus, line, ops(parse_unary(false)));
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    if (with_filter) e = parse_filter_expr(std::move(e));
    return e;
  }

  ExprPtr literal(Value v, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = Expr::Kind::literal;
    e->line = line;
    e->value = std::move(v);
    return e;
  }

  ExprPtr parse_primary() {
    const Token& t = cur();
    int line = t.line;
    if (t.type == Token::Type::name) {
      std::string n = t.value;
      next();
      if (n == "true" || n == "True") return literal(Value::boolean(true), line);
      if (n == "false" || n == "False") return literal(Value::boolean(false), line);
      if (n == "none" || n == "None") return literal(Value::none(), line);
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Kind::name;
      e->line = line;
      e->name = n;
      return e;
    }
    if (t.type == Token::Type::string) {
      std::string s;
      while (cur().type == Token::Type::string) {  // adjacent literals concatenate, as in Python
        s += cur().value;
        next();
      }
      return literal(Value::string(std::move(s)), line);
    }
    if (t.type == Token::Type::integer) {
      Value v = Value::integer(t.integer);
      next();
      return literal(std::move(v), line);
    }
    if (t.type == Token::Type::floating) {
      Value v = Value::floating(t.floating);
      next();
      return literal(std::move(v), line);
    }
    if (op("(")) {
      next();
      ExprPtr e = parse_tuple(true, {}, true);
      expect_op(")");
      return e;
    }
    if (op("[")) {
      next();
      std::vector<ExprPtr> items;
      while (!op("]")) {
        if (!items.empty()) expect_op(",");
        if (op("]")) break;
        items.push_back(parse_expression(true));
      }
      expect_op("]");
      return node(Expr::Kind::list, line, std::move(items));
    }
    if (op("{")) {
      next();
      std::vector<ExprPtr> items;
      while (!op("}")) {
        if (!items.empty()) expect_op(",");
        if (op("}")) break;
        items.push_back(parse_expression(true));
        expect_op(":");
        items.push_back(parse_expression(true));
      }
      expect_op("}");
      return node(Expr::Kind::dict, line, std::move(items));
    }
    fail(fmt::format("unexpected {}", describe(t)));
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      if (op(".") || op("[")) {
        e = parse_subscript(std::move(e));
      } else if (op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_filter_expr(ExprPtr e) {
    while (true) {
      if (op("|")) {
        e = parse_filter(std::move(e));
      } else if (name("is")) {
        e = parse_test(std::move(e));
      } else if (op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr object) {
    int line = cur().line;
    if (op(".")) {
      next();
      if (cur().type == Token::Type::name) {
        auto e = node(Expr::Kind::attr, line, ops(std::move(object)));
        e->name = cur().value;
        next();
        return e;
      }
      if (cur().type != Token::Type::integer) fail(fmt::format("expected an attribute name or a number after '.', got {}", describe(cur())));
      ExprPtr index = literal(Value::integer(cur().integer), line);
      next();
      return node(Expr::Kind::item, line, ops(std::move(object), std::move(index)));
    }
    next();  // [
    std::vector<ExprPtr> keys;
    bool sliced = false;
    std::vector<ExprPtr> bounds;
    while (!op("]")) {
      if (!keys.empty() || sliced) expect_op(",");
      ExprPtr key = parse_subscribed(bounds);
      if (key) {
        keys.push_back(std::move(key));
      } else {
        if (sliced || !keys.empty()) unsupported("a slice inside a tuple subscript");
        sliced = true;
      }
    }
    expect_op("]");
    if (sliced) {
      if (!keys.empty()) unsupported("a slice inside a tuple subscript");
      std::vector<ExprPtr> v = ops(std::move(object));
      for (auto& b : bounds) v.push_back(std::move(b));
      return node(Expr::Kind::slice, line, std::move(v));
    }
    if (keys.empty()) fail("expected an index inside '[]'");
    ExprPtr key = keys.size() == 1 ? std::move(keys[0]) : node(Expr::Kind::tuple, line, std::move(keys));
    return node(Expr::Kind::item, line, ops(std::move(object), std::move(key)));
  }

  // An index, returned; or a slice, whose three bounds go to `bounds` (null when omitted).
  ExprPtr parse_subscribed(std::vector<ExprPtr>& bounds) {
    ExprPtr start;
    if (!op(":")) {
      start = parse_expression(true);
      if (!op(":")) return start;
    }
    next();  // :
    bounds.push_back(std::move(start));
    if (op(":") || op("]") || op(",")) bounds.push_back(nullptr);
    else bounds.push_back(parse_expression(true));
    if (op(":")) {
      next();
      if (op("]") || op(",")) bounds.push_back(nullptr);
      else bounds.push_back(parse_expression(true));
    } else {
      bounds.push_back(nullptr);
    }
    return nullptr;
  }

  void parse_args(Expr& e) {
    expect_op("(");
    bool first = true;
    while (!op(")")) {
      if (!first) {
        expect_op(",");
        if (op(")")) break;
      }
      first = false;
      if (op("*") || op("**")) unsupported("*args and **kwargs in calls");
      if (cur().type == Token::Type::name && look().type == Token::Type::op && look().value == "=") {
        std::string key = cur().value;
        next();
        next();
        e.named.emplace_back(key, parse_expression(true));
      } else {
        if (!e.named.empty()) fail("a positional argument follows a keyword argument");
        e.operands.push_back(parse_expression(true));
      }
    }
    expect_op(")");
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto e = node(Expr::Kind::call, cur().line, ops(std::move(callee)));
    parse_args(*e);
    return e;
  }

  std::string dotted_name(const char* what) {
    std::string n = take_name(what);
    while (op(".")) {
      next();
      n += "." + take_name(what);
    }
    return n;
  }

  ExprPtr parse_filter(ExprPtr subject) {
    int line = cur().line;
    next();  // |
    auto e = node(Expr::Kind::filter, line, ops(std::move(subject)));
    e->name = dotted_name("a filter name");
    if (!has_filter(e->name))
      throw Error(line, fmt::format("unsupported construct: filter '{}' is not in vinci's Jinja subset", e->name), true);
    if (op("(")) parse_args(*e);
    return e;
  }

  ExprPtr parse_test(ExprPtr subject) {
    int line = cur().line;
    next();  // is
    auto e = node(Expr::Kind::test, line, ops(std::move(subject)));
    if (name("not")) {
      e->negated = true;
      next();
    }
    e->name = dotted_name("a test name");
    if (!has_test(e->name))
      throw Error(line, fmt::format("unsupported construct: test '{}' is not in vinci's Jinja subset", e->name), true);
    if (op("(")) {
      parse_args(*e);
    } else if ((cur().type == Token::Type::name || cur().type == Token::Type::string ||
                cur().type == Token::Type::integer || cur().type == Token::Type::floating || op("(") || op("[") ||
                op("{")) &&
               !name("else") && !name("or") && !name("and")) {
      if (name("is")) fail("you cannot chain multiple tests with 'is'");
      e->operands.push_back(parse_postfix(parse_primary()));
    }
    return e;
  }
};

}  // namespace

Body parse_template(std::string_view source) { return Parser(Lexer(source).run()).parse(); }

}  // namespace vinci::llm::jinja
