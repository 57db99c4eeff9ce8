// A Backbone that holds every generate call until opened, so a test can keep the backbone busy
// while the next requests queue. Each result is the text "ok", one token (5, logprob -0.5).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "llm/backbone.h"

namespace vinci::test {

class GatedBackbone final : public llm::Backbone {
 public:
  std::vector<llm::GenerationResult> generate(std::span<const llm::GenerationRequest> requests) override {
    std::unique_lock lock(mutex_);
    ++running_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
    std::vector<llm::GenerationResult> out(requests.size());
    for (auto& r : out) {
      r.text = "ok";
      r.token_ids = {5};
      r.logprobs = {-0.5f};
    }
    return out;
  }
  std::string model_name() const override { return "gated"; }
  // False after 30 s without a generate call (the request never reached the backbone).
  bool wait_running() {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(30), [&] { return running_ > 0; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int running_ = 0;
  bool open_ = false;
};

}  // namespace vinci::test
