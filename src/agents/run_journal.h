// Stop and resume for agent runs. Every backbone answer and every evaluator result is appended to a
// journal as it arrives; a resumed run repeats the same deterministic schedule and is answered from
// the journal until it reaches the first call that never completed, then carries on live. A call
// is keyed by its content (the request, or the task and candidate hash) and how many identical calls
// came before it in the run.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agents/kernel_evaluator.h"
#include "core/files.h"
#include "llm/backbone.h"

namespace vinci::agents {

class RunJournal {
 public:
  // Reads what an earlier run recorded at path (a torn last line from a killed run is dropped),
  // then appends to it.
  explicit RunJournal(const std::filesystem::path& path);

  std::optional<nlohmann::json> find(const std::string& key) const;
  void record(const std::string& key, const nlohmann::json& value);
  // The key of the n-th call with this content in this run (n counted per content).
  std::string next_key(const std::string& kind, const std::string& content_hash);

  size_t recorded() const { return entries_.size(); }
  size_t replayed() const { return replayed_; }
  void count_replay() { ++replayed_; }

 private:
  std::map<std::string, nlohmann::json> entries_;
  std::map<std::string, int> seen_;
  std::unique_ptr<core::LineWriter> writer_;
  size_t replayed_ = 0;
  mutable std::mutex mu_;
};

nlohmann::json to_json(const llm::GenerationResult& r);
llm::GenerationResult generation_from_json(const nlohmann::json& j);

// Answers from the journal where it can, asks the wrapped backbone for the rest (in one call) and
// records their answers. Failed generations are not recorded: a resumed run tries them again.
class ReplayBackbone final : public llm::Backbone {
 public:
  ReplayBackbone(llm::Backbone& inner, RunJournal& journal) : inner_(inner), journal_(journal) {}
  std::vector<llm::GenerationResult> generate(std::span<const llm::GenerationRequest> requests) override;
  std::string model_name() const override { return inner_.model_name(); }

 private:
  llm::Backbone& inner_;
  RunJournal& journal_;
};

class ReplayEvaluator final : public KernelEvaluator {
 public:
  ReplayEvaluator(KernelEvaluator& inner, RunJournal& journal) : inner_(inner), journal_(journal) {}
  std::vector<eval::Result> evaluate(const std::vector<eval::Job>& jobs) override;
  std::string device() const override { return inner_.device(); }

 private:
  KernelEvaluator& inner_;
  RunJournal& journal_;
};

}  // namespace vinci::agents
