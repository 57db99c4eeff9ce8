#include "queue/redis_url.h"

#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace vinci::queue {

namespace {

constexpr const char* kForm = "redis://[user:password@]HOST:PORT[/DB]";

[[noreturn]] void refuse(std::string_view url, std::string_view why) {
  // The URL may hold a password: the message names the problem and the form, never echoes the secret.
  const auto at = url.rfind('@');
  const std::string shown =
      at == std::string_view::npos ? std::string(url) : fmt::format("redis://***@{}", url.substr(at + 1));
  throw std::invalid_argument(fmt::format("queue URL {}: {}; expected {}", shown, why, kForm));
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view url, std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    const bool whole = i + 2 < s.size();
    const int hi = whole ? hex_digit(s[i + 1]) : -1, lo = whole ? hex_digit(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) refuse(url, "a '%' in the user or password is not followed by two hex digits");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

int parse_number(std::string_view url, std::string_view s, const char* what, int low, int high) {
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || value < low || value > high)
    refuse(url, fmt::format("the {} '{}' is not a number from {} to {}", what, s, low, high));
  return value;
}

}  // namespace

std::string RedisUrl::redacted() const {
  std::string auth;
  if (!user.empty() || !password.empty()) auth = fmt::format("{}{}@", user, password.empty() ? "" : ":***");
  return fmt::format("redis://{}{}:{}/{}", auth, host, port, db);
}

RedisUrl parse_redis_url(std::string_view url) {
  constexpr std::string_view scheme = "redis://";
  if (!url.starts_with(scheme))
    refuse(url, "it does not start with redis:// (rediss:// and unix sockets are not supported)");
  std::string_view rest = url.substr(scheme.size());
  RedisUrl out;
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view auth = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const auto colon = auth.find(':');
    if (colon == std::string_view::npos)
      refuse(url, "the part before '@' has no ':' (write user:password, or :password)");
    out.user = percent_decode(url, auth.substr(0, colon));
    out.password = percent_decode(url, auth.substr(colon + 1));
  }
  std::string_view hostport = rest;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    hostport = rest.substr(0, slash);
    const std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) out.db = parse_number(url, db, "database number", 0, 1 << 20);
  }
  const auto colon = hostport.rfind(':');
  if (colon == std::string_view::npos) refuse(url, "there is no ':PORT' after the host");
  out.host = std::string(hostport.substr(0, colon));
  if (out.host.empty()) refuse(url, "the host is empty");
  out.port = parse_number(url, hostport.substr(colon + 1), "port", 1, 65535);
  return out;
}

}  // namespace vinci::queue
