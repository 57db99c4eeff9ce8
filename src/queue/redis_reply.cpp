#include "queue/redis_reply.h"

#include <stdexcept>

#include <fmt/format.h>

namespace vinci::queue {

namespace {

const char* kind_name(RedisReply::Kind k) {
  switch (k) {
    case RedisReply::Kind::nil: return "nil";
    case RedisReply::Kind::string: return "a string";
    case RedisReply::Kind::status: return "a status";
    case RedisReply::Kind::integer: return "an integer";
    case RedisReply::Kind::array: return "an array";
  }
  return "an unknown reply";
}

[[noreturn]] void wrong_kind(const RedisReply& r, const char* wanted) {
  throw std::runtime_error(fmt::format("redis replied with {} where {} was expected", kind_name(r.kind), wanted));
}

}  // namespace

std::optional<std::string> RedisReply::text_or_nil() const {
  if (kind == Kind::nil) return std::nullopt;
  return str();
}

const std::string& RedisReply::str() const {
  if (kind != Kind::string && kind != Kind::status) wrong_kind(*this, "a string");
  return text;
}

long long RedisReply::as_integer() const {
  if (kind != Kind::integer) wrong_kind(*this, "an integer");
  return integer;
}

const std::vector<RedisReply>& RedisReply::array() const {
  if (kind != Kind::array) wrong_kind(*this, "an array");
  return elements;
}

}  // namespace vinci::queue
