// Tokens into the template's tree, following jinja2's parser.py rule for rule: operator precedence
// is where a re-implementation silently drifts from Python's output.
#include "text/jinja_parser.h"

#include <algorithm>
#include <initializer_list>

#include <fmt/format.h>

#include "text/jinja_builtins.h"
#include "text/jinja_lexer.h"

namespace vinci::text::jinja {
namespace {

const std::vector<std::string_view> kUnsupportedTags = {"macro",      "call",   "filter", "block",    "extends",
                                                        "include",    "import", "from",   "raw",      "with",
                                                        "autoescape", "do",     "trans",  "pluralize"};

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
  [[noreturn]] void unsupported(const std::string& message) const {
    throw Error(cur().line, "unsupported construct: " + message, true);
  }

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
        throw Error(opened_at,
                    fmt::format("{{% {} %}} is never closed: expected {{% {} %}} before the end of the template",
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
        if (cur().type != Token::Type::name)
          fail(fmt::format("expected a tag name after '{{%', got {}", describe(cur())));
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
        if (!s->attribute.empty() || s->targets.size() != 1)
          fail("a block assignment ({% set x %}...{% endset %}) takes one plain name");
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
      unsupported(
          fmt::format("{{% {} %}} (vinci's Jinja subset covers the tags if, for, set, break, continue "
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
      if (op(","))
        is_tuple = true;
      else
        break;
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
      if (cur().type == Token::Type::op && (op("==") || op("!=") || op("<") || op("<=") || op(">") || op(">="))) {
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
      if (cur().type != Token::Type::integer)
        fail(fmt::format("expected an attribute name or a number after '.', got {}", describe(cur())));
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
    if (op(":") || op("]") || op(","))
      bounds.push_back(nullptr);
    else
      bounds.push_back(parse_expression(true));
    if (op(":")) {
      next();
      if (op("]") || op(","))
        bounds.push_back(nullptr);
      else
        bounds.push_back(parse_expression(true));
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
      throw Error(line, fmt::format("unsupported construct: filter '{}' is not in vinci's Jinja subset", e->name),
                  true);
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

Body parse_template(std::string_view source) { return Parser(lex(source)).parse(); }

}  // namespace vinci::text::jinja
