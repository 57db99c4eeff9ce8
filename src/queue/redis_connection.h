// One connection to a Redis server (hiredis, blocking), authenticated and on its database.
//
// Connecting and authenticating fail with core::SetupError (exit code 4): a wrong password or an
// unreachable server is something the user fixes before any work can start. A command the server
// refuses throws RedisCommandError. A connection lost mid-command is reopened with backoff for up to
// RedisOptions::reconnect_for and the command sent again, which is safe only for commands that may
// run twice; the queue sends only such commands (its writes are SET NX scripts, XACKs and reads whose
// lost deliveries are reclaimed), so a restarted server costs a pause, not the run. A server still
// loading its data (LOADING) is waited for the same way, when connecting too.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/setup_error.h"
#include "queue/redis_reply.h"
#include "queue/redis_url.h"

struct redisContext;

namespace vinci::queue {

class RedisCommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The server answered but refused who we said we are (a wrong password, an unknown user, an ACL).
class RedisAuthError : public core::SetupError {
 public:
  using core::SetupError::SetupError;
};

struct RedisOptions {
  std::chrono::milliseconds connect_timeout{5000};
  // Covers blocking commands too: a blocking read's own timeout must stay below it.
  std::chrono::milliseconds command_timeout{30000};
  // How long a lost connection is retried before the command fails (0: at once).
  std::chrono::milliseconds reconnect_for{60000};
};

class RedisConnection {
 public:
  // Connects, AUTHs when the URL has a password, SELECTs its database.
  explicit RedisConnection(RedisUrl url, RedisOptions options = {});
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  RedisReply command(const std::vector<std::string>& args);
  const RedisUrl& url() const { return url_; }

 private:
  void open();  // throws core::SetupError; RedisAuthError when the credentials are refused; ServerLoading
  void close();
  RedisUrl url_;
  RedisOptions options_;
  redisContext* context_ = nullptr;
};

}  // namespace vinci::queue
