// vinci init-model: a checkpoint with random weights for a model trained from nothing.
//
// vinci init-model --config --tokenizer --out: a checkpoint with random weights for a model trained
// from nothing (llm_native/model_init.h), in safetensors shards of --max-shard-mib at most, so that its
// checkpoints move cheaply between machines.
#include <fmt/format.h>

#include "cli/commands.h"
#include "llm_native/model_init.h"

namespace vinci::cli {

namespace {

struct InitModelOptions {
  llm::ModelInitSpec spec;
  int max_shard_mib = 16;
};

// Room for a shard's JSON header, so that a whole file, header included, stays within the limit.
constexpr std::size_t kHeaderRoom = 64u << 10;

int run_init_model(InitModelOptions o) {
  o.spec.max_shard_bytes = (static_cast<std::size_t>(o.max_shard_mib) << 20) - kHeaderRoom;
  const auto summary = llm::init_model(o.spec);
  const auto& c = summary.config;
  fmt::print("{}: {} with {:.2f}M parameters ({} layers, hidden {}, {} heads, {} key-value heads, vocab {}), seed {}\n",
             o.spec.out.string(), c.model_type, static_cast<double>(summary.parameters) / 1e6, c.num_hidden_layers,
             c.hidden_size, c.num_attention_heads, c.num_key_value_heads, c.vocab_size, o.spec.seed);
  for (const auto& [name, bytes] : summary.files) fmt::print("  {:<40} {:>12} bytes\n", name, bytes);
  return 0;
}

}  // namespace

Action add_init_model_command(CLI::App& app) {
  auto o = std::make_shared<InitModelOptions>();
  app.add_option("--config", o->spec.config,
                 "a config.json with model_type and the shape; vocab_size and the eos/bos ids may be left out")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--tokenizer", o->spec.tokenizer,
                 "a folder with tokenizer.json and tokenizer_config.json (scripts/train_tokenizer.py)")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--out", o->spec.out, "the checkpoint folder to create (it must not exist)")->required();
  app.add_option("--seed", o->spec.seed, "draws the weights")->capture_default_str();
  app.add_option("--dtype", o->spec.dtype, "the weights' dtype on disk")
      ->capture_default_str()
      ->check(CLI::IsMember({"float32", "bfloat16", "float16"}));
  app.add_option("--max-shard-mib", o->max_shard_mib, "the largest safetensors file, in MiB; later saves keep it")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  return [o] { return run_init_model(*o); };
}

}  // namespace vinci::cli
