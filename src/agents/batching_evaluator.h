// Several agent loops on one evaluator pool: each loop (a thread running agents::optimize on its own
// task) calls evaluate() with its turn's few jobs, and those calls are merged into one pool run.
// One GPU measures one candidate at a time, but a run builds its candidates in parallel and starts
// the next sandboxed runner while one is timed: a run of 2 jobs pays a build, a load and a task
// baseline in turn, one of 16 overlaps them.
//
// A batch runs when every client still taking part has submitted its jobs or left, so it is never
// short of a loop that was about to submit; which jobs share a batch does not change any job's
// result. A client that will evaluate no more must leave() (ClientLease does it on every path
// out), or the others wait for it.
#pragma once

#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "agents/kernel_evaluator.h"

namespace vinci::agents {

class BatchingEvaluator final : public KernelEvaluator {
 public:
  // clients: the loops that will call evaluate(), each until it leaves.
  BatchingEvaluator(KernelEvaluator& inner, int clients);

  // Blocks until the batch holding these jobs has run; one result per job, in order. An exception
  // of the inner evaluator reaches every client of that batch.
  std::vector<eval::Result> evaluate(const std::vector<eval::Job>& jobs) override;
  std::string device() const override { return inner_.device(); }

  void leave();

  // Leaves when it goes out of scope, whether the client's loop returned or threw.
  class ClientLease {
   public:
    explicit ClientLease(BatchingEvaluator& evaluator) : evaluator_(evaluator) {}
    ~ClientLease() { evaluator_.leave(); }
    ClientLease(const ClientLease&) = delete;
    ClientLease& operator=(const ClientLease&) = delete;

   private:
    BatchingEvaluator& evaluator_;
  };

 private:
  struct Request {
    const std::vector<eval::Job>* jobs = nullptr;
    std::vector<eval::Result> results;
    std::exception_ptr error;
    bool done = false;
  };
  void run_pending(std::unique_lock<std::mutex>& lock);

  KernelEvaluator& inner_;
  std::mutex mu_;
  std::condition_variable changed_;
  int active_;
  bool running_ = false;
  std::vector<Request*> pending_;
};

}  // namespace vinci::agents
