#include "queue/queue_status.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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

// Every key matching pattern (of the given type, when one is given), by SCAN.
std::vector<std::string> scan(RedisConnection& redis, const std::string& pattern, const std::string& type = "") {
  std::vector<std::string> keys;
  std::string cursor = "0";
  do {
    std::vector<std::string> args{"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
    if (!type.empty()) args.insert(args.end(), {"TYPE", type});
    const RedisReply page = redis.command(args);
    cursor = page.array().at(0).str();
    for (const auto& key : page.array().at(1).array()) keys.push_back(key.str());
  } while (cursor != "0");
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());  // SCAN may return a key twice
  return keys;
}

std::optional<StreamStatus> stream_status(RedisConnection& redis, const std::string& stream, const QueueLayout& l) {
  if (redis.command({"EXISTS", stream}).as_integer() == 0) return std::nullopt;
  StreamStatus s{stream};
  const RedisReply groups = redis.command({"XINFO", "GROUPS", stream});
  for (const auto& group : groups.array()) {
    const RedisReply* name = field(group, "name");
    if (!name || name->str() != l.group()) continue;
    s.pending = field(group, "pending")->as_integer();
    // Redis knows the lag unless entries were deleted in between; then count what follows the last delivery.
    const RedisReply* lag = field(group, "lag");
    s.waiting = lag && !lag->is_nil() ? lag->as_integer()
                                      : count_range(redis, stream, "(" + field(group, "last-delivered-id")->str());
  }
  return s;
}

WorkerStatus worker_from_heartbeat(const nlohmann::json& beat) {
  WorkerStatus w;
  w.name = beat.value("name", "");
  w.host = beat.value("host", "");
  w.stream = beat.value("stream", "");
  w.sandbox = beat.value("sandbox", "");
  w.pid = beat.value("pid", 0LL);
  if (beat.contains("evaluator")) w.evaluator = worker_evaluator_from_json(beat["evaluator"]);
  w.evaluated = beat.value("evaluated", 0LL);
  w.duplicates = beat.value("duplicates", 0LL);
  w.worker_lost = beat.value("worker_lost", 0LL);
  w.refused = beat.value("refused", 0LL);
  w.failed = beat.value("failed", 0LL);
  w.forwarded = beat.value("forwarded", 0LL);
  w.released = beat.value("released", 0LL);
  return w;
}

}  // namespace

std::vector<WorkerStatus> live_workers(RedisConnection& redis, const QueueLayout& layout) {
  std::vector<WorkerStatus> workers;
  for (const auto& key : scan(redis, layout.worker("*"))) {
    const auto text = redis.command({"GET", key}).text_or_nil();
    if (!text) continue;  // expired between SCAN and GET
    const auto beat = nlohmann::json::parse(*text, nullptr, false);
    try {
      if (beat.is_discarded() || !beat.is_object()) throw std::invalid_argument("not a JSON object");
      workers.push_back(worker_from_heartbeat(beat));
    } catch (const std::exception& e) {
      spdlog::warn("{}: heartbeat {} is unreadable ({}); skipped", redis.url().redacted(), key, e.what());
    }
  }
  std::sort(workers.begin(), workers.end(),
            [](const WorkerStatus& a, const WorkerStatus& b) { return a.name < b.name; });
  return workers;
}

QueueStatus read_status(RedisConnection& redis, const QueueLayout& layout) {
  QueueStatus status;
  std::vector<std::string> streams{layout.for_evaluator("").stream()};
  for (auto& s : scan(redis, layout.tagged_streams(), "stream")) streams.push_back(std::move(s));
  for (const auto& stream : streams) {
    if (auto s = stream_status(redis, stream, layout)) {
      status.waiting += s->waiting;
      status.pending += s->pending;
      status.streams.push_back(*s);
    }
  }
  const RedisReply now = redis.command({"TIME"});
  const long long now_ms = std::stoll(now.array().at(0).str()) * 1000 + std::stoll(now.array().at(1).str()) / 1000;
  status.results_last_minute = count_range(redis, layout.results(), std::to_string(now_ms - 60000));
  status.workers = live_workers(redis, layout);
  return status;
}

std::string format_status(const QueueStatus& s, const std::string& where) {
  std::string out =
      fmt::format("queue {}: {} live worker{}, {} job{} waiting, {} pending, {} result{} in the last minute\n", where,
                  s.workers.size(), s.workers.size() == 1 ? "" : "s", s.waiting, s.waiting == 1 ? "" : "s", s.pending,
                  s.results_last_minute, s.results_last_minute == 1 ? "" : "s");
  if (!s.workers.empty()) {
    out +=
        fmt::format("\n{:<32} {:>8} {:<44} {:>9} {:>10} {:>11} {:>7} {:>6} {:>9} {:>8}\n", "worker", "pid", "evaluator",
                    "evaluated", "duplicates", "worker_lost", "refused", "failed", "forwarded", "released");
    for (const auto& w : s.workers)
      out += fmt::format("{:<32} {:>8} {:<44} {:>9} {:>10} {:>11} {:>7} {:>6} {:>9} {:>8}\n", w.name, w.pid,
                         w.evaluator ? w.evaluator->describe() : "(any: untagged stream)", w.evaluated, w.duplicates,
                         w.worker_lost, w.refused, w.failed, w.forwarded, w.released);
  }
  if (!s.streams.empty()) {
    out += fmt::format("\n{:<40} {:>8} {:>8}\n", "stream", "waiting", "pending");
    for (const auto& st : s.streams) out += fmt::format("{:<40} {:>8} {:>8}\n", st.stream, st.waiting, st.pending);
  }
  return out;
}

nlohmann::json to_json(const QueueStatus& s) {
  nlohmann::json workers = nlohmann::json::array(), streams = nlohmann::json::array();
  for (const auto& w : s.workers) {
    nlohmann::json j = {{"name", w.name},
                        {"host", w.host},
                        {"pid", w.pid},
                        {"stream", w.stream},
                        {"sandbox", w.sandbox},
                        {"evaluated", w.evaluated},
                        {"duplicates", w.duplicates},
                        {"worker_lost", w.worker_lost},
                        {"refused", w.refused},
                        {"failed", w.failed},
                        {"forwarded", w.forwarded},
                        {"released", w.released}};
    if (w.evaluator) j["evaluator"] = to_json(*w.evaluator);
    workers.push_back(std::move(j));
  }
  for (const auto& st : s.streams)
    streams.push_back({{"stream", st.stream}, {"waiting", st.waiting}, {"pending", st.pending}});
  return {{"waiting", s.waiting},
          {"pending", s.pending},
          {"results_last_minute", s.results_last_minute},
          {"workers", workers},
          {"streams", streams}};
}

}  // namespace vinci::queue
