#include "cli/backbone_options.h"

#include <spdlog/spdlog.h>

namespace vinci::cli {

void add_backbone_options(CLI::App& app, BackboneOptions& options) {
  app.add_option("--model", options.model, "a Hugging Face checkpoint directory (Qwen2/2.5, Qwen3, Llama-3)")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--device", options.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  app.add_option("--dtype", options.dtype, "auto (bf16 on GPU, fp32 on CPU), float32, bfloat16 or float16")
      ->capture_default_str();
  app.add_option("--chat-template", options.chat_template, "a Jinja chat template overriding the checkpoint's")
      ->check(CLI::ExistingFile);
}

std::unique_ptr<llm::TrainableBackbone> open_backbone(const BackboneOptions& options) {
  llm::NativeOptions native;
  native.device = options.device;
  native.dtype = options.dtype;
  native.chat_template = options.chat_template;
  spdlog::info("loading {} ({}, {})", options.model, options.device, options.dtype);
  return llm::open_native_backbone(options.model, native);
}

}  // namespace vinci::cli
