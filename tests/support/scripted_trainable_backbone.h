// A TrainableBackbone whose answers come from a script while everything else is a real native
// model's: each scripted text is tokenized by the model's tokenizer, its prompt rendered by the
// model's chat template, and its rollout logprobs are the model's own, teacher forced. The
// co-evolution loop then runs every stage it has (kernels that build and win, summaries,
// verification, admission) on calls the trainer can train on, which a tiny random model never
// reaches by itself.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "llm/backbone.h"
#include "text/tokenizer.h"

namespace vinci::test {

class ScriptedTrainableBackbone final : public llm::TrainableBackbone {
 public:
  // The answer to a request; id counts the answers from 1.
  using Script = std::function<std::string(const llm::GenerationRequest& request, int id)>;

  ScriptedTrainableBackbone(std::unique_ptr<llm::TrainableBackbone> model, Script script)
      : model_(std::move(model)), script_(std::move(script)) {}

  std::vector<llm::GenerationResult> generate(std::span<const llm::GenerationRequest> requests) override {
    std::vector<llm::GenerationResult> out;
    for (const auto& request : requests) {
      requests_.push_back(request);
      llm::GenerationResult r;
      r.text = script_(request, ++answers_);
      r.prompt_ids = request.prompt_ids.empty()
                         ? model_->render_chat(llm::to_json(request.messages), request.chat_extra, true)
                         : request.prompt_ids;
      r.token_ids = model_->tokenizer().encode(r.text);
      llm::TrainSequence sequence{r.prompt_ids, std::vector<uint8_t>(r.prompt_ids.size(), 0)};
      sequence.ids.insert(sequence.ids.end(), r.token_ids.begin(), r.token_ids.end());
      sequence.loss_mask.resize(sequence.ids.size(), 1);
      const c10::NoGradGuard no_grad;
      const auto logprobs = model_->logprobs({{sequence}}, {}).to(at::kCPU, at::kFloat).contiguous();
      r.logprobs.assign(logprobs.data_ptr<float>(), logprobs.data_ptr<float>() + logprobs.numel());
      r.finish_reason = llm::FinishReason::stop;
      out.push_back(std::move(r));
    }
    return out;
  }
  std::string model_name() const override { return "scripted " + model_->model_name(); }

  at::Tensor logprobs(std::span<const llm::TrainSequence> sequences, const llm::LogprobOptions& options) override {
    return model_->logprobs(sequences, options);
  }
  std::vector<at::Tensor> trainable_parameters() override { return model_->trainable_parameters(); }
  void save(const std::filesystem::path& dir) const override { model_->save(dir); }
  void load(const std::filesystem::path& dir) override { model_->load(dir); }
  const text::Tokenizer& tokenizer() const override { return model_->tokenizer(); }
  std::vector<int32_t> render_chat(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& extra,
                                   bool add_generation_prompt) const override {
    return model_->render_chat(messages, extra, add_generation_prompt);
  }

  const std::vector<llm::GenerationRequest>& requests() const { return requests_; }

 private:
  std::unique_ptr<llm::TrainableBackbone> model_;
  Script script_;
  std::vector<llm::GenerationRequest> requests_;
  int answers_ = 0;
};

}  // namespace vinci::test
