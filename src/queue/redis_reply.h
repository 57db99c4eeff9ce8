// One Redis reply as a value, copied out of hiredis' reply tree.
//
// One Redis reply as a value: hiredis' reply tree copied out, so it outlives the C object and is
// read without pointer arithmetic.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace vinci::queue {

struct RedisReply {
  enum class Kind { nil, string, status, integer, array };
  Kind kind = Kind::nil;
  std::string text;  // string and status replies
  long long integer = 0;
  std::vector<RedisReply> elements;

  bool is_nil() const { return kind == Kind::nil; }
  // The text of a string or status reply, nothing for nil; throws std::runtime_error for other kinds,
  // naming what came instead (a reply of an unexpected shape is a protocol error, not a value).
  std::optional<std::string> text_or_nil() const;
  const std::string& str() const;
  long long as_integer() const;
  const std::vector<RedisReply>& array() const;
};

}  // namespace vinci::queue
