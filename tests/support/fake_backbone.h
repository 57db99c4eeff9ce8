// A Backbone that answers from a script and keeps every request, for testing the agents without a
// model. Each generate() call takes one scripted result per request, in order.
#pragma once

#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "llm/backbone.h"

namespace vinci::test {

class FakeBackbone final : public llm::Backbone {
 public:
  void push(llm::GenerationResult result) { script_.push_back(std::move(result)); }
  void push_text(const std::string& text) {
    llm::GenerationResult r;
    r.text = text;
    r.prompt_ids = {1, 2};
    for (size_t i = 0; i < text.size() && i < 4; ++i) {
      r.token_ids.push_back(100 + static_cast<int32_t>(i));
      r.logprobs.push_back(-0.5f);
    }
    r.finish_reason = llm::FinishReason::stop;
    push(std::move(r));
  }

  std::vector<llm::GenerationResult> generate(std::span<const llm::GenerationRequest> requests) override {
    std::vector<llm::GenerationResult> out;
    for (const auto& r : requests) {
      if (script_.empty()) throw std::logic_error("FakeBackbone: no scripted result left");
      requests_.push_back(r);
      out.push_back(std::move(script_.front()));
      script_.pop_front();
    }
    return out;
  }
  std::string model_name() const override { return "fake"; }

  const std::vector<llm::GenerationRequest>& requests() const { return requests_; }
  size_t left() const { return script_.size(); }

 private:
  std::deque<llm::GenerationResult> script_;
  std::vector<llm::GenerationRequest> requests_;
};

}  // namespace vinci::test
