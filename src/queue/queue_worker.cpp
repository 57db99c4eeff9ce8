#include "queue/queue_worker.h"

#include <unistd.h>

#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/hash.h"
#include "queue/job_lease.h"
#include "queue/job_queue.h"

namespace vinci::queue {

namespace {

// KEYS: result, in-flight marker, results stream, jobs stream. ARGV: the record, its key, group, entry id.
// One script, so a result is never stored without its job being acknowledged or the other way round.
constexpr const char* kWriteScript = R"lua(
local written = redis.call('SET', KEYS[1], ARGV[1], 'NX')
if written then redis.call('XADD', KEYS[3], 'MAXLEN', '~', '100000', '*', 'key', ARGV[2]) end
redis.call('DEL', KEYS[2])
redis.call('XACK', KEYS[4], ARGV[3], ARGV[4])
if written then return 1 end
return 0
)lua";

// KEYS: the evaluator's stream, this stream. ARGV: group, entry id, then the entry's fields and values.
// One script, so a job moved to its evaluator's stream is never in both or neither. The in-flight
// marker stays: the job is still queued.
constexpr const char* kForwardScript = R"lua(
redis.call('XADD', KEYS[1], '*', unpack(ARGV, 3))
redis.call('XACK', KEYS[2], ARGV[1], ARGV[2])
return 1
)lua";

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

std::string default_worker_name() { return fmt::format("{}:{}", host_name(), ::getpid()); }

struct QueueWorker::Entry {
  std::string id;
  std::map<std::string, std::string> fields;
  bool reclaimed = false;
};

namespace {

// An entry as XREADGROUP and XAUTOCLAIM return it: [id, [field, value, ...]].
std::optional<std::map<std::string, std::string>> entry_fields(const RedisReply& entry) {
  const auto& parts = entry.array();
  if (parts.size() < 2 || parts[1].is_nil()) return std::nullopt;  // deleted from the stream meanwhile
  std::map<std::string, std::string> fields;
  const auto& flat = parts[1].array();
  for (size_t i = 0; i + 1 < flat.size(); i += 2) fields[flat[i].str()] = flat[i + 1].str();
  return fields;
}

}  // namespace

struct QueueWorker::Held {
  Entry entry;
  QueueJob job;
  int deliveries = 1;
  std::unique_ptr<JobLease> lease;
};

QueueWorker::QueueWorker(RedisConnection& redis, WorkerOptions options, Evaluate evaluate, Prepare prepare)
    : redis_(redis), options_(std::move(options)), evaluate_(std::move(evaluate)), prepare_(std::move(prepare)) {
  if (options_.name.empty()) throw std::invalid_argument("a queue worker needs a name unique in its group");
  if (options_.max_deliveries < 1) throw std::invalid_argument("max_deliveries must be at least 1");
  if (options_.evaluator) options_.layout = options_.layout.for_evaluator(options_.evaluator->tag());
  ensure_group(redis_, options_.layout);
  heartbeat();
}

void QueueWorker::heartbeat() {
  nlohmann::json beat = {{"name", options_.name},
                         {"host", host_name()},
                         {"pid", ::getpid()},
                         {"stream", options_.layout.stream()},
                         {"sandbox", options_.sandbox},
                         {"evaluated", stats_.evaluated},
                         {"duplicates", stats_.duplicates},
                         {"worker_lost", stats_.worker_lost},
                         {"refused", stats_.refused},
                         {"failed", stats_.failed},
                         {"forwarded", stats_.forwarded},
                         {"released", stats_.released}};
  if (options_.evaluator) beat["evaluator"] = to_json(*options_.evaluator);
  redis_.command({"SET", options_.layout.worker(options_.name), beat.dump(), "EX",
                  std::to_string(options_.heartbeat_ttl.count())});
}

QueueWorker::~QueueWorker() {
  try {
    release_held();
  } catch (const std::exception& e) {  // the server is gone: the visibility timeout hands them on
    spdlog::warn("queue worker {}: could not hand back the jobs taken ahead: {}", options_.name, e.what());
  }
}

void QueueWorker::sign_off() {
  release_held();
  redis_.command({"DEL", options_.layout.worker(options_.name)});
}

void QueueWorker::release_held() {
  while (!ahead_.empty()) {
    std::unique_ptr<Held> held = std::move(ahead_.front());
    ahead_.pop_front();
    held->lease.reset();  // its renewals would make the job this worker's again
    release(held->entry.id);
    ++stats_.released;
  }
}

