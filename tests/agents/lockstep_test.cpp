// agents::Lockstep: concurrent loops' generate() and evaluate() calls merged into one batch each
// per round, in the loops' index order, each loop given back exactly its own answers; which calls
// share a batch follows the loops' progress, not their threads' timing; a loop that leaves never
// holds the others up; a failure reaches every loop of its batch.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "agents/lockstep.h"
#include "support/scripted_evaluator.h"

namespace lockstep_test {

using vinci::agents::Lockstep;
using vinci::eval::Job;
using vinci::llm::GenerationRequest;
using vinci::llm::GenerationResult;

// A job whose scripted result carries its own speedup: loop c's round r, job j gets c.rj.
Job job(int client, int round, int j) {
  Job out;
  out.task.id = fmt::format("level1/{}_T{}", client + 1, client);
  out.candidate.file = fmt::format("c{}_r{}_j{}.py", client, round, j);
  out.candidate.source = fmt::format("eager={}.{}{}", client + 1, round, j);
  return out;
}

// A request named by one number: 10 x loop + its call's number.
GenerationRequest request(int name) {
  GenerationRequest r;
  r.prompt_ids = {name};
  return r;
}

// Answers each request with its name and records every batch's names.
class RecordingModel final : public vinci::llm::Backbone {
 public:
  std::vector<GenerationResult> generate(std::span<const GenerationRequest> requests) override {
    std::vector<int> names;
    std::vector<GenerationResult> out;
    for (const auto& r : requests) {
      names.push_back(r.prompt_ids.at(0));
      out.emplace_back().text = fmt::format("answer {}", r.prompt_ids.at(0));
    }
    batches.push_back(names);
    return out;
  }
  std::string model_name() const override { return "recording"; }
  std::vector<std::vector<int>> batches;
};

void jitter(int client) { std::this_thread::sleep_for(std::chrono::milliseconds(7 * ((client * 5) % 3))); }

TEST(Lockstep, ConcurrentLoopsShareOneRunAndGetTheirOwnResults) {
  RecordingModel model;
  vinci::test::ScriptedEvaluator inner;
  Lockstep lockstep(model, inner, 3);
  std::vector<std::vector<std::string>> got(3);
  std::vector<std::thread> threads;
  for (int c = 0; c < 3; ++c)
    threads.emplace_back([&, c] {
      Lockstep::Client me(lockstep, c);
      // Loops ask for 1, 2 and 3 jobs a round; loop 0 stops after one round.
      for (int round = 0; round < (c == 0 ? 1 : 2); ++round) {
        jitter(c + round);
        std::vector<Job> jobs;
        for (int j = 0; j <= c; ++j) jobs.push_back(job(c, round, j));
        for (const auto& r : me.evaluate(jobs)) got[c].push_back(r.candidate);
      }
    });
  for (auto& t : threads) t.join();
  // Round 1: every loop's jobs in one run (1 + 2 + 3), in loop order; round 2: the two that stayed.
  ASSERT_EQ(inner.calls.size(), 2u);
  ASSERT_EQ(inner.calls[0].size(), 6u);
  EXPECT_EQ(inner.calls[0][0].candidate.file, "c0_r0_j0.py");
  EXPECT_EQ(inner.calls[0][5].candidate.file, "c2_r0_j2.py");
  EXPECT_EQ(inner.calls[1].size(), 5u);
  EXPECT_TRUE(model.batches.empty());
  EXPECT_EQ(got[0], (std::vector<std::string>{"c0_r0_j0.py"}));
  EXPECT_EQ(got[1], (std::vector<std::string>{"c1_r0_j0.py", "c1_r0_j1.py", "c1_r1_j0.py", "c1_r1_j1.py"}));
  EXPECT_EQ(got[2].size(), 6u);
  for (size_t k = 0; k < got[2].size(); ++k) EXPECT_EQ(got[2][k], fmt::format("c2_r{}_j{}.py", k / 3, k % 3));
}

TEST(Lockstep, BatchesFollowTheLoopsProgressNotTheirTiming) {
  // Loop 0 generates twice; loop 1 evaluates, then generates; loop 2 generates twice with two
  // requests each. Whatever order the threads reach their calls in, round 1 is the model's batch
  // {0, 20, 21} beside the evaluator's {loop 1}, and round 2 the model's {1, 10, 22, 23}.
  for (int trial = 0; trial < 3; ++trial) {
    RecordingModel model;
    vinci::test::ScriptedEvaluator inner;
    Lockstep lockstep(model, inner, 3);
    std::vector<std::vector<std::string>> answers(3);
    std::vector<std::thread> threads;
    for (int c = 0; c < 3; ++c)
      threads.emplace_back([&, c] {
        Lockstep::Client me(lockstep, c);
        jitter(c + trial);
        const auto ask = [&](std::vector<GenerationRequest> requests) {
          for (const auto& r : me.generate(requests)) answers[c].push_back(r.text);
        };
        if (c == 0) {
          ask({request(0)});
          jitter(trial + 1);
          ask({request(1)});
        } else if (c == 1) {
          EXPECT_EQ(me.evaluate({job(1, 0, 0)}).size(), 1u);
          ask({request(10)});
        } else {
          ask({request(20), request(21)});
          ask({request(22), request(23)});
        }
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(model.batches, (std::vector<std::vector<int>>{{0, 20, 21}, {1, 10, 22, 23}})) << "trial " << trial;
    ASSERT_EQ(inner.calls.size(), 1u);
    EXPECT_EQ(inner.calls[0].size(), 1u);
    EXPECT_EQ(answers[0], (std::vector<std::string>{"answer 0", "answer 1"}));
    EXPECT_EQ(answers[1], (std::vector<std::string>{"answer 10"}));
    EXPECT_EQ(answers[2], (std::vector<std::string>{"answer 20", "answer 21", "answer 22", "answer 23"}));
  }
}

TEST(Lockstep, ALoopThatLeavesWithoutAskingHoldsNoOneUp) {
  RecordingModel model;
  vinci::test::ScriptedEvaluator inner;
  Lockstep lockstep(model, inner, 2);
  std::thread quitter([&] { Lockstep::Client me(lockstep, 0); });
  Lockstep::Client me(lockstep, 1);
  const auto results = me.evaluate({job(1, 0, 0)});
  quitter.join();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_DOUBLE_EQ(*results[0].speedup_eager, 2.0);
  EXPECT_EQ(me.model_name(), "recording");
}

class ThrowingEvaluator final : public vinci::agents::KernelEvaluator {
 public:
  std::vector<vinci::eval::Result> evaluate(const std::vector<Job>&) override {
    throw std::runtime_error("the pool is gone");
  }
  std::string device() const override { return "none"; }
};

TEST(Lockstep, AFailureReachesEveryLoopOfItsBatchAndNoOther) {
  RecordingModel model;
  ThrowingEvaluator inner;
  Lockstep lockstep(model, inner, 3);
  std::vector<std::string> outcome(3);
  std::vector<std::thread> threads;
  for (int c = 0; c < 3; ++c)
    threads.emplace_back([&, c] {
      Lockstep::Client me(lockstep, c);
      try {
        if (c < 2)
          me.evaluate({job(c, 0, 0)});
        else
          outcome[c] = me.generate(std::vector<GenerationRequest>{request(20)}).at(0).text;
      } catch (const std::runtime_error& e) {
        outcome[c] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(outcome, (std::vector<std::string>{"the pool is gone", "the pool is gone", "answer 20"}));
  EXPECT_THROW(Lockstep(model, inner, 0), std::invalid_argument);
}

}  // namespace lockstep_test
