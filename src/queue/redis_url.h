// Where a Redis server is and who we are to it: redis://[user:password@]HOST:PORT[/DB].
//
// Where a Redis server is and who we are to it: redis://[user:password@]HOST:PORT[/DB], the form
// redis-cli and every Redis client take, so one string configures a worker and a submitter alike.
#pragma once

#include <string>
#include <string_view>

namespace vinci::queue {

struct RedisUrl {
  std::string user;      // empty: the default user (AUTH with the password alone)
  std::string password;  // empty: no AUTH
  std::string host;
  int port = 6379;
  int db = 0;

  // The URL with the password masked, for messages and logs (they end up in files others read).
  std::string redacted() const;
};

// Throws std::invalid_argument naming what is wrong and showing the expected form; user and password
// may be percent-encoded (a password holding '@' or ':').
RedisUrl parse_redis_url(std::string_view url);

}  // namespace vinci::queue
