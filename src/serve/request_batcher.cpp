#include "serve/request_batcher.h"

#include <stdexcept>

#include <fmt/format.h>

namespace vinci::serve {

RequestBatcher::RequestBatcher(llm::Backbone& backbone, BatcherOptions options,
                               std::function<void(const SubmissionStats&)> on_done)
    : backbone_(backbone), options_(options), on_done_(std::move(on_done)) {
  if (options_.max_batch == 0) options_.max_batch = 1;
  thread_ = std::thread([this] {
    llm::ServeLimits limits;
    limits.max_batch = options_.max_batch;
    limits.prefill_chunk = options_.prefill_chunk;
    limits.kv_cache_tokens = options_.kv_cache_tokens;
    backbone_.serve(*this, limits);
  });
}

RequestBatcher::~RequestBatcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  arrived_.notify_all();
  thread_.join();
  const auto error = std::make_exception_ptr(std::runtime_error("the server is shutting down"));
  std::vector<std::shared_ptr<Submission>> failed;
  for (auto& row : waiting_)
    if (failed.empty() || failed.back() != row.submission) failed.push_back(row.submission);
  for (auto& s : failed) s->done.set_exception(error);
}

std::vector<llm::GenerationResult> RequestBatcher::generate(std::vector<llm::GenerationRequest> requests) {
  if (requests.empty()) return {};
  auto submission = std::make_shared<Submission>();
  submission->left = requests.size();
  submission->results.resize(requests.size());
  submission->requests = std::move(requests);
  submission->submitted = std::chrono::steady_clock::now();
  auto result = submission->done.get_future();
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw std::runtime_error("the server is shutting down");
    refuse_beyond_room(submission->requests.size());
    for (size_t i = 0; i < submission->requests.size(); ++i) waiting_.push_back({submission, i});
  }
  arrived_.notify_all();
  return result.get();
}

void RequestBatcher::refuse_beyond_room(size_t rows) const {
  const size_t waiting = waiting_.size();
  if (waiting > 0 && waiting + rows > options_.max_queued)
    throw Busy(fmt::format("{} requests are waiting to be admitted (at most {}); retry shortly", waiting,
                           options_.max_queued));
}

void RequestBatcher::check_room(size_t rows) const {
  std::lock_guard lock(mutex_);
  refuse_beyond_room(rows);
}

size_t RequestBatcher::queued() const {
  std::lock_guard lock(mutex_);
  return waiting_.size();
}

std::vector<llm::RequestFeed::Admitted> RequestBatcher::admit(size_t room, bool idle) {
  std::unique_lock lock(mutex_);
  if (idle) {
    arrived_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
    // The first request of an idle spell waits briefly for its company: concurrent clients rarely
    // arrive within the same microsecond, and one prefill of 8 costs about what one of 1 does.
    const auto deadline = std::chrono::steady_clock::now() + options_.gather_window;
    arrived_.wait_until(lock, deadline, [&] { return stopping_ || waiting_.size() >= room; });
  }
  if (stopping_) return {};  // what runs finishes; what waits is failed by the destructor
  std::vector<Admitted> out;
  std::vector<Submission*> joined;
  const auto now = std::chrono::steady_clock::now();
  while (!waiting_.empty() && out.size() < room) {
    Row row = std::move(waiting_.front());
    waiting_.pop_front();
    if (!row.submission->admitted) {
      row.submission->admitted = now;
      joined.push_back(row.submission.get());
    }
    const size_t ticket = next_ticket_++;
    out.push_back({ticket, &row.submission->requests[row.index]});
    running_.emplace(ticket, std::move(row));
  }
  for (Submission* s : joined) s->batch = running_.size();
  return out;
}

void RequestBatcher::row_done(size_t ticket, const std::function<void(Submission&, size_t index)>& record) {
  std::shared_ptr<Submission> finished;
  {
    std::lock_guard lock(mutex_);
    const auto it = running_.find(ticket);
    if (it == running_.end()) throw std::logic_error(fmt::format("the backbone finished unknown ticket {}", ticket));
    Row row = std::move(it->second);
    running_.erase(it);
    record(*row.submission, row.index);
    if (--row.submission->left == 0) finished = std::move(row.submission);
  }
  if (!finished) return;
  if (finished->error) {
    finished->done.set_exception(finished->error);
    return;
  }
  SubmissionStats stats;
  stats.requests = finished->results.size();
  for (const auto& r : finished->results) stats.new_tokens += r.token_ids.size();
  const auto now = std::chrono::steady_clock::now();
  stats.seconds = std::chrono::duration<double>(now - finished->submitted).count();
  stats.queued_seconds = std::chrono::duration<double>(finished->admitted.value_or(now) - finished->submitted).count();
  stats.batch = finished->batch;
  finished->done.set_value(std::move(finished->results));
  if (on_done_) on_done_(stats);
}

void RequestBatcher::complete(size_t ticket, llm::GenerationResult result) {
  row_done(ticket, [&](Submission& s, size_t index) { s.results[index] = std::move(result); });
}

void RequestBatcher::fail(size_t ticket, std::exception_ptr error) {
  row_done(ticket, [&](Submission& s, size_t) {
    if (!s.error) s.error = error;
  });
}

}  // namespace vinci::serve
