// A Jinja2 subset interpreter for chat templates. It follows Jinja2 as transformers configures it
// for apply_chat_template (trim_blocks, lstrip_blocks, break/continue, its tojson,
// raise_exception, strftime_now and namespace), so a template renders byte for byte as in Python.
// Constructs outside the subset (macros, includes, raw blocks, unknown filters) are rejected when
// the template is parsed, with the line and the construct, rather than rendered approximately.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace vinci::text::jinja {

// line() is 1-based, or 0 where the failure is not tied to a place in the template.
// unsupported(): the template uses something outside the subset (as opposed to failing on its
// own terms, e.g. raise_exception), so another template is the remedy.
class Error : public std::runtime_error {
 public:
  Error(int line, std::string message, bool unsupported = false);
  int line() const { return line_; }
  const std::string& message() const { return message_; }  // without the "line N: " prefix
  bool unsupported() const { return unsupported_; }

 private:
  int line_;
  std::string message_;
  bool unsupported_;
};

struct Stmt;

class Template {
 public:
  static Template parse(std::string_view source);  // throws Error

  // The members of `variables` (an object) are the template's names: a JSON null is Python's
  // None, a missing member is undefined. Objects keep their member order, as Python dicts do, so
  // tojson writes keys in the caller's order. Concurrent calls are safe: the parsed template is
  // immutable and each call has its own state.
  std::string render(const nlohmann::ordered_json& variables) const;  // throws Error

 private:
  Template() = default;
  std::shared_ptr<const std::vector<std::unique_ptr<const Stmt>>> body_;
};

}  // namespace vinci::text::jinja
