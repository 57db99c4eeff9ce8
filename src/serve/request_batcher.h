// Many callers, one backbone: requests that arrive from concurrent callers (the HTTP clients of
// `vinci serve`) are gathered into one Backbone::generate call, so a GPU decodes them as one batch.
//
// This is batching by rounds, not continuous batching: a round runs until its last row finishes,
// and what arrives meanwhile waits for the next round (which then takes all of it at once).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "llm/backbone.h"

namespace vinci::serve {

struct BatcherOptions {
  size_t max_batch = 64;  // requests per generate call; a larger submission runs alone, whole
  // How long a round waits after its first request for others to join, when the backbone is idle.
  std::chrono::milliseconds gather_window{10};
  // Requests waiting for a round, at most: beyond it a submission is refused (Busy) rather than
  // queued without bound behind rounds that may take minutes. One submission alone always queues.
  size_t max_queued = 1024;
};

struct BatchStats {
  size_t submissions = 0;  // callers served by the round
  size_t requests = 0;     // rows generated
  size_t new_tokens = 0;
  double seconds = 0;
};

// A submission refused because max_queued requests are already waiting; the server answers 503.
class Busy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RequestBatcher {
 public:
  // on_round sees each finished round (logging); it runs on the batcher's thread.
  RequestBatcher(llm::Backbone& backbone, BatcherOptions options, std::function<void(const BatchStats&)> on_round = {});
  ~RequestBatcher();  // finishes the round in progress, fails what is still queued
  RequestBatcher(const RequestBatcher&) = delete;
  RequestBatcher& operator=(const RequestBatcher&) = delete;

  // Blocks until the requests are generated; one result per request, in order. A submission is
  // never split across rounds. If the backbone throws on a round of several submissions, each is
  // retried alone so that only the one at fault gets the exception (rethrown here).
  // Throws Busy when the queue is full.
  std::vector<llm::GenerationResult> generate(std::vector<llm::GenerationRequest> requests);

  size_t queued() const;  // requests waiting for a round
  // Throws Busy when `rows` more requests would not be queued now (a stream asks before it opens).
  void check_room(size_t rows) const;

 private:
  struct Submission {
    std::vector<llm::GenerationRequest> requests;
    std::promise<std::vector<llm::GenerationResult>> done;
  };
  void loop();
  size_t queued_rows() const;                  // under mutex_
  void refuse_beyond_room(size_t rows) const;  // under mutex_
  void run_round(std::vector<Submission>& round);

  llm::Backbone& backbone_;
  BatcherOptions options_;
  std::function<void(const BatchStats&)> on_round_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<Submission> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace vinci::serve
