// Many callers, one backbone: concurrent requests share the backbone's running batch.
//
// Many callers, one backbone: requests that arrive from concurrent callers (the HTTP clients of
// `vinci serve`) share the backbone's running batch.
//
// The batcher is the backbone's RequestFeed. A backbone that schedules by iteration (the native
// model) admits a waiting request between two decode steps and hands each back as it finishes,
// so a short answer never waits for a long one (continuous batching). One that cannot (a server
// backbone) runs rounds through Backbone::serve's default.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "llm/backbone.h"

namespace vinci::serve {

struct BatcherOptions {
  size_t max_batch = 64;  // rows generated at once
  // How long an idle backbone waits after the first request for others to join its first step.
  std::chrono::milliseconds gather_window{10};
  // Requests waiting to be admitted, at most: beyond it a submission is refused (Busy) rather than
  // queued without bound. One submission alone always queues.
  size_t max_queued = 1024;
  // Prompt tokens a joining request prefills per step, so that a long prompt does not stall the
  // requests decoding beside it (0: whole prompts). Chunking has a price: every later chunk attends
  // to the cache through a mask, and each prompt that completes changes the running batch (and,
  // across a power of two of rows, its CUDA graph). At 512, prompts of up to ~1000 tokens served 2.0x slower than whole
  // on an H100 (docs/benchmarks.md), so only prompts longer than this are chunked.
  size_t prefill_chunk = 2048;
  // Tokens the KV cache may hold (llm::ServeLimits::kv_cache_tokens; 0: as memory allows).
  size_t kv_cache_tokens = 0;
};

// One caller's submission, once all its requests finished.
struct SubmissionStats {
  size_t requests = 0;
  size_t new_tokens = 0;
  double seconds = 0;         // from submission to its last result
  double queued_seconds = 0;  // until its first request was admitted
  size_t batch = 0;           // rows running once its first request joined them, its own included
};

// A submission refused because max_queued requests are already waiting; the server answers 503.
class Busy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RequestBatcher final : private llm::RequestFeed {
 public:
  // on_done sees each finished submission (logging); it runs on the batcher's thread.
  RequestBatcher(llm::Backbone& backbone, BatcherOptions options,
                 std::function<void(const SubmissionStats&)> on_done = {});
  ~RequestBatcher();  // finishes what is running, fails what still waits
  RequestBatcher(const RequestBatcher&) = delete;
  RequestBatcher& operator=(const RequestBatcher&) = delete;

  // Blocks until the requests are generated; one result per request, in order. If the backbone
  // fails one of them (a bad prompt), the caller gets that exception, and no other caller does.
  // Throws Busy when the queue is full.
  std::vector<llm::GenerationResult> generate(std::vector<llm::GenerationRequest> requests);

  size_t queued() const;  // requests waiting to be admitted
  // Throws Busy when `rows` more requests would not be queued now (a stream asks before it opens).
  void check_room(size_t rows) const;

 private:
  struct Submission {
    std::vector<llm::GenerationRequest> requests;
    std::vector<llm::GenerationResult> results;
    std::promise<std::vector<llm::GenerationResult>> done;
    std::exception_ptr error;
    size_t left = 0;
    std::chrono::steady_clock::time_point submitted;
    std::optional<std::chrono::steady_clock::time_point> admitted;
    size_t batch = 0;
  };
  struct Row {
    std::shared_ptr<Submission> submission;
    size_t index = 0;
  };

  std::vector<Admitted> admit(size_t room, bool idle) override;
  void complete(size_t ticket, llm::GenerationResult result) override;
  void fail(size_t ticket, std::exception_ptr error) override;
  void row_done(size_t ticket, const std::function<void(Submission&, size_t index)>& record);
  void refuse_beyond_room(size_t rows) const;  // under mutex_

  llm::Backbone& backbone_;
  BatcherOptions options_;
  std::function<void(const SubmissionStats&)> on_done_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<Row> waiting_;
  std::map<size_t, Row> running_;  // by ticket
  size_t next_ticket_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace vinci::serve
