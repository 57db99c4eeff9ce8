// Several agent loops on one model and one evaluator pool, in lockstep.
//
// Several agent loops on one model and one evaluator pool, in lockstep: each loop (a thread running
// agents::optimize on its own task) holds a Lockstep::Client, which is both its backbone and its
// evaluator. A loop's generate() and evaluate() calls wait until every loop still taking part is
// waiting too; then the waiting generations run as one batched generate() and the waiting jobs as
// one pool run, in the loops' index order. One GPU decodes many sequences for the price of a few,
// and measures one candidate at a time while a run of many builds its candidates in parallel and
// starts the next sandboxed runner while one is timed.
//
// Which calls share a batch is decided by the loops' own progress, never by their threads'
// timing: a batch forms only when every loop has made its next call. So a run is as reproducible
// as the loops are, batched generation numerics included, and a resumed run rebuilds the batches
// of the run it continues. The two batches of a round run one after the other, so no generation
// shares the GPU with a timed candidate. A loop that will call no more must leave (a Client does
// it when it goes out of scope, whether the loop returned or threw), or the others wait for it.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "agents/kernel_evaluator.h"
#include "llm/backbone.h"

namespace vinci::agents {

class Lockstep {
 public:
  // clients: the loops that will make calls, each until it leaves.
  Lockstep(llm::Backbone& model, KernelEvaluator& evaluator, int clients);

  // One loop's handle: index orders its calls within a batch (0 .. clients-1, each used once).
  class Client final : public llm::Backbone, public KernelEvaluator {
   public:
    Client(Lockstep& lockstep, int index) : lockstep_(lockstep), index_(index) {}
    ~Client() override { lockstep_.leave(); }
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Block until this loop's batch has run; one result per request or job, in order. An exception
    // of the model or the evaluator reaches every loop of that batch.
    std::vector<llm::GenerationResult> generate(std::span<const llm::GenerationRequest> requests) override;
    std::vector<eval::Result> evaluate(const std::vector<eval::Job>& jobs) override;
    std::string model_name() const override { return lockstep_.model_.model_name(); }
    std::string device() const override { return lockstep_.evaluator_.device(); }

   private:
    Lockstep& lockstep_;
    int index_;
  };

 private:
  struct Call {
    int client = 0;
    std::span<const llm::GenerationRequest> requests;  // a generation, or
    const std::vector<eval::Job>* jobs = nullptr;      // an evaluation
    std::vector<llm::GenerationResult> generated;
    std::vector<eval::Result> results;
    std::exception_ptr error;
    bool done = false;
  };
  void wait_for(Call& call);
  void leave();
  void run_round(std::unique_lock<std::mutex>& lock);

  llm::Backbone& model_;
  KernelEvaluator& evaluator_;
  std::mutex mu_;
  std::condition_variable changed_;
  int active_;
  bool running_ = false;
  std::vector<Call*> waiting_;
};

// Runs body(me, item) for every item in [0, items) on min(loops, items) threads in lockstep on
// model and evaluator. Thread t takes items t, t + threads, ...: a fixed deal, so the batches are
// the same in every run. Once a body throws, no thread starts another item, and the first
// exception is rethrown when every thread has joined.
void for_each_in_lockstep(llm::Backbone& model, KernelEvaluator& evaluator, size_t items, int loops,
                          const std::function<void(Lockstep::Client& me, size_t item)>& body);

}  // namespace vinci::agents
