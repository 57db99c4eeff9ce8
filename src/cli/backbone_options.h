// The options every command that runs the native backbone shares (--model, --device, ...).
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "llm/native_backbone.h"

namespace vinci::cli {

struct BackboneOptions {
  std::string model, device = "auto", dtype = "auto", chat_template;
};

void add_backbone_options(CLI::App& app, BackboneOptions& options);
std::unique_ptr<llm::TrainableBackbone> open_backbone(const BackboneOptions& options);

}  // namespace vinci::cli
