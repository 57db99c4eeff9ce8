#include "queue/queue_status.h"

#include <algorithm>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

namespace vinci::queue {

namespace {

// XINFO GROUPS answers each group as a flat [field, value, ...] array.
const RedisReply* field(const RedisReply& flat, const std::string& name) {
  const auto& items = flat.array();
  for (size_t i = 0; i + 1 < items.size(); i += 2)
    if (items[i].kind != RedisReply::Kind::array && items[i].text == name) return &items[i + 1];
  return nullptr;
}

long long count_range(RedisConnection& redis, const std::string& stream, const std::string& from) {
  return static_cast<long long>(redis.command({"XRANGE", stream, from, "+"}).array().size());
}

}  // namespace

QueueStatus read_status(RedisConnection& redis, const QueueLayout& layout) {
  QueueStatus status;
  const RedisReply groups = redis.command({"XINFO", "GROUPS", layout.stream()});
  for (const auto& group : groups.array()) {
    const RedisReply* name = field(group, "name");
    if (!name || name->str() != layout.group()) continue;
    status.pending = field(group, "pending")->as_integer();
    // Redis knows the lag unless entries were deleted in between; then count what follows the last delivery.
    const RedisReply* lag = field(group, "lag");
    status.waiting = lag && !lag->is_nil()
                         ? lag->as_integer()
                         : count_range(redis, layout.stream(), "(" + field(group, "last-delivered-id")->str());
  }
  const RedisReply now = redis.command({"TIME"});
  const long long now_ms = std::stoll(now.array().at(0).str()) * 1000 + std::stoll(now.array().at(1).str()) / 1000;
  status.results_last_minute = count_range(redis, layout.results(), std::to_string(now_ms - 60000));

  std::string cursor = "0";
  do {
    const RedisReply page = redis.command({"SCAN", cursor, "MATCH", layout.worker("*"), "COUNT", "1000"});
    cursor = page.array().at(0).str();
    for (const auto& key : page.array().at(1).array()) {
      const auto text = redis.command({"GET", key.str()}).text_or_nil();
      if (!text) continue;  // expired between SCAN and GET
      const auto beat = nlohmann::json::parse(*text, nullptr, false);
      if (beat.is_discarded() || !beat.is_object()) {
        spdlog::warn("{}: heartbeat {} is not a JSON object; skipped", redis.url().redacted(), key.str());
        continue;
      }
      status.workers.push_back({beat.value("name", ""), beat.value("host", ""), beat.value("pid", 0LL),
                                beat.value("evaluated", 0LL), beat.value("duplicates", 0LL),
                                beat.value("worker_lost", 0LL), beat.value("refused", 0LL), beat.value("failed", 0LL)});
    }
  } while (cursor != "0");
  std::sort(status.workers.begin(), status.workers.end(),
            [](const WorkerStatus& a, const WorkerStatus& b) { return a.name < b.name; });
  return status;
}

}  // namespace vinci::queue
