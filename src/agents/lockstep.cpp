#include "agents/lockstep.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace vinci::agents {

namespace {

// The next n answers of a batch, for the call that asked for them.
template <typename T>
std::vector<T> take(std::vector<T>& answers, size_t& next, size_t n) {
  const auto first = answers.begin() + static_cast<std::ptrdiff_t>(next);
  next += n;
  return {std::make_move_iterator(first), std::make_move_iterator(first + static_cast<std::ptrdiff_t>(n))};
}

// Runs a batch and checks it answered every item; what it throws is kept for the batch's callers.
template <typename Answers, typename Run>
std::exception_ptr run_batch(Answers& answers, size_t items, const char* who, Run run) {
  if (items == 0) return nullptr;
  try {
    answers = run();
    if (answers.size() != items)
      throw std::logic_error(fmt::format("the {} answered {} of {} items", who, answers.size(), items));
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

}  // namespace

Lockstep::Lockstep(llm::Backbone& model, KernelEvaluator& evaluator, int clients)
    : model_(model), evaluator_(evaluator), active_(clients) {
  if (clients < 1) throw std::invalid_argument(fmt::format("Lockstep needs at least 1 client, got {}", clients));
}

std::vector<llm::GenerationResult> Lockstep::Client::generate(std::span<const llm::GenerationRequest> requests) {
  Call call;
  call.client = index_;
  call.requests = requests;
  lockstep_.wait_for(call);
  return std::move(call.generated);
}

std::vector<eval::Result> Lockstep::Client::evaluate(const std::vector<eval::Job>& jobs) {
  Call call;
  call.client = index_;
  call.jobs = &jobs;
  lockstep_.wait_for(call);
  return std::move(call.results);
}

void Lockstep::wait_for(Call& call) {
  std::unique_lock lock(mu_);
  waiting_.push_back(&call);
  changed_.notify_all();
  while (!call.done) {
    if (!running_ && static_cast<int>(waiting_.size()) >= active_)
      run_round(lock);
    else
      changed_.wait(lock);
  }
  if (call.error) std::rethrow_exception(call.error);
}

void Lockstep::leave() {
  std::lock_guard lock(mu_);
  --active_;
  changed_.notify_all();  // the round may now be complete: a waiting loop runs it
}

void Lockstep::run_round(std::unique_lock<std::mutex>& lock) {
  running_ = true;
  std::vector<Call*> round;
  round.swap(waiting_);
  lock.unlock();
  std::sort(round.begin(), round.end(), [](const Call* a, const Call* b) { return a->client < b->client; });
  std::vector<llm::GenerationRequest> requests;
  std::vector<eval::Job> jobs;
  for (const Call* c : round) {
    if (c->jobs)
      jobs.insert(jobs.end(), c->jobs->begin(), c->jobs->end());
    else
      requests.insert(requests.end(), c->requests.begin(), c->requests.end());
  }
  std::vector<llm::GenerationResult> generated;
  std::vector<eval::Result> results;
  const auto generate_error = run_batch(generated, requests.size(), "model", [&] { return model_.generate(requests); });
  const auto evaluate_error = run_batch(results, jobs.size(), "evaluator", [&] { return evaluator_.evaluate(jobs); });
  size_t next_generated = 0, next_result = 0;
  for (Call* c : round) {
    if (c->jobs) {
      c->error = evaluate_error;
      if (!c->error) c->results = take(results, next_result, c->jobs->size());
    } else {
      c->error = generate_error;
      if (!c->error) c->generated = take(generated, next_generated, c->requests.size());
    }
  }
  lock.lock();
  for (Call* c : round) c->done = true;
  running_ = false;
  changed_.notify_all();
}

void for_each_in_lockstep(llm::Backbone& model, KernelEvaluator& evaluator, size_t items, int loops,
                          const std::function<void(Lockstep::Client& me, size_t item)>& body) {
  if (items == 0) return;
  const auto threads = static_cast<int>(std::min<size_t>(items, static_cast<size_t>(std::max(1, loops))));
  Lockstep lockstep(model, evaluator, threads);
  std::mutex mu;
  std::exception_ptr error;
  const auto run = [&](int index) {
    Lockstep::Client me(lockstep, index);
    for (size_t item = static_cast<size_t>(index); item < items; item += static_cast<size_t>(threads)) {
      {
        std::lock_guard lock(mu);
        if (error) return;
      }
      try {
        body(me, item);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
        return;
      }
    }
  };
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) running.emplace_back(run, t);
  for (auto& t : running) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace vinci::agents
