#include "text/jinja.h"

#include <unordered_map>

#include <fmt/format.h>

#include "text/jinja_ast.h"
#include "text/jinja_builtins.h"
#include "text/jinja_parser.h"

namespace vinci::text::jinja {

Error::Error(int line, std::string message, bool unsupported)
    : std::runtime_error(line > 0 ? fmt::format("line {}: {}", line, message) : message),
      line_(line),
      message_(std::move(message)),
      unsupported_(unsupported) {}

namespace {

enum class Flow { normal, break_, continue_ };

class Renderer {
 public:
  explicit Renderer(const nlohmann::ordered_json& variables) {
    if (!variables.is_object()) fail("template variables must be a JSON object");
    for (const auto& [name, value] : variables.items()) context_.insert_or_assign(name, from_json(value));
  }

  std::string run(const Body& body) {
    scopes_.emplace_back();
    exec(body);
    return std::move(out_);
  }

 private:
  using Scope = std::unordered_map<std::string, Value>;
  std::unordered_map<std::string, Value> context_;
  // The template's own scope, then one per for-loop iteration. Jinja2 gives every iteration a
  // fresh scope: a set inside the body is gone at the next iteration and after the loop.
  std::vector<Scope> scopes_;
  std::string out_;

  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto found = it->find(name); found != it->end()) return found->second;
    if (auto found = context_.find(name); found != context_.end()) return found->second;
    Value g = global(name);
    if (!g.is_undefined()) return g;
    return Value::undefined(fmt::format("'{}' is undefined", name));
  }

  void assign(const std::vector<std::string>& targets, const Value& value) {
    if (targets.size() == 1) {
      scopes_.back().insert_or_assign(targets[0], value);
      return;
    }
    std::vector<Value> items = iterate(value);
    if (items.size() != targets.size())
      fail(fmt::format("cannot unpack {} values into {} names", items.size(), targets.size()));
    for (size_t i = 0; i < targets.size(); ++i) scopes_.back().insert_or_assign(targets[i], items[i]);
  }

  Flow exec(const Body& body) {
    for (const auto& stmt : body) {
      Flow flow;
      try {
        flow = exec(*stmt);
      } catch (const Error& e) {
        if (e.line() > 0) throw;
        throw Error(stmt->line, e.message(), e.unsupported());
      }
      if (flow != Flow::normal) return flow;
    }
    return Flow::normal;
  }

  Flow exec(const Stmt& s) {
    switch (s.kind) {
      case Stmt::Kind::text: out_ += s.text; return Flow::normal;
      case Stmt::Kind::output: out_ += to_str(eval(*s.expr)); return Flow::normal;
      case Stmt::Kind::if_:
        for (const auto& branch : s.branches)
          if (!branch.condition || truthy(eval(*branch.condition))) return exec(branch.body);
        return Flow::normal;
      case Stmt::Kind::for_: exec_for(s); return Flow::normal;
      case Stmt::Kind::set: exec_set(s); return Flow::normal;
      case Stmt::Kind::set_block: {
        std::string saved = std::move(out_);
        out_.clear();
        exec(s.body);
        std::swap(saved, out_);
        assign(s.targets, Value::string(std::move(saved)));
        return Flow::normal;
      }
      case Stmt::Kind::break_: return Flow::break_;
      case Stmt::Kind::continue_: return Flow::continue_;
      case Stmt::Kind::scope: return exec(s.body);
    }
    return Flow::normal;
  }

  void exec_set(const Stmt& s) {
    Value value = eval(*s.expr);
    if (s.attribute.empty()) {
      assign(s.targets, value);
      return;
    }
    Value target = lookup(s.targets[0]);
    if (!target.is_namespace()) fail("cannot assign attribute on non-namespace object");
    if (s.attribute.starts_with("_"))
      fail(fmt::format("chat templates cannot store underscore-prefixed attributes on a namespace, but got '{}'",
                       s.attribute));
    target.as_namespace().attributes.set(s.attribute, std::move(value));
  }

  void exec_for(const Stmt& s) {
    std::vector<Value> items = iterate(eval(*s.expr));
    if (s.filter) {
      std::vector<Value> kept;
      for (auto& item : items) {
        scopes_.emplace_back();
        assign(s.targets, item);
        bool keep = truthy(eval(*s.filter));
        scopes_.pop_back();
        if (keep) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      exec(s.else_body);
      return;
    }
    const auto n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      scopes_.emplace_back();
      assign(s.targets, items[static_cast<size_t>(i)]);
      scopes_.back().insert_or_assign("loop", loop_object(items, i));
      Flow flow = exec(s.body);
      scopes_.pop_back();
      if (flow == Flow::break_) break;
    }
  }

