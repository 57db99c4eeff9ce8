// vinci chat: an interactive conversation with a checkpoint, through its chat template.
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/backbone_options.h"
#include "cli/checks.h"
#include "cli/commands.h"

namespace vinci::cli {

namespace {

struct ChatCommandOptions {
  BackboneOptions backbone;
  std::string system;
  int max_new_tokens = 1024;
  double temperature = 0.7, top_p = 0.95;
  bool no_thinking = false;
};

int run_chat(const ChatCommandOptions& o) {
  auto backbone = open_backbone(o.backbone);
  const auto fresh = [&] {
    std::vector<llm::ChatMessage> messages;
    if (!o.system.empty()) messages.push_back({"system", o.system});
    return messages;
  };
  std::vector<llm::ChatMessage> messages = fresh();
  fmt::print(stderr, "type a message; /reset starts over, /exit (or end of input) quits\n");
  std::string line;
  while (fmt::print(stderr, "> "), std::getline(std::cin, line)) {
    if (line == "/exit") break;
    if (line == "/reset") {
      messages = fresh();
      continue;
    }
    if (line.empty()) continue;
    messages.push_back({"user", line});
    llm::GenerationRequest request;
    request.messages = messages;
    if (o.no_thinking) request.chat_extra["enable_thinking"] = false;
    request.sampling.max_new_tokens = o.max_new_tokens;
    request.sampling.temperature = o.temperature;
    request.sampling.top_p = o.top_p;
    auto reply = backbone->generate({&request, 1}).at(0);
    fmt::print("{}\n", reply.text);
    if (reply.finish_reason == llm::FinishReason::length)
      fmt::print(stderr, "(cut at --max-new-tokens {})\n", o.max_new_tokens);
    messages.push_back({"assistant", reply.text});
  }
  return 0;
}

}  // namespace

Action add_chat_command(CLI::App& app) {
  auto o = std::make_shared<ChatCommandOptions>();
  add_backbone_options(app, o->backbone);
  app.add_option("--system", o->system, "a system message opening the conversation");
  app.add_option("--max-new-tokens", o->max_new_tokens, "longest reply in tokens")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--temperature", o->temperature, "sampling temperature (0: greedy)")->capture_default_str();
  app.add_option("--top-p", o->top_p, "nucleus sampling mass")->capture_default_str();
  app.add_flag("--no-thinking", o->no_thinking, "enable_thinking=false for templates that know it (Qwen3)");
  return [o] { return run_chat(*o); };
}

}  // namespace vinci::cli
