// What `vinci optimize` and `vinci bench-model` share: the model the agents run on.
//
// What `vinci optimize` and `vinci bench-model` share: the model the agents run on (a checkpoint
// through the native backbone, or an OpenAI-compatible server; the evaluator's options are in
// evaluator_options.h). --device is the evaluator's; the checkpoint's is --model-device.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/backbone_options.h"
#include "eval/task.h"
#include "llm/backbone.h"

namespace vinci::cli {

struct AgentModelOptions {
  std::string model, model_device = "auto", dtype = "auto", chat_template;
  ServerBackboneOptions server;
  std::string describe() const;  // the checkpoint, or the server's URL and model name
};

// Also makes one of --model and --llm required (the app's callback).
void add_agent_model_options(CLI::App& app, AgentModelOptions& options);
std::unique_ptr<llm::Backbone> open_agent_model(const AgentModelOptions& options);

// Writes out/run.json; on --resume first warns when the earlier run's settings differ, since only
// calls identical to its own are then answered from the journal.
void write_run_settings(const std::filesystem::path& out, const nlohmann::json& settings, bool resume);

// The tasks of a suite that pass --level (empty: all) and --filter (a regex on the task id); throws
// when none does.
std::vector<eval::Task> select_tasks(const std::string& dir, const std::vector<int>& levels, const std::string& filter);

}  // namespace vinci::cli
