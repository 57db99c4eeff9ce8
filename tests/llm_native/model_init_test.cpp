// A model from nothing (llm_native/model_init.h): what the config is completed with from the tokenizer, the
// errors that name the field, and the shard size a model starts with and keeps through later saves.
// tests/cli/init_model_test.py loads the result in transformers and compares tokens and logprobs.
#include "llm_native/model_init.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/files.h"
#include "core/setup_error.h"
#include "llm_native/native_backbone.h"
#include "support/temp_dir.h"

namespace model_init_test {

namespace fs = std::filesystem;
using namespace vinci;
using nlohmann::json;

// The qwen2 fixture's tokenizer: 916 tokens, eos_token "<|im_end|>", no bos_token.
const fs::path kTokenizer = fs::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm/models/qwen2";

json small_config() {
  return {{"model_type", "qwen2"},          {"hidden_size", 64},           {"intermediate_size", 128},
          {"num_hidden_layers", 2},         {"num_attention_heads", 4},    {"num_key_value_heads", 2},
          {"max_position_embeddings", 256}, {"tie_word_embeddings", false}};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::SetupError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ModelInit, TheTokenizerFillsWhatTheConfigLeavesOut) {
  const json c = llm::complete_model_config(small_config(), "small.json", kTokenizer, "bfloat16");
  EXPECT_EQ(c["vocab_size"], 960) << "916 tokens rounded up to a multiple of 64";
  ASSERT_TRUE(c["eos_token_id"].is_number_integer());
  EXPECT_EQ(c["eos_token_id"], text::Tokenizer::from_file(kTokenizer / "tokenizer.json").token_to_id("<|im_end|>"));
  EXPECT_FALSE(c.contains("bos_token_id")) << "tokenizer_config.json names no bos_token";
  EXPECT_EQ(c["architectures"], json::array({"Qwen2ForCausalLM"}));
  EXPECT_EQ(c["torch_dtype"], "bfloat16");
  json given = small_config();
  given["vocab_size"] = 1000;
  given["eos_token_id"] = 5;
  const json kept = llm::complete_model_config(given, "small.json", kTokenizer, "float32");
  EXPECT_EQ(kept["vocab_size"], 1000);
  EXPECT_EQ(kept["eos_token_id"], 5);
}

TEST(ModelInit, ErrorsNameTheFileAndTheField) {
  json small = small_config();
  small["vocab_size"] = 900;
  EXPECT_NE(error_of([&] {
              llm::complete_model_config(small, "small.json", kTokenizer, "float32");
            }).find("small.json: vocab_size: 900 is smaller than the tokenizer's 916 tokens"),
            std::string::npos);
  json no_type = small_config();
  no_type["model_type"] = "gpt9";
  EXPECT_NE(error_of([&] { llm::complete_model_config(no_type, "small.json", kTokenizer, "float32"); }).find("gpt9"),
            std::string::npos);
  test::TempDir dir("model-init");
  core::write_file_atomic(dir.path() / "tok" / "tokenizer.json", core::read_file(kTokenizer / "tokenizer.json"));
  EXPECT_NE(error_of([&] {
              llm::complete_model_config(small_config(), "small.json", dir.path() / "tok", "float32");
            }).find("small.json: eos_token_id: missing"),
            std::string::npos)
      << "no tokenizer_config.json to take the eos token from";
  core::write_file_atomic(dir.path() / "tok" / "tokenizer_config.json", R"({"eos_token": {"special": true}})");
  EXPECT_NE(error_of([&] {
              llm::complete_model_config(small_config(), "small.json", dir.path() / "tok", "float32");
            }).find("tokenizer_config.json: \"eos_token\" must be a string or an object with a \"content\" string"),
            std::string::npos)
      << "an AddedToken without content";
  EXPECT_NE(error_of([&] {
              llm::complete_model_config(small_config(), "small.json", dir.path(), "float32");
            }).find("no tokenizer.json"),
            std::string::npos);
}

std::vector<std::string> safetensors_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".safetensors") out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

