#include "serve/request_batcher.h"

#include <stdexcept>

#include <fmt/format.h>

namespace vinci::serve {

RequestBatcher::RequestBatcher(llm::Backbone& backbone, BatcherOptions options,
                               std::function<void(const BatchStats&)> on_round)
    : backbone_(backbone), options_(options), on_round_(std::move(on_round)) {
  if (options_.max_batch == 0) options_.max_batch = 1;
  thread_ = std::thread([this] { loop(); });
}

RequestBatcher::~RequestBatcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  arrived_.notify_all();
  thread_.join();
  for (auto& s : queue_)
    s.done.set_exception(std::make_exception_ptr(std::runtime_error("the server is shutting down")));
}

std::vector<llm::GenerationResult> RequestBatcher::generate(std::vector<llm::GenerationRequest> requests) {
  if (requests.empty()) return {};
  std::future<std::vector<llm::GenerationResult>> result;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw std::runtime_error("the server is shutting down");
    refuse_beyond_room(requests.size());
    queue_.push_back({std::move(requests), {}});
    result = queue_.back().done.get_future();
  }
  arrived_.notify_all();
  return result.get();
}

size_t RequestBatcher::queued_rows() const {
  size_t rows = 0;
  for (const auto& s : queue_) rows += s.requests.size();
  return rows;
}

void RequestBatcher::refuse_beyond_room(size_t rows) const {
  const size_t waiting = queued_rows();
  if (waiting > 0 && waiting + rows > options_.max_queued)
    throw Busy(
        fmt::format("{} requests are waiting for a round (at most {}); retry shortly", waiting, options_.max_queued));
}

void RequestBatcher::check_room(size_t rows) const {
  std::lock_guard lock(mutex_);
  refuse_beyond_room(rows);
}

size_t RequestBatcher::queued() const {
  std::lock_guard lock(mutex_);
  return queued_rows();
}

void RequestBatcher::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    arrived_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    // The first request of an idle spell waits briefly for its company: concurrent clients rarely
    // arrive within the same microsecond, and one round of 8 costs about what one request does.
    const auto deadline = std::chrono::steady_clock::now() + options_.gather_window;
    arrived_.wait_until(lock, deadline, [&] { return stopping_ || queued_rows() >= options_.max_batch; });
    if (stopping_) return;

    std::vector<Submission> round;
    size_t rows = 0;
    while (!queue_.empty() && (round.empty() || rows + queue_.front().requests.size() <= options_.max_batch)) {
      rows += queue_.front().requests.size();
      round.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    lock.unlock();
    run_round(round);
    lock.lock();
  }
}

void RequestBatcher::run_round(std::vector<Submission>& round) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<llm::GenerationRequest> all;
  for (const auto& s : round) all.insert(all.end(), s.requests.begin(), s.requests.end());
  BatchStats stats{round.size(), all.size(), 0, 0};
  try {
    auto results = backbone_.generate(all);
    if (results.size() != all.size())
      throw std::logic_error("the backbone returned a result count unlike the request count");
    size_t next = 0;
    for (auto& s : round) {
      std::vector<llm::GenerationResult> mine(std::make_move_iterator(results.begin() + next),
                                              std::make_move_iterator(results.begin() + next + s.requests.size()));
      next += s.requests.size();
      for (const auto& r : mine) stats.new_tokens += r.token_ids.size();
      s.done.set_value(std::move(mine));
    }
  } catch (...) {
    if (round.size() == 1) {
      round.front().done.set_exception(std::current_exception());
    } else {
      // One caller's bad request must not fail the others that shared its round.
      for (auto& s : round) {
        std::vector<Submission> alone;
        alone.push_back(std::move(s));
        run_round(alone);
      }
      return;
    }
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (on_round_) on_round_(stats);
}

}  // namespace vinci::serve