void QueueWorker::forward(const Entry& entry, const QueueJob& job) {
  const auto& l = options_.layout;
  const QueueLayout to = l.for_evaluator(evaluator_tag(job.evaluator));
  ensure_group(redis_, to);  // a worker that joins later reads the group from the stream's start
  std::vector<std::string> args{"EVAL", kForwardScript, "2", to.stream(), l.stream(), l.group(), entry.id};
  for (const auto& [field, value] : entry.fields) {
    args.push_back(field);
    args.push_back(value);
  }
  redis_.command(args);
  spdlog::warn("queue worker {}: job {} ({} on {}) is keyed for evaluator {} on {}, not this one ({}); moved to {}",
               options_.name, entry.id, job.candidate_name, job.task_id, evaluator_tag(job.evaluator),
               job.evaluator.device_name, options_.evaluator->describe(), to.stream());
}

void QueueWorker::release(const std::string& id) {
  // Idle as long as the visibility timeout, the job is the next worker's to claim; JUSTID leaves its
  // delivery count alone (the next claim counts one).
  const auto& l = options_.layout;
  redis_.command({"XCLAIM", l.stream(), l.group(), options_.name, "0", id, "IDLE",
                  std::to_string(options_.visibility_timeout.count()), "JUSTID"});
}

void QueueWorker::acknowledge(const std::string& id) {
  redis_.command({"XACK", options_.layout.stream(), options_.layout.group(), id});
}

bool QueueWorker::write(const ResultRecord& record, const std::string& id) {
  const auto& l = options_.layout;
  return redis_
             .command({"EVAL", kWriteScript, "4", l.result(record.key), l.in_flight(record.key), l.results(),
                       l.stream(), to_json(record).dump(), record.key, l.group(), id})
             .as_integer() == 1;
}

StepOutcome QueueWorker::step() {
  heartbeat();
  StepOutcome outcome = StepOutcome::idle;
  try {
    outcome = serve_one();
  } catch (const RedisCommandError& e) {
    // A server restarted without its data (no append-only file) has no stream or group: make them
    // again and serve what is submitted from now on, rather than stop every worker.
    if (std::string_view(e.what()).find("NOGROUP") == std::string_view::npos) throw;
    spdlog::warn("queue worker {}: the jobs stream or its group is gone ({}); creating them again", options_.name,
                 e.what());
    ensure_group(redis_, options_.layout);
    claim_cursor_ = "0-0";
  }
  if (outcome != StepOutcome::idle) heartbeat();  // the counts, as soon as they change
  return outcome;
}

StepOutcome QueueWorker::serve_one() {
  std::unique_ptr<Held> current;
  if (!ahead_.empty()) {
    current = std::move(ahead_.front());
    ahead_.pop_front();
  } else {
    const std::optional<Entry> entry = next_entry(true);
    if (!entry) return StepOutcome::idle;
    const StepOutcome outcome = admit(*entry, current);
    if (!current) return outcome;
  }
  take_ahead();
  return judge(*current);
}

void QueueWorker::take_ahead() {
  while (ahead_.size() < options_.hold_ahead) {
    const std::optional<Entry> entry = next_entry(false);
    if (!entry) return;
    std::unique_ptr<Held> held;
    admit(*entry, held);  // an entry that ends there is counted in the stats
    if (!held) continue;
    if (prepare_) prepare_(held->job);
    ahead_.push_back(std::move(held));
  }
}

std::optional<QueueWorker::Entry> QueueWorker::next_entry(bool block) {
  const auto& l = options_.layout;
  const RedisReply claimed =
      redis_.command({"XAUTOCLAIM", l.stream(), l.group(), options_.name,
                      std::to_string(options_.visibility_timeout.count()), claim_cursor_, "COUNT", "1"});
  claim_cursor_ = claimed.array().at(0).str();
  for (const auto& e : claimed.array().at(1).array()) {
    if (auto fields = entry_fields(e)) return Entry{e.array().at(0).str(), std::move(*fields), true};
  }
  std::vector<std::string> read{"XREADGROUP", "GROUP", l.group(), options_.name, "COUNT", "1"};
  if (block) read.insert(read.end(), {"BLOCK", std::to_string(options_.block.count())});
  read.insert(read.end(), {"STREAMS", l.stream(), ">"});
  const RedisReply fresh = redis_.command(read);
  if (fresh.is_nil()) return std::nullopt;
  for (const auto& e : fresh.array().at(0).array().at(1).array()) {
    if (auto fields = entry_fields(e)) return Entry{e.array().at(0).str(), std::move(*fields), false};
  }
  return std::nullopt;
}

