// vinci tokenize: the ids a checkpoint's tokenizer gives a text (no model weights are read).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "text/tokenizer.h"

namespace vinci::cli {

namespace {

struct TokenizeOptions {
  std::string model, text;
  bool json = false, special = true;
};

int run_tokenize(const TokenizeOptions& o) {
  const auto tokenizer = text::Tokenizer::from_file(std::filesystem::path(o.model) / "tokenizer.json");
  const auto ids = tokenizer.encode(o.text, o.special);
  if (!o.json) {
    fmt::print("{}\n", fmt::join(ids, " "));
    return 0;
  }
  nlohmann::json tokens = nlohmann::json::array();
  for (int32_t id : ids) tokens.push_back(tokenizer.token_bytes(id));
  nlohmann::json out = {{"ids", ids}, {"tokens", tokens}};
  fmt::print("{}\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return 0;
}

}  // namespace

Action add_tokenize_command(CLI::App& app) {
  auto o = std::make_shared<TokenizeOptions>();
  app.add_option("--model", o->model, "a checkpoint directory holding tokenizer.json")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--text", o->text, "the text to tokenize")->required();
  app.add_flag("!--no-special", o->special, "leave out the special tokens the tokenizer adds (e.g. Llama-3's BOS)");
  app.add_flag("--json", o->json, "print {\"ids\": [...], \"tokens\": [...]} (tokens as the bytes they stand for)");
  return [o] { return run_tokenize(*o); };
}

}  // namespace vinci::cli