  static Value loop_object(const std::vector<Value>& items, int64_t i) {
    const auto n = static_cast<int64_t>(items.size());
    Dict loop;
    loop.set("index", Value::integer(i + 1));
    loop.set("index0", Value::integer(i));
    loop.set("revindex", Value::integer(n - i));
    loop.set("revindex0", Value::integer(n - i - 1));
    loop.set("first", Value::boolean(i == 0));
    loop.set("last", Value::boolean(i == n - 1));
    loop.set("length", Value::integer(n));
    loop.set("depth", Value::integer(1));
    loop.set("depth0", Value::integer(0));
    if (i > 0) loop.set("previtem", items[static_cast<size_t>(i - 1)]);
    if (i + 1 < n) loop.set("nextitem", items[static_cast<size_t>(i + 1)]);
    loop.set("cycle", Value::function("loop.cycle", [i](Args& args) {
               if (args.positional.empty()) fail("no items for cycling given");
               return args.positional[static_cast<size_t>(i) % args.positional.size()];
             }));
    return Value::dict(std::move(loop));
  }

  Args eval_args(const Expr& e, size_t first) {
    Args args;
    for (size_t i = first; i < e.operands.size(); ++i) args.positional.push_back(eval(*e.operands[i]));
    for (const auto& [name, expr] : e.named) args.named.emplace_back(name, eval(*expr));
    return args;
  }

  Value eval(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::literal: return e.value;
      case Expr::Kind::name: return lookup(e.name);
      case Expr::Kind::list:
      case Expr::Kind::tuple: {
        std::vector<Value> items;
        for (const auto& item : e.operands) items.push_back(eval(*item));
        return Value::list(std::move(items), e.kind == Expr::Kind::tuple);
      }
      case Expr::Kind::dict: {
        Dict d;
        for (size_t i = 0; i < e.operands.size(); i += 2) {
          Value key = eval(*e.operands[i]);
          if (!key.is_string()) fail(fmt::format("dict keys must be strings, not {}", type_name(key)));
          d.set(key.as_string(), eval(*e.operands[i + 1]));
        }
        return Value::dict(std::move(d));
      }
      case Expr::Kind::attr: return get_attr(eval(*e.operands[0]), e.name);
      case Expr::Kind::item: return get_item(eval(*e.operands[0]), eval(*e.operands[1]));
      case Expr::Kind::slice: {
        Value seq = eval(*e.operands[0]);
        auto bound = [&](size_t i) { return e.operands[i] ? eval(*e.operands[i]) : Value::none(); };
        return slice(seq, bound(1), bound(2), bound(3));
      }
      case Expr::Kind::call: {
        Value callee = eval(*e.operands[0]);
        require_defined(callee);
        if (!callee.is_function()) fail(fmt::format("'{}' object is not callable", type_name(callee)));
        Args args = eval_args(e, 1);
        return callee.as_function().call(args);
      }
      case Expr::Kind::filter: {
        Value subject = eval(*e.operands[0]);
        Args args = eval_args(e, 1);
        return apply_filter(e.name, subject, args);
      }
      case Expr::Kind::test: {
        Value subject = eval(*e.operands[0]);
        Args args = eval_args(e, 1);
        return Value::boolean(apply_test(e.name, subject, args) != e.negated);
      }
      case Expr::Kind::negate: return negate(eval(*e.operands[0]));
      case Expr::Kind::plus: {
        Value v = eval(*e.operands[0]);
        require_defined(v);
        if (!v.is_number()) fail(fmt::format("bad operand type for unary +: '{}'", type_name(v)));
        return v.is_bool() ? Value::integer(v.as_int()) : v;
      }
      case Expr::Kind::not_: return Value::boolean(!truthy(eval(*e.operands[0])));
      case Expr::Kind::and_: {
        Value left = eval(*e.operands[0]);
        return truthy(left) ? eval(*e.operands[1]) : left;
      }
      case Expr::Kind::or_: {
        Value left = eval(*e.operands[0]);
        return truthy(left) ? left : eval(*e.operands[1]);
      }
      case Expr::Kind::binary: return arithmetic(e.name, eval(*e.operands[0]), eval(*e.operands[1]));
      case Expr::Kind::compare: {
        Value left = eval(*e.operands[0]);
        for (size_t i = 0; i < e.ops.size(); ++i) {
          Value right = eval(*e.operands[i + 1]);
          const std::string& op = e.ops[i];
          bool holds = op == "=="       ? equal(left, right)
                       : op == "!="     ? !equal(left, right)
                       : op == "in"     ? contains(right, left)
                       : op == "not in" ? !contains(right, left)
                                        : compare(op, left, right);
          if (!holds) return Value::boolean(false);
          left = std::move(right);
        }
        return Value::boolean(true);
      }
      case Expr::Kind::concat: {
        std::string out;
        for (const auto& part : e.operands) out += to_str(eval(*part));
        return Value::string(std::move(out));
      }
      case Expr::Kind::cond:
        if (truthy(eval(*e.operands[1]))) return eval(*e.operands[0]);
        if (e.operands[2]) return eval(*e.operands[2]);
        return Value::undefined(fmt::format(
            "the inline if-expression on line {} evaluated to false and no else section was defined.", e.line));
    }
    fail("unknown expression");
  }
};

}  // namespace

Template Template::parse(std::string_view source) {
  Template t;
  t.body_ = std::make_shared<const Body>(parse_template(source));
  return t;
}

std::string Template::render(const nlohmann::ordered_json& variables) const { return Renderer(variables).run(*body_); }

}  // namespace vinci::text::jinja