StepOutcome QueueWorker::admit(const Entry& entry, std::unique_ptr<Held>& held) {
  const auto& l = options_.layout;
  QueueJob job;
  try {
    job = job_from_stream_fields(entry.fields);
  } catch (const std::invalid_argument& e) {
    // Acknowledged, or every worker would be handed it again after each visibility timeout.
    spdlog::error("queue worker {}: refusing stream entry {} of {}: {}", options_.name, entry.id, l.stream(), e.what());
    acknowledge(entry.id);
    ++stats_.refused;
    return StepOutcome::refused;
  }
  if (options_.evaluator && !options_.evaluator->judges(job.evaluator)) {
    // Judging it here would file this evaluator's verdict under another's key; failing it would
    // cost its own workers the job. So it goes where they read.
    forward(entry, job);
    ++stats_.forwarded;
    return StepOutcome::forwarded;
  }
  int deliveries = 1;
  if (entry.reclaimed) {
    // [[id, consumer, idle ms, times delivered]]; XAUTOCLAIM has counted this delivery already.
    const RedisReply pending = redis_.command({"XPENDING", l.stream(), l.group(), entry.id, entry.id, "1"});
    if (!pending.array().empty()) deliveries = static_cast<int>(pending.array()[0].array().at(3).as_integer());
  }
  if (redis_.command({"EXISTS", l.result(job.key)}).as_integer() == 1) {
    write(ResultRecord{job.key, options_.name, deliveries, {}}, entry.id);  // only acknowledges: SET NX fails
    ++stats_.duplicates;
    return StepOutcome::duplicate;
  }
  if (deliveries > options_.max_deliveries) {
    spdlog::error(
        "queue worker {}: job {} ({} on {}) was delivered {} times and no worker finished it; ending it as "
        "runtime_error/worker_lost",
        options_.name, entry.id, job.candidate_name, job.task_id, deliveries - 1);
    ResultRecord record{job.key, options_.name, deliveries, {}};
    eval::Result& r = record.result;
    r.task = job.task_id;
    r.candidate = job.candidate_name;
    r.candidate_hash = core::content_hash(job.candidate_source);
    r.device = job.evaluator.device_name;
    r.verdict = eval::Verdict::runtime_error;
    r.reason = "worker_lost";
    r.message = fmt::format("the worker evaluating it died or stopped answering {} times", deliveries - 1);
    if (!write(record, entry.id)) {
      ++stats_.duplicates;
      return StepOutcome::duplicate;
    }
    ++stats_.worker_lost;
    return StepOutcome::worker_lost;
  }
  held = std::make_unique<Held>();
  held->entry = entry;
  held->job = std::move(job);
  held->deliveries = deliveries;
  held->lease = std::make_unique<JobLease>(redis_.url(), l, options_.name, entry.id, options_.visibility_timeout,
                                           options_.heartbeat_ttl);
  return StepOutcome::evaluated;
}

StepOutcome QueueWorker::judge(Held& held) {
  const Entry& entry = held.entry;
  const QueueJob& job = held.job;
  ResultRecord record{job.key, options_.name, held.deliveries, {}};
  try {
    record.result = evaluate_(job);
  } catch (const JobRefused& e) {
    spdlog::error("queue worker {}: refusing job {} ({} on {}): {}", options_.name, entry.id, job.candidate_name,
                  job.task_id, e.what());
    held.lease.reset();
    acknowledge(entry.id);
    ++stats_.refused;
    return StepOutcome::refused;
  } catch (const JobReleased& e) {
    spdlog::info("queue worker {}: releasing job {} ({} on {}) unjudged: {}", options_.name, entry.id,
                 job.candidate_name, job.task_id, e.what());
    held.lease.reset();  // its renewals would make the job this worker's again
    release(entry.id);
    ++stats_.released;
    release_held();
    return StepOutcome::released;
  } catch (const std::exception& e) {
    // Not the candidate's verdict: the evaluator itself failed. Left pending, the job is claimed
    // again, and counts towards worker_lost if it keeps failing.
    spdlog::error(
        "queue worker {}: evaluating job {} ({} on {}) failed: {}; it will be retried after the "
        "visibility timeout",
        options_.name, entry.id, job.candidate_name, job.task_id, e.what());
    ++stats_.failed;
    return StepOutcome::failed;
  }
  held.lease.reset();
  if (!write(record, entry.id)) {
    ++stats_.duplicates;
    return StepOutcome::duplicate;
  }
  ++stats_.evaluated;
  return StepOutcome::evaluated;
}

}  // namespace vinci::queue
