#include "queue/job_queue.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace vinci::queue {

namespace {

// KEYS: in-flight marker, stream. ARGV: the result's key, the marker's value, then the entry's fields
// and values. The result is named in ARGV, not KEYS: Redis' ACL takes every KEYS entry as written to,
// and submitters may only read results (docs/distributed.md); the EXISTS inside is checked as a read.
constexpr const char* kSubmitScript = R"lua(
if redis.call('EXISTS', ARGV[1]) == 1 then return 'done' end
if not redis.call('SET', KEYS[1], ARGV[2], 'NX') then return 'in_flight' end
redis.call('XADD', KEYS[2], '*', unpack(ARGV, 3))
return 'queued'
)lua";

std::optional<ResultRecord> parse_record(const std::string& key, const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  const auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) throw std::runtime_error(fmt::format("the stored result of {} is not JSON", key));
  try {
    return result_record_from_json(j);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("the stored result of {} is unreadable: {}", key, e.what()));
  }
}

}  // namespace

void ensure_group(RedisConnection& redis, const QueueLayout& layout) {
  try {
    redis.command({"XGROUP", "CREATE", layout.stream(), layout.group(), "0", "MKSTREAM"});
  } catch (const RedisCommandError& e) {
    if (std::string_view(e.what()).find("BUSYGROUP") == std::string_view::npos) throw;
  }
}

JobQueue::JobQueue(RedisConnection& redis, QueueLayout layout) : redis_(redis), layout_(std::move(layout)) {
  ensure_group(redis_, layout_);
}

SubmitOutcome JobQueue::submit(const QueueJob& job) {
  std::vector<std::string> args{"EVAL",
                                kSubmitScript,
                                "2",
                                layout_.in_flight(job.key),
                                layout_.stream(),
                                layout_.result(job.key),
                                job.task_id + " " + job.candidate_name};
  for (const auto& [field, value] : to_stream_fields(job)) {
    args.push_back(field);
    args.push_back(value);
  }
  const std::string outcome = redis_.command(args).str();
  if (outcome == "queued") return SubmitOutcome::queued;
  if (outcome == "done") return SubmitOutcome::done;
  if (outcome == "in_flight") return SubmitOutcome::in_flight;
  throw std::runtime_error(fmt::format("the submit script answered '{}'", outcome));
}

std::optional<ResultRecord> JobQueue::result(const std::string& key) {
  return parse_record(key, redis_.command({"GET", layout_.result(key)}).text_or_nil());
}

std::map<std::string, ResultRecord> JobQueue::wait(const std::vector<std::string>& keys,
                                                   std::chrono::milliseconds timeout,
                                                   const std::function<void(const ResultRecord&)>& on_result) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::set<std::string> wanted(keys.begin(), keys.end());
  std::map<std::string, ResultRecord> found;
  if (wanted.empty()) return found;  // MGET of nothing is a syntax error
  // The newest wake-up before the first look at the store: a result written after it wakes us.
  const RedisReply last = redis_.command({"XREVRANGE", layout_.results(), "+", "-", "COUNT", "1"});
  std::string seen = last.array().empty() ? "0-0" : last.array()[0].array().at(0).str();
  for (;;) {
    std::vector<std::string> missing;
    for (const auto& k : wanted)
      if (!found.contains(k)) missing.push_back(k);
    std::vector<std::string> mget{"MGET"};
    for (const auto& k : missing) mget.push_back(layout_.result(k));
    const RedisReply values = redis_.command(mget);
    for (size_t i = 0; i < missing.size(); ++i)
      if (auto record = parse_record(missing[i], values.array().at(i).text_or_nil())) {
        if (on_result) on_result(*record);
        found.emplace(missing[i], std::move(*record));
      }
    if (found.size() == wanted.size()) return found;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return found;
    const auto block = std::min(left, std::chrono::milliseconds(1000));
    const RedisReply woke = redis_.command(
        {"XREAD", "COUNT", "1000", "BLOCK", std::to_string(block.count()), "STREAMS", layout_.results(), seen});
    if (!woke.is_nil()) {
      const auto& entries = woke.array().at(0).array().at(1).array();
      if (!entries.empty()) seen = entries.back().array().at(0).str();
    }
  }
}

}  // namespace vinci::queue
