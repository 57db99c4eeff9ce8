// The parsed form of a template: expression and statement trees, immutable once built.
//
// The parsed form of a template: expression and statement trees, immutable once built, so one
// parse serves concurrent renders.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/jinja_value.h"

namespace vinci::text::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<const Expr>;

struct Expr {
  enum class Kind {
    literal,  // value
    name,     // name
    list,     // operands: items
    tuple,    // operands: items
    dict,     // operands: key, value, key, value, ...
    attr,     // operands[0].name
    item,     // operands[0][operands[1]]
    slice,    // operands[0][operands[1]:operands[2]:operands[3]], omitted bounds are null
    call,     // operands[0](operands[1..], named)
    filter,   // operands[0] | name(operands[1..], named)
    test,     // operands[0] is [not] name(operands[1..], named)
    negate,   // -operands[0]
    plus,     // +operands[0]
    not_,     // not operands[0]
    and_,     // operands[0] and operands[1]
    or_,      // operands[0] or operands[1]
    binary,   // operands[0] name operands[1], name one of + - * / // % **
    compare,  // operands[0] ops[0] operands[1] ops[1] ... (chained as in Python)
    concat,   // operands joined with ~
    cond,     // operands[0] if operands[1] else operands[2] (null: no else)
  };
  Kind kind;
  int line = 0;
  Value value;
  std::string name;
  std::vector<ExprPtr> operands;
  std::vector<std::pair<std::string, ExprPtr>> named;
  std::vector<std::string> ops;
  bool negated = false;
};

struct Stmt;
using Body = std::vector<std::unique_ptr<const Stmt>>;

struct Branch {
  ExprPtr condition;  // null for else
  Body body;
};

struct Stmt {
  enum class Kind {
    text,       // text
    output,     // {{ expr }}
    if_,        // branches
    for_,       // for targets in expr [if filter]: body [else: else_body]
    set,        // set targets = expr, or set targets[0].attribute = expr
    set_block,  // set targets[0]: body (the rendered body is the value)
    break_,
    continue_,
    scope,  // body rendered in place: {% generation %}, which only marks assistant text
  };
  Kind kind;
  int line = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr filter;
  std::vector<std::string> targets;
  std::string attribute;
  std::vector<Branch> branches;
  Body body;
  Body else_body;
};

}  // namespace vinci::text::jinja
