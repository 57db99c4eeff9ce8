#include "queue/redis_connection.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace vinci::queue {

namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  return timeval{static_cast<time_t>(ms.count() / 1000), static_cast<suseconds_t>(ms.count() % 1000 * 1000)};
}

// RESP2 only: we never send HELLO 3, and Debian's hiredis predates RESP3's reply types.
RedisReply copy_reply(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.kind = RedisReply::Kind::string;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.kind = RedisReply::Kind::status;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = RedisReply::Kind::integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = RedisReply::Kind::array;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(copy_reply(r->element[i]));
      break;
    default: out.kind = RedisReply::Kind::nil;
  }
  return out;
}

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

ReplyPtr send(redisContext* c, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  return ReplyPtr(
      static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lens.data())));
}

// A server that is up but still reading its append-only file answers LOADING to almost everything:
// it will serve soon, so this is waited out like a lost connection, never taken for a refusal.
class ServerLoading : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

bool is_loading(const std::string& error) { return error.starts_with("LOADING"); }

}  // namespace

RedisConnection::RedisConnection(RedisUrl url, RedisOptions options) : url_(std::move(url)), options_(options) {
  const auto give_up = std::chrono::steady_clock::now() + options_.reconnect_for;
  auto backoff = std::chrono::milliseconds(50);
  for (;;) {
    try {
      open();
      return;
    } catch (const ServerLoading& e) {
      if (std::chrono::steady_clock::now() >= give_up)
        throw core::SetupError(fmt::format("{}; still so after {} ms", e.what(), options_.reconnect_for.count()));
      spdlog::warn("{}; connecting again in {} ms", e.what(), backoff.count());
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
  }
}

RedisConnection::~RedisConnection() { close(); }

void RedisConnection::close() {
  if (context_) redisFree(context_);
  context_ = nullptr;
}

void RedisConnection::open() {
  close();
  const std::string where = url_.redacted();
  const timeval tv = to_timeval(options_.connect_timeout);
  context_ = redisConnectWithTimeout(url_.host.c_str(), url_.port, tv);
  if (!context_) throw core::SetupError(fmt::format("{}: could not allocate a redis connection", where));
  if (context_->err) {
    const std::string why = context_->errstr;
    close();
    throw core::SetupError(
        fmt::format("{}: cannot connect ({}); is redis-server running there and reachable "
                    "from this host (bind, firewall)?",
                    where, why));
  }
  redisSetTimeout(context_, to_timeval(options_.command_timeout));
  auto refuse = [&](const std::string& what, const std::string& how) {
    close();
    throw core::SetupError(fmt::format("{}: {}; {}", where, what, how));
  };
  auto refuse_credentials = [&](const std::string& what, const std::string& how) {
    close();
    throw RedisAuthError(fmt::format("{}: {}; {}", where, what, how));
  };
  if (!url_.password.empty()) {
    std::vector<std::string> auth{"AUTH"};
    if (!url_.user.empty()) auth.push_back(url_.user);
    auth.push_back(url_.password);
    ReplyPtr r = send(context_, auth);
    if (!r) refuse(fmt::format("the connection failed during AUTH ({})", context_->errstr), "try again");
    if (r->type == REDIS_REPLY_ERROR) {
      const std::string err(r->str, r->len);
      refuse_credentials(fmt::format("the server refused the credentials ({})", err),
                         "check the user and password in the URL against the server's requirepass or ACL user");
    }
  }
  // PING proves the credentials are enough: a server with a password answers NOAUTH to a client without one.
  ReplyPtr ping = send(context_, {"PING"});
  if (!ping) refuse(fmt::format("the connection failed ({})", context_->errstr), "is it a redis server?");
  if (ping->type == REDIS_REPLY_ERROR) {
    const std::string err(ping->str, ping->len);
    if (is_loading(err)) {
      close();
      throw ServerLoading(fmt::format("{}: the server is loading its data ({})", where, err));
    }
    refuse_credentials(fmt::format("the server refused us ({})", err),
                       err.starts_with("NOAUTH")
                           ? "it needs a password: write it in the URL, redis://[user]:PASSWORD@HOST:PORT"
                           : "check the server's ACL for this user");
  }
  if (url_.db != 0) {
    ReplyPtr r = send(context_, {"SELECT", std::to_string(url_.db)});
    if (!r || r->type == REDIS_REPLY_ERROR)
      refuse(fmt::format("cannot select database {} ({})", url_.db, r ? std::string(r->str, r->len) : context_->errstr),
             "use a database number the server has (its `databases` setting)");
  }
}

RedisReply RedisConnection::command(const std::vector<std::string>& args) {
  const auto give_up = std::chrono::steady_clock::now() + options_.reconnect_for;
  auto backoff = std::chrono::milliseconds(50);
  for (;;) {
    std::string trouble = "not connected";
    if (!context_) {
      try {
        open();
      } catch (const RedisAuthError&) {
        throw;  // refused credentials after a restart are a configuration change, not an outage
      } catch (const core::SetupError& e) {
        trouble = e.what();
      } catch (const ServerLoading& e) {
        trouble = e.what();
      }
    }
    if (context_) {
      if (ReplyPtr r = send(context_, args)) {
        if (r->type != REDIS_REPLY_ERROR) return copy_reply(r.get());
        std::string err(r->str, r->len);
        if (!is_loading(err))
          throw RedisCommandError(fmt::format("{}: {} failed: {}", url_.redacted(), args.at(0), err));
        trouble = "the server is loading its data (" + err + ")";
      } else {
        trouble = fmt::format("the connection was lost ({})", context_->errstr);
        close();  // hiredis leaves a context unusable after an I/O error
      }
    }
    if (std::chrono::steady_clock::now() >= give_up)
      throw std::runtime_error(fmt::format("{}: {} failed: {}, and no better within {} ms", url_.redacted(), args.at(0),
                                           trouble, options_.reconnect_for.count()));
    spdlog::warn("{}: {} waits: {}; trying again in {} ms", url_.redacted(), args.at(0), trouble, backoff.count());
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
  }
}

}  // namespace vinci::queue
