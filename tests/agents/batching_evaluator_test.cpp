// agents::BatchingEvaluator: concurrent clients' evaluate() calls merged into one inner run, each
// client given back exactly its own results; a client that leaves never holds the others up; an
// inner failure reaches every client of its batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "agents/batching_evaluator.h"
#include "support/scripted_evaluator.h"

namespace batching_evaluator_test {

using vinci::agents::BatchingEvaluator;
using vinci::eval::Job;

// A job whose scripted result carries its own speedup: client c's round r, job j gets c.rj.
Job job(int client, int round, int j) {
  Job out;
  out.task.id = fmt::format("level1/{}_T{}", client + 1, client);
  out.candidate.file = fmt::format("c{}_r{}_j{}.py", client, round, j);
  out.candidate.source = fmt::format("eager={}.{}{}", client + 1, round, j);
  return out;
}

TEST(BatchingEvaluator, ConcurrentClientsShareOneRunAndGetTheirOwnResults) {
  vinci::test::ScriptedEvaluator inner;
  BatchingEvaluator batching(inner, 3);
  std::vector<std::vector<std::string>> got(3);
  std::vector<std::thread> threads;
  for (int c = 0; c < 3; ++c)
    threads.emplace_back([&, c] {
      BatchingEvaluator::ClientLease lease(batching);
      // Clients ask for 1, 2 and 3 jobs a round; client 0 stops after one round.
      for (int round = 0; round < (c == 0 ? 1 : 2); ++round) {
        std::vector<Job> jobs;
        for (int j = 0; j <= c; ++j) jobs.push_back(job(c, round, j));
        for (const auto& r : batching.evaluate(jobs)) got[c].push_back(r.candidate);
      }
    });
  for (auto& t : threads) t.join();
  // Round 1: every client's jobs in one run (1 + 2 + 3); round 2: the two that stayed (2 + 3).
  ASSERT_EQ(inner.calls.size(), 2u);
  EXPECT_EQ(inner.calls[0].size(), 6u);
  EXPECT_EQ(inner.calls[1].size(), 5u);
  EXPECT_EQ(got[0], (std::vector<std::string>{"c0_r0_j0.py"}));
  EXPECT_EQ(got[1], (std::vector<std::string>{"c1_r0_j0.py", "c1_r0_j1.py", "c1_r1_j0.py", "c1_r1_j1.py"}));
  EXPECT_EQ(got[2].size(), 6u);
  for (size_t k = 0; k < got[2].size(); ++k) EXPECT_EQ(got[2][k], fmt::format("c2_r{}_j{}.py", k / 3, k % 3));
}

TEST(BatchingEvaluator, AClientThatLeavesWithoutAskingHoldsNoOneUp) {
  vinci::test::ScriptedEvaluator inner;
  BatchingEvaluator batching(inner, 2);
  std::thread quitter([&] { BatchingEvaluator::ClientLease lease(batching); });
  const auto results = batching.evaluate({job(1, 0, 0)});
  quitter.join();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_DOUBLE_EQ(*results[0].speedup_eager, 2.0);
  batching.leave();
}

class ThrowingEvaluator final : public vinci::agents::KernelEvaluator {
 public:
  std::vector<vinci::eval::Result> evaluate(const std::vector<Job>&) override {
    throw std::runtime_error("the pool is gone");
  }
  std::string device() const override { return "none"; }
};

TEST(BatchingEvaluator, AnInnerFailureReachesEveryClientOfItsBatch) {
  ThrowingEvaluator inner;
  BatchingEvaluator batching(inner, 2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int c = 0; c < 2; ++c)
    threads.emplace_back([&, c] {
      BatchingEvaluator::ClientLease lease(batching);
      try {
        batching.evaluate({job(c, 0, 0)});
      } catch (const std::runtime_error& e) {
        errors[c] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors, (std::vector<std::string>{"the pool is gone", "the pool is gone"}));
  EXPECT_THROW(BatchingEvaluator(inner, 0), std::invalid_argument);
}

}  // namespace batching_evaluator_test
