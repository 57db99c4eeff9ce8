#include "cli/backbone_options.h"

#include <spdlog/spdlog.h>

namespace vinci::cli {

CLI::Option* add_backbone_options(CLI::App& app, BackboneOptions& options, bool model_required) {
  auto* model =
      app.add_option("--model", options.model, "a Hugging Face checkpoint directory (Qwen2/2.5, Qwen3, Llama-3)")
          ->required(model_required)
          ->check(CLI::ExistingDirectory);
  app.add_option("--device", options.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  app.add_option("--dtype", options.dtype, "auto (bf16 on GPU, fp32 on CPU), float32, bfloat16 or float16")
      ->capture_default_str();
  app.add_option("--chat-template", options.chat_template, "a Jinja chat template overriding the checkpoint's")
      ->check(CLI::ExistingFile);
  app.add_flag("--no-cuda-graphs", options.no_cuda_graphs,
               "on a GPU, launch each decode step's kernels one by one instead of replaying a CUDA graph");
  return model;
}

std::unique_ptr<llm::TrainableBackbone> open_backbone(const BackboneOptions& options) {
  llm::NativeOptions native;
  native.device = options.device;
  native.dtype = options.dtype;
  native.chat_template = options.chat_template;
  native.cuda_graphs = !options.no_cuda_graphs;
  spdlog::info("loading {} ({}, {})", options.model, options.device, options.dtype);
  return llm::open_native_backbone(options.model, native);
}

CLI::Option* add_server_backbone_options(CLI::App& app, ServerBackboneOptions& options) {
  auto* llm = app.add_option("--llm", options.url,
                             "an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (vLLM, SGLang, vinci serve)");
  app.add_option("--model-name", options.model_name, "the model's name on the --llm server");
  app.add_option("--api-key-env", options.api_key_env, "environment variable holding the --llm server's API key")
      ->capture_default_str();
  app.add_flag("--no-vllm-extras", options.no_vllm_extras,
               "send only OpenAI's own fields (for strict servers); results then carry no token ids");
  app.add_option("--max-concurrency", options.max_concurrency, "requests in flight to the --llm server")
      ->capture_default_str();
  return llm;
}

std::unique_ptr<llm::Backbone> open_server_backbone(const ServerBackboneOptions& options) {
  if (options.model_name.empty())
    throw std::runtime_error("--llm needs --model-name: the name the server serves the model under");
  llm::OpenAiOptions s;
  s.base_url = options.url;
  s.model = options.model_name;
  s.api_key_env = options.api_key_env;
  s.vllm_extras = !options.no_vllm_extras;
  s.max_concurrency = options.max_concurrency;
  return llm::open_openai_backbone(s);
}

}  // namespace vinci::cli
