// vinci generate: one completion from a checkpoint or an OpenAI-compatible server.
//
// vinci generate: one completion from a checkpoint (native backbone) or an OpenAI-compatible server
// (--llm), as text or as JSON with ids and logprobs.
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/backbone_options.h"
#include "cli/checks.h"
#include "cli/commands.h"
#include "core/files.h"
#include "core/setup_error.h"
#include "llm/model_config.h"
#include "text/tokenizer.h"

namespace vinci::cli {

namespace {

struct GenerateOptions {
  BackboneOptions backbone;
  ServerBackboneOptions server;
  std::string prompt, messages_file, tools_file, prompt_ids;
  int max_new_tokens = 256, top_k = 0;
  double temperature = 1.0, top_p = 1.0;
  bool greedy = false, json = false, no_thinking = false;
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;
};

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      size_t used = 0;
      ids.push_back(std::stoi(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw std::runtime_error(fmt::format("--prompt-ids: '{}' is not an integer (expected e.g. 1,2,3)", item));
    }
  }
  return ids;
}

// The checkpoint's context bounds prompt + new tokens: checked from config.json before the weights
// load, and with the prompt once it is tokenized, so an impossible request fails at once instead of
// allocating a cache for it.
int64_t context_of(const GenerateOptions& o) {
  const int64_t context = llm::load_model_config(o.backbone.model).max_position_embeddings;
  if (context > 0 && o.max_new_tokens >= context)
    throw core::SetupError(
        fmt::format("--max-new-tokens {}: the model's context is {} tokens, prompt included; "
                    "ask for fewer than {}",
                    o.max_new_tokens, context, context));
  return context;
}

void check_room(const GenerateOptions& o, int64_t context, size_t prompt) {
  if (context > 0 && static_cast<int64_t>(prompt) + o.max_new_tokens > context)
    throw core::SetupError(
        fmt::format("--max-new-tokens {}: the model's context is {} tokens and the prompt has {}; ask for at most {}",
                    o.max_new_tokens, context, prompt, std::max<int64_t>(0, context - static_cast<int64_t>(prompt))));
}

int run_generate(const GenerateOptions& o) {
  std::unique_ptr<llm::TrainableBackbone> native;
  std::unique_ptr<llm::Backbone> server;
  int64_t context = 0;
  if (o.server.url.empty()) {
    context = context_of(o);
    native = open_backbone(o.backbone);
  } else {
    server = open_server_backbone(o.server);
  }
  llm::Backbone& backbone = native ? static_cast<llm::Backbone&>(*native) : *server;
  llm::GenerationRequest request;
  if (!o.prompt_ids.empty()) {
    request.prompt_ids = parse_ids(o.prompt_ids);
  } else if (!o.messages_file.empty()) {
    nlohmann::ordered_json messages;
    try {
      messages = nlohmann::ordered_json::parse(core::read_file(o.messages_file));
    } catch (const nlohmann::ordered_json::parse_error& e) {
      throw std::runtime_error(fmt::format("{}: not JSON: {}", o.messages_file, e.what()));
    }
    try {
      request.messages = llm::chat_messages_from_json(messages, o.messages_file);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(
          fmt::format("{} (expected a JSON array of {{\"role\", \"content\"}} messages)", e.what()));
    }
    if (o.no_thinking) request.chat_extra["enable_thinking"] = false;
    if (!o.tools_file.empty()) {
      try {
        request.chat_extra["tools"] = nlohmann::ordered_json::parse(core::read_file(o.tools_file));
      } catch (const nlohmann::ordered_json::parse_error& e) {
        throw std::runtime_error(fmt::format("{}: not JSON: {}", o.tools_file, e.what()));
      }
      if (!request.chat_extra["tools"].is_array())
        throw std::runtime_error(fmt::format("{}: expected a JSON array of tool schemas", o.tools_file));
    }
  } else if (native) {
    request.prompt_ids = native->tokenizer().encode(o.prompt, /*add_special_tokens=*/true);
  } else {
    throw std::runtime_error("--prompt needs the checkpoint's tokenizer: with --llm, give --messages or --prompt-ids");
  }
  if (native)
    check_room(o, context,
               request.prompt_ids.empty()
                   ? native->render_chat(llm::to_json(request.messages), request.chat_extra, true).size()
                   : request.prompt_ids.size());
  auto& s = request.sampling;
  s.max_new_tokens = o.max_new_tokens;
  s.temperature = o.temperature;
  s.top_p = o.top_p;
  s.top_k = o.top_k;
  s.greedy = o.greedy;
  s.seed = o.seed;
  s.stop_strings = o.stop;
  auto result = backbone.generate({&request, 1}).at(0);
  if (result.error)
    throw std::runtime_error(
        fmt::format("{} failed ({}): {}", o.server.url, result.error->kind, result.error->message));
  if (o.json) {
    nlohmann::json out = {{"ids", result.token_ids},         {"text", result.text},
                          {"logprobs", result.logprobs},     {"finish_reason", llm::to_string(result.finish_reason)},
                          {"prompt_ids", result.prompt_ids}, {"token_ids_known", result.token_ids_known}};
    fmt::print("{}\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print("{}\n", result.text);
  }
  return 0;
}

}  // namespace

Action add_generate_command(CLI::App& app) {
  auto o = std::make_shared<GenerateOptions>();
  auto* model = add_backbone_options(app, o->backbone, /*model_required=*/false);
  auto* llm = add_server_backbone_options(app, o->server);
  model->excludes(llm);
  auto* prompt =
      app.add_option("--prompt", o->prompt, "raw text to continue (tokenized with the model's special tokens)");
  auto* messages =
      app.add_option("--messages", o->messages_file, "a JSON file of chat messages, rendered with the chat template")
          ->check(CLI::ExistingFile);
  auto* ids = app.add_option("--prompt-ids", o->prompt_ids, "token ids to continue, comma-separated");
  prompt->excludes(messages)->excludes(ids);
  messages->excludes(ids);
  app.add_option("--max-new-tokens", o->max_new_tokens, "at most this many new tokens")
      ->capture_default_str()
      ->check(at_least(1));
  app.add_option("--temperature", o->temperature, "sampling temperature (0: greedy)")
      ->capture_default_str()
      ->check(at_least(0));
  app.add_option("--top-p", o->top_p, "nucleus sampling mass")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  app.add_option("--top-k", o->top_k, "sample among the k likeliest tokens (0: all)")->capture_default_str();
  app.add_flag("--greedy", o->greedy, "argmax decoding");
  app.add_option("--seed", o->seed, "seed of this request's sampler");
  app.add_option("--stop", o->stop, "stop when this string appears (repeatable)");
  app.add_option("--tools", o->tools_file, "with --messages: a JSON file of tool schemas for the chat template")
      ->check(CLI::ExistingFile)
      ->needs(messages);
  app.add_flag("--no-thinking", o->no_thinking, "with --messages: enable_thinking=false for templates that know it");
  app.add_flag("--json", o->json,
               "print {\"ids\", \"text\", \"logprobs\", \"finish_reason\", \"prompt_ids\", \"token_ids_known\"}");
  app.callback([o, prompt, messages, ids, model, llm] {
    if (!*model && !*llm) throw CLI::RequiredError("--model or --llm");
    if (!*prompt && !*messages && !*ids) throw CLI::RequiredError("one of --prompt, --messages, --prompt-ids");
  });
  return [o] { return run_generate(*o); };
}

}  // namespace vinci::cli