// The small config's init spec in dir: weights of dtype, in files of at most max_shard_bytes.
llm::ModelInitSpec small_spec(const test::TempDir& dir, const std::string& dtype, std::size_t max_shard_bytes) {
  core::write_file_atomic(dir.path() / "small.json", small_config().dump());
  return {.config = dir.path() / "small.json",
          .tokenizer = kTokenizer,
          .out = dir.path() / "model",
          .seed = 7,
          .dtype = dtype,
          .max_shard_bytes = max_shard_bytes};
}

TEST(ModelInit, WritesShardsWithinTheLimitThatLaterSavesKeep) {
  test::TempDir dir("model-init");
  llm::ModelInitSpec spec = small_spec(dir, "float32", 300'000);
  const auto summary = llm::init_model(spec);
  // 960 x 64 embeddings and as many output rows, and per layer q, k, v (with biases), o, the MLP and
  // two norms, and the final norm: counted by hand from the shape.
  const int64_t layer = 64 * 64 + 64 + 2 * (64 * 32 + 32) + 64 * 64 + 3 * 64 * 128 + 2 * 64;
  EXPECT_EQ(summary.parameters, 2 * 960 * 64 + 2 * layer + 64);
  const auto shards = safetensors_files(spec.out);
  ASSERT_EQ(shards.size(), 3u) << "789 kB of float32 weights in shards of 300 kB";
  std::uintmax_t largest = 0;
  for (const auto& name : shards) {
    EXPECT_LE(fs::file_size(spec.out / name), 300'000u + 4096) << name << ": beyond the limit and its header";
    largest = std::max(largest, fs::file_size(spec.out / name));
  }
  EXPECT_TRUE(fs::exists(spec.out / "tokenizer.json"));
  EXPECT_EQ(error_of([&] { llm::init_model(spec); }).find(spec.out.string() + ": exists"), 0u);

  // Opened again with no shard size given, a save writes no file larger than the largest it read.
  llm::NativeOptions options;
  options.device = "cpu";
  auto model = llm::open_native_backbone(spec.out, options);
  model->save(dir.path() / "saved");
  const auto saved = safetensors_files(dir.path() / "saved");
  EXPECT_GE(saved.size(), 3u);
  for (const auto& name : saved) EXPECT_LE(fs::file_size(dir.path() / "saved" / name), largest) << name;
  // Same seed, same weights: a second init writes the same bytes.
  spec.out = dir.path() / "again";
  llm::init_model(spec);
  for (const auto& name : shards)
    EXPECT_EQ(core::read_file(dir.path() / "model" / name), core::read_file(spec.out / name)) << name;
}

TEST(ModelInit, AModelBegunInOneFileKeepsTheLimitWhenItsSavesGrow) {
  test::TempDir dir("model-init");
  // 395 kB of bf16 weights fit one file of 500 kB; trained with fp32 masters they are 789 kB.
  const llm::ModelInitSpec spec = small_spec(dir, "bfloat16", 500'000);
  llm::init_model(spec);
  ASSERT_EQ(safetensors_files(spec.out), std::vector<std::string>{"model.safetensors"});
  llm::NativeOptions options;
  options.device = "cpu";
  options.dtype = "float32";
  auto model = llm::open_native_backbone(spec.out, options);
  model->save(dir.path() / "saved");
  const auto saved = safetensors_files(dir.path() / "saved");
  EXPECT_EQ(saved.size(), 2u);
  for (const auto& name : saved) EXPECT_LE(fs::file_size(dir.path() / "saved" / name), 500'000u + 4096) << name;
  // And the next save, from the sharded one, still knows the limit, not just its largest shard.
  auto again = llm::open_native_backbone(dir.path() / "saved", options);
  again->save(dir.path() / "again");
  EXPECT_EQ(safetensors_files(dir.path() / "again"), saved);
}

}  // namespace model_init_test
