#include "llm_native/model_init.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/setup_error.h"
#include "llm/safetensors.h"
#include "llm_native/native_backbone.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace vinci::llm {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What a tokenizer folder may hold besides tokenizer.json; each is copied when present.
constexpr const char* kTokenizerFiles[] = {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                                           "chat_template.jinja"};

const std::map<std::string, std::string> kArchitectures = {
    {"qwen2", "Qwen2ForCausalLM"}, {"qwen3", "Qwen3ForCausalLM"}, {"llama", "LlamaForCausalLM"}};

json read_json(const fs::path& file) {
  try {
    return json::parse(core::read_file(file));
  } catch (const json::parse_error& e) {
    throw core::SetupError(fmt::format("{}: not JSON: {}", file.string(), e.what()));
  } catch (const std::runtime_error& e) {
    throw core::SetupError(e.what());
  }
}

// The id of a token tokenizer_config.json names ("eos_token": "<|im_end|>", or {"content": ...}).
std::optional<int32_t> named_token(const nlohmann::ordered_json& tokenizer_config, const char* field,
                                   const text::Tokenizer& tokenizer, const fs::path& file) {
  std::string content;
  try {
    content = text::special_token(tokenizer_config, field, file);
  } catch (const text::ChatTemplateError& e) {
    throw core::SetupError(e.what());
  }
  if (content.empty()) return std::nullopt;
  const auto id = tokenizer.token_to_id(content);
  if (!id)
    throw core::SetupError(fmt::format("{}: {}: '{}' is not a token of tokenizer.json", file.string(), field, content));
  return id;
}

}  // namespace

json complete_model_config(json config, const fs::path& config_file, const fs::path& tokenizer_dir,
                           const std::string& dtype) {
  if (!config.is_object()) throw core::SetupError(fmt::format("{}: not a JSON object", config_file.string()));
  if (!fs::exists(tokenizer_dir / "tokenizer.json"))
    throw core::SetupError(
        fmt::format("{}: no tokenizer.json (scripts/train_tokenizer.py writes one)", tokenizer_dir.string()));
  const auto tokenizer = text::Tokenizer::from_file(tokenizer_dir / "tokenizer.json");
  const int64_t tokens = tokenizer.vocab_size();
  if (!config.contains("vocab_size")) {
    config["vocab_size"] =
        (tokens + 63) / 64 * 64;  // matmul-friendly; the rows beyond are never produced by the tokenizer
  } else if (!config["vocab_size"].is_number_integer() || config["vocab_size"].get<int64_t>() < tokens) {
    throw core::SetupError(fmt::format("{}: vocab_size: {} is smaller than the tokenizer's {} tokens ({})",
                                       config_file.string(), config["vocab_size"].dump(), tokens,
                                       (tokenizer_dir / "tokenizer.json").string()));
  }
  const fs::path tokenizer_config_file = tokenizer_dir / "tokenizer_config.json";
  const nlohmann::ordered_json tokenizer_config =
      fs::exists(tokenizer_config_file) ? read_json(tokenizer_config_file) : json::object();
  if (!config.contains("eos_token_id")) {
    const auto eos = named_token(tokenizer_config, "eos_token", tokenizer, tokenizer_config_file);
    if (!eos)
      throw core::SetupError(fmt::format("{}: eos_token_id: missing, and {} names no eos_token to take it from",
                                         config_file.string(), tokenizer_config_file.string()));
    config["eos_token_id"] = *eos;
  }
  if (!config.contains("bos_token_id"))
    if (const auto bos = named_token(tokenizer_config, "bos_token", tokenizer, tokenizer_config_file))
      config["bos_token_id"] = *bos;
  if (!tokenizer_config.contains("chat_template") && !fs::exists(tokenizer_dir / "chat_template.jinja"))
    spdlog::warn("{}: no chat template; the agents talk to a model in chat messages, so give it one",
                 tokenizer_dir.string());
  const std::string type = config.value("model_type", "");
  if (!config.contains("architectures") && kArchitectures.contains(type))
    config["architectures"] = {kArchitectures.at(type)};
  config["torch_dtype"] = dtype;
  try {
    parse_model_config(config, config_file.string());  // the shape checked as a checkpoint's would be
  } catch (const std::runtime_error& e) {
    throw core::SetupError(e.what());
  }
  return config;
}

ModelInitSummary init_model(const ModelInitSpec& spec) {
  const json config = complete_model_config(read_json(spec.config), spec.config, spec.tokenizer, spec.dtype);
  core::write_new_folder(spec.out, [&](const fs::path& staging) {
    core::write_file_atomic(staging / "config.json", config.dump(2) + "\n");
    for (const char* name : kTokenizerFiles)
      if (fs::exists(spec.tokenizer / name)) fs::copy_file(spec.tokenizer / name, staging / name);
    NativeOptions options;
    options.device = "cpu";
    options.dtype = spec.dtype;
    options.random_weights_seed = spec.seed;
    options.max_shard_bytes = spec.max_shard_bytes;
    open_native_backbone(staging, options)->save(staging);
  });
  ModelInitSummary out;
  out.config = load_model_config(spec.out);
  const auto checkpoint = Checkpoint::open(spec.out);
  for (const auto& name : checkpoint.names()) {
    int64_t numel = 1;
    for (const int64_t d : checkpoint.get(name).shape) numel *= d;
    out.parameters += numel;
  }
  for (const auto& e : fs::directory_iterator(spec.out)) out.files.emplace_back(e.path().filename(), e.file_size());
  std::sort(out.files.begin(), out.files.end());
  return out;
}

}  // namespace vinci::llm
