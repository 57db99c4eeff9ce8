#include "cli/agent_options.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/files.h"
#include "llm/openai_backbone.h"

namespace vinci::cli {

std::string AgentModelOptions::describe() const {
  return server.url.empty() ? model : server.url + " " + server.model_name;
}

void add_agent_model_options(CLI::App& app, AgentModelOptions& o) {
  auto* model = app.add_option("--model", o.model, "a Hugging Face checkpoint directory, run by the native backbone")
                    ->check(CLI::ExistingDirectory);
  auto* llm = add_server_backbone_options(app, o.server);
  model->excludes(llm);
  app.add_option("--model-device", o.model_device, "where the --model runs: auto, cpu, cuda or cuda:N")
      ->capture_default_str();
  app.add_option("--dtype", o.dtype, "the --model's dtype: auto, float32, bfloat16 or float16")->capture_default_str();
  app.add_option("--chat-template", o.chat_template, "a Jinja chat template overriding the checkpoint's")
      ->check(CLI::ExistingFile);
  app.callback([model, llm] {
    if (model->count() == 0 && llm->count() == 0) throw CLI::RequiredError("--model or --llm");
  });
}

std::unique_ptr<llm::Backbone> open_agent_model(const AgentModelOptions& o) {
  if (!o.server.url.empty()) {
    auto backbone = open_server_backbone(o.server);
    llm::OpenAiOptions probe;  // the agents' run is long: an unreachable server must stop it before it starts
    probe.base_url = o.server.url;
    probe.model = o.server.model_name;
    probe.api_key_env = o.server.api_key_env;
    llm::check_openai_server(probe);
    return backbone;
  }
  return open_backbone({o.model, o.model_device, o.dtype, o.chat_template});
}

void write_run_settings(const std::filesystem::path& out, const nlohmann::json& settings, bool resume) {
  const auto path = out / "run.json";
  if (resume)
    if (auto old = core::try_read_file(path); old && nlohmann::json::parse(*old, nullptr, false) != settings)
      spdlog::warn("{} was written with other settings: only calls identical to the earlier run's are replayed",
                   path.string());
  core::write_file_atomic(path, settings.dump(2) + "\n");
}

std::vector<eval::Task> select_tasks(const std::string& dir, const std::vector<int>& levels,
                                     const std::string& filter) {
  const eval::Suite suite = eval::load_suite(dir);
  for (const auto& s : suite.skipped) spdlog::warn("skipped {}", s);
  const std::regex pattern(filter.empty() ? ".*" : filter);
  std::vector<eval::Task> out;
  for (const auto& t : suite.tasks) {
    if (!levels.empty() && std::find(levels.begin(), levels.end(), t.level) == levels.end()) continue;
    if (std::regex_search(t.id, pattern)) out.push_back(t);
  }
  if (out.empty()) throw std::runtime_error(fmt::format("no task of {} passes --level/--filter", dir));
  return out;
}

}  // namespace vinci::cli
