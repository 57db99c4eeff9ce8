// The batcher of `vinci serve`: concurrent callers share generate calls, each gets its own results
// back in order, one caller's bad request fails only that caller, and a full queue refuses more.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "serve/request_batcher.h"
#include "support/gated_backbone.h"

namespace request_batcher_test {

using vinci::llm::GenerationRequest;
using vinci::llm::GenerationResult;
using vinci::serve::BatcherOptions;
using vinci::serve::RequestBatcher;

// Answers each request with its prompt's first id as text; refuses prompt id 666.
class EchoBackbone final : public vinci::llm::Backbone {
 public:
  std::vector<GenerationResult> generate(std::span<const GenerationRequest> requests) override {
    {
      std::lock_guard lock(mutex_);
      calls_.push_back(requests.size());
    }
    std::vector<GenerationResult> out;
    for (const auto& r : requests) {
      if (r.prompt_ids.at(0) == 666) throw std::invalid_argument("prompt id 666 is refused");
      GenerationResult g;
      g.text = std::to_string(r.prompt_ids.at(0));
      g.token_ids = r.prompt_ids;
      out.push_back(std::move(g));
    }
    return out;
  }
  std::string model_name() const override { return "echo"; }
  std::vector<size_t> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<size_t> calls_;
};

std::vector<GenerationRequest> requests_for(std::vector<int32_t> first_ids) {
  std::vector<GenerationRequest> out;
  for (const int32_t id : first_ids) {
    GenerationRequest r;
    r.prompt_ids = {id, 7};
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> texts(const std::vector<GenerationResult>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) out.push_back(r.text);
  return out;
}

// A long gather window makes the rounds deterministic: a round starts once max_batch rows are queued.
BatcherOptions waiting_for(size_t rows) { return {rows, std::chrono::seconds(30)}; }

TEST(RequestBatcher, ConcurrentCallersShareOneGenerateCall) {
  EchoBackbone backbone;
  RequestBatcher batcher(backbone, waiting_for(5));
  std::vector<std::vector<std::string>> got(3);
  std::vector<std::thread> callers;
  const std::vector<std::vector<int32_t>> asks = {{1}, {2, 3}, {4, 5}};
  for (size_t c = 0; c < asks.size(); ++c)
    callers.emplace_back([&, c] { got[c] = texts(batcher.generate(requests_for(asks[c]))); });
  for (auto& t : callers) t.join();
  EXPECT_EQ(backbone.calls(), std::vector<size_t>{5});
  EXPECT_EQ(got[0], (std::vector<std::string>{"1"}));
  EXPECT_EQ(got[1], (std::vector<std::string>{"2", "3"}));
  EXPECT_EQ(got[2], (std::vector<std::string>{"4", "5"}));
}

// Rows are admitted max_batch at a time, whichever submission they belong to; the caller still
// gets all its results at once, in order.
TEST(RequestBatcher, ASubmissionLargerThanABatchIsSplitAndReturnedWhole) {
  EchoBackbone backbone;
  RequestBatcher batcher(backbone, {3, std::chrono::milliseconds(0)});
  const auto got = texts(batcher.generate(requests_for({1, 2, 3, 4, 5, 6, 7})));
  EXPECT_EQ(got, (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7"}));
  EXPECT_EQ(backbone.calls(), (std::vector<size_t>{3, 3, 1}));
}

TEST(RequestBatcher, OnlyTheCallerWithTheBadRequestFails) {
  EchoBackbone backbone;
  RequestBatcher batcher(backbone, waiting_for(3));
  std::vector<std::string> outcome(3);
  std::vector<std::thread> callers;
  const std::vector<int32_t> firsts = {10, 666, 12};
  for (size_t c = 0; c < firsts.size(); ++c)
    callers.emplace_back([&, c] {
      try {
        outcome[c] = batcher.generate(requests_for({firsts[c]})).at(0).text;
      } catch (const std::invalid_argument& e) {
        outcome[c] = std::string("refused: ") + e.what();
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(outcome, (std::vector<std::string>{"10", "refused: prompt id 666 is refused", "12"}));
  // The shared round failed, then each submission was retried alone.
  EXPECT_EQ(backbone.calls(), (std::vector<size_t>{3, 1, 1, 1}));
}

TEST(RequestBatcher, ReportsEachSubmission) {
  EchoBackbone backbone;
  std::vector<vinci::serve::SubmissionStats> done;
  {
    RequestBatcher batcher(backbone, {8, std::chrono::milliseconds(0)},
                           [&](const vinci::serve::SubmissionStats& s) { done.push_back(s); });
    batcher.generate(requests_for({1, 2}));
    batcher.generate(requests_for({3}));
  }
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].requests, 2u);
  EXPECT_EQ(done[0].new_tokens, 4u);  // two token ids echoed per request
  EXPECT_EQ(done[1].requests, 1u);
  EXPECT_LE(done[0].queued_seconds, done[0].seconds);
  EXPECT_EQ(done[0].batch, 2u) << "its two rows ran together";
  EXPECT_EQ(done[1].batch, 1u);
}

TEST(RequestBatcher, AFullQueueRefusesWhatWouldOverflowIt) {
  vinci::test::GatedBackbone backbone;
  BatcherOptions options;
  options.max_queued = 3;
  options.gather_window = std::chrono::milliseconds(0);
  RequestBatcher batcher(backbone, options);
  std::vector<std::thread> callers;
  callers.emplace_back([&] { batcher.generate(requests_for({1})); });
  // The first round holds the backbone; what follows waits in the queue.
  ASSERT_TRUE(backbone.wait_running()) << "the first request never reached the backbone";
  callers.emplace_back([&] { batcher.generate(requests_for({2, 3})); });
  for (int i = 0; i < 1000 && batcher.queued() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(batcher.queued(), 2u);
  EXPECT_NO_THROW(batcher.check_room(1)) << "2 waiting + 1 fits a queue of 3";
  EXPECT_THROW(batcher.check_room(2), vinci::serve::Busy);
  try {
    batcher.generate(requests_for({4, 5}));
    ADD_FAILURE() << "a submission beyond the queue was accepted";
  } catch (const vinci::serve::Busy& e) {
    EXPECT_NE(std::string(e.what()).find("2 requests are waiting to be admitted (at most 3)"), std::string::npos)
        << e.what();
  }
  backbone.open();
  for (auto& t : callers) t.join();
  EXPECT_EQ(batcher.generate(requests_for({6, 7, 8, 9, 10})).size(), 5u) << "alone, any submission queues";
}

}  // namespace request_batcher_test
