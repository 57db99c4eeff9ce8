// The options every command that runs the native backbone shares (--model, --device, ...).
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "llm/openai_backbone.h"
#include "llm_native/native_backbone.h"

namespace vinci::cli {

struct BackboneOptions {
  std::string model, device = "auto", dtype = "auto", chat_template;
  bool no_cuda_graphs = false;
};

// model_required: false where --llm may stand in for --model.
CLI::Option* add_backbone_options(CLI::App& app, BackboneOptions& options, bool model_required = true);
std::unique_ptr<llm::TrainableBackbone> open_backbone(const BackboneOptions& options);

// An OpenAI-compatible server instead of a checkpoint (--llm URL --model-name NAME ...).
struct ServerBackboneOptions {
  std::string url, model_name, api_key_env = "OPENAI_API_KEY";
  bool no_vllm_extras = false;
  int max_concurrency = 8;
};

CLI::Option* add_server_backbone_options(CLI::App& app, ServerBackboneOptions& options);  // returns --llm
std::unique_ptr<llm::Backbone> open_server_backbone(const ServerBackboneOptions& options);

}  // namespace vinci::cli
