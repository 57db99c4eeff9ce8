#include "llm/model_config.h"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <type_traits>

#include "core/files.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using namespace vinci::llm;

namespace model_config_test {

const fs::path kFixtures = fs::path(VINCI_SOURCE_ROOT) / "tests" / "fixtures" / "llm" / "safetensors";

std::string parse_error(const nlohmann::json& config) {
  try {
    parse_model_config(config, "test/config.json");
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("test/config.json"), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for " << config.dump();
  return "";
}

nlohmann::json qwen3_config() {
  return {{"model_type", "qwen3"}, {"hidden_size", 64}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
          {"head_dim", 16},        {"vocab_size", 100}, {"intermediate_size", 128}, {"num_hidden_layers", 2}};
}

// Each config.json variant against what transformers 5.23 made of it: sizes and their defaults,
// biases and q/k norm as the attention modules it built have them, rope parameters, and the
// rotary inv_freq buffer.
TEST(ModelConfigGolden, MatchesTransformers) {
  const auto cases = nlohmann::json::parse(vinci::core::read_file(kFixtures / "configs.json"));
  ASSERT_EQ(cases.size(), 8u);
  for (const auto& [name, c] : cases.items()) {
    SCOPED_TRACE(name);
    const auto& want = c["expected"];
    const ModelConfig got = parse_model_config(c["config"], name);
    EXPECT_EQ(got.model_type, c["config"]["model_type"].get<std::decay_t<decltype(got.model_type)>>());
    EXPECT_EQ(got.vocab_size, want["vocab_size"].get<std::decay_t<decltype(got.vocab_size)>>());
    EXPECT_EQ(got.hidden_size, want["hidden_size"].get<std::decay_t<decltype(got.hidden_size)>>());
    EXPECT_EQ(got.intermediate_size, want["intermediate_size"].get<std::decay_t<decltype(got.intermediate_size)>>());
    EXPECT_EQ(got.num_hidden_layers, want["num_hidden_layers"].get<std::decay_t<decltype(got.num_hidden_layers)>>());
    EXPECT_EQ(got.num_attention_heads,
              want["num_attention_heads"].get<std::decay_t<decltype(got.num_attention_heads)>>());
    EXPECT_EQ(got.num_key_value_heads,
              want["num_key_value_heads"].get<std::decay_t<decltype(got.num_key_value_heads)>>());
    EXPECT_EQ(got.head_dim, want["head_dim"].get<std::decay_t<decltype(got.head_dim)>>());
    EXPECT_EQ(got.max_position_embeddings,
              want["max_position_embeddings"].get<std::decay_t<decltype(got.max_position_embeddings)>>());
    EXPECT_EQ(got.rms_norm_eps, want["rms_norm_eps"].get<double>());
    EXPECT_EQ(got.tie_word_embeddings,
              want["tie_word_embeddings"].get<std::decay_t<decltype(got.tie_word_embeddings)>>());
    EXPECT_EQ(got.attention_bias, want["qkv_bias"].get<std::decay_t<decltype(got.attention_bias)>>());
    EXPECT_EQ(got.model_type != "qwen2" && got.attention_bias, want["o_bias"].get<bool>());
    EXPECT_EQ(got.qk_norm, want["qk_norm"].get<std::decay_t<decltype(got.qk_norm)>>());
    EXPECT_EQ(got.mlp_bias, want["mlp_bias"].get<std::decay_t<decltype(got.mlp_bias)>>());
    EXPECT_EQ(got.rope_theta, want["rope_theta"].get<double>());
    EXPECT_EQ(got.rope_scaling.type, want["rope_type"].get<std::decay_t<decltype(got.rope_scaling.type)>>());
    if (want["rope_type"] == "llama3") {
      EXPECT_EQ(got.rope_scaling.factor, want["factor"].get<double>());
      EXPECT_EQ(got.rope_scaling.low_freq_factor, want["low_freq_factor"].get<double>());
      EXPECT_EQ(got.rope_scaling.high_freq_factor, want["high_freq_factor"].get<double>());
      EXPECT_EQ(got.rope_scaling.original_max_position_embeddings,
                want["original_max_position_embeddings"]
                    .get<std::decay_t<decltype(got.rope_scaling.original_max_position_embeddings)>>());
    }
    if (want["bos_token_id"].is_null()) {
      EXPECT_FALSE(got.bos_token_id);
    } else {
      EXPECT_EQ(got.bos_token_id, want["bos_token_id"].get<int32_t>());
    }
    const auto& eos = want["eos_token_id"];
    EXPECT_EQ(got.eos_token_ids, eos.is_null()    ? std::vector<int32_t>{}
                                 : eos.is_array() ? eos.get<std::vector<int32_t>>()
                                                  : std::vector<int32_t>{eos.get<int32_t>()});
    EXPECT_EQ(got.raw, c["config"]);

    const auto inv = rope_inv_freq(got);
    const auto ref = want["inv_freq"].get<std::vector<double>>();
    ASSERT_EQ(inv.size(), ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i)
      EXPECT_LE(std::abs(inv[i] - ref[i]), 1e-6 * std::abs(ref[i])) << "inv_freq[" << i << "]";
  }
}

TEST(ModelConfig, DtypeFromEitherKey) {
  auto c = qwen3_config();
  c["torch_dtype"] = "float16";
  EXPECT_EQ(parse_model_config(c, "x").torch_dtype, "float16");
  c["dtype"] = "bfloat16";
  EXPECT_EQ(parse_model_config(c, "x").torch_dtype, "bfloat16");
}

TEST(ModelConfig, UnknownModelTypeListsTheSupportedOnes) {
  auto c = qwen3_config();
  c["model_type"] = "mistral";
  const auto msg = parse_error(c);
  EXPECT_NE(msg.find("\"model_type\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("mistral"), std::string::npos) << msg;
  EXPECT_NE(msg.find("llama, qwen2, qwen3"), std::string::npos) << msg;
  c.erase("model_type");
  EXPECT_NE(parse_error(c).find("llama, qwen2, qwen3"), std::string::npos);
}

TEST(ModelConfig, UnsupportedFeaturesNameTheField) {
  auto sliding = qwen3_config();
  sliding["use_sliding_window"] = true;
  EXPECT_NE(parse_error(sliding).find("\"use_sliding_window\""), std::string::npos);

  auto yarn = qwen3_config();
  yarn["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_NE(parse_error(yarn).find("\"rope_scaling.rope_type\" is \"yarn\""), std::string::npos);

  auto linear = qwen3_config();
  linear["rope_parameters"] = {{"type", "linear"}, {"factor", 2.0}, {"rope_theta", 1e6}};
  EXPECT_NE(parse_error(linear).find("\"rope_parameters.type\""), std::string::npos);

  auto no_factor = qwen3_config();
  no_factor["rope_parameters"] = {{"rope_type", "llama3"}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0}};
  EXPECT_NE(parse_error(no_factor).find("\"rope_parameters.factor\""), std::string::npos);

  auto gelu = qwen3_config();
  gelu["hidden_act"] = "gelu";
  EXPECT_NE(parse_error(gelu).find("\"hidden_act\""), std::string::npos);

  auto text_size = qwen3_config();
  text_size["hidden_size"] = "64";
  EXPECT_NE(parse_error(text_size).find("\"hidden_size\" must be an integer"), std::string::npos);

  auto bad_gqa = qwen3_config();
  bad_gqa["num_key_value_heads"] = 3;
  EXPECT_NE(parse_error(bad_gqa).find("\"num_key_value_heads\""), std::string::npos);
}

// A disabled sliding window, as Qwen2.5 and Qwen3 configs ship it, is fine.
TEST(ModelConfig, DisabledSlidingWindowIsAccepted) {
  auto c = qwen3_config();
  c["use_sliding_window"] = false;
  c["sliding_window"] = 32768;
  c["max_window_layers"] = 28;
  EXPECT_NO_THROW(parse_model_config(c, "x"));
}

// The rope_scaling key wins over rope_parameters, and a theta inside the dict over the top-level
// one, as in transformers' convert_rope_params_to_dict.
TEST(ModelConfig, RopeKeyPrecedence) {
  auto c = qwen3_config();
  c["rope_theta"] = 1000.0;
  c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 5000.0}};
  EXPECT_EQ(parse_model_config(c, "x").rope_theta, 5000.0);
  c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0}};
  const auto got = parse_model_config(c, "x");
  EXPECT_EQ(got.rope_scaling.type, "llama3");
  EXPECT_EQ(got.rope_theta, 1000.0);
  c.erase("rope_scaling");
  c.erase("rope_parameters");
  EXPECT_EQ(parse_model_config(c, "x").rope_theta, 1000.0);
}

// Hand-computed: llama3 scaling with factor 8, low 1, high 4, original 8192 keeps wavelengths under
// 2048 (inv_freq above 2*pi/2048), divides those over 8192 by 8, and interpolates between.
TEST(ModelConfig, Llama3ScalingBands) {
  nlohmann::json c = {{"model_type", "llama"},
                      {"hidden_size", 512},
                      {"num_attention_heads", 4},
                      {"rope_theta", 500000.0},
                      {"rope_scaling",
                       {{"rope_type", "llama3"},
                        {"factor", 8.0},
                        {"low_freq_factor", 1.0},
                        {"high_freq_factor", 4.0},
                        {"original_max_position_embeddings", 8192}}}};
  const auto scaled = rope_inv_freq(parse_model_config(c, "x"));
  c.erase("rope_scaling");
  const auto plain = rope_inv_freq(parse_model_config(c, "x"));
  ASSERT_EQ(scaled.size(), 64u);
  int kept = 0, divided = 0, between = 0;
  for (std::size_t i = 0; i < 64; ++i) {
    const double wavelen = 2 * M_PI / plain[i];
    if (wavelen < 2048) {
      EXPECT_EQ(scaled[i], plain[i]);
      ++kept;
    } else if (wavelen > 8192) {
      EXPECT_FLOAT_EQ(scaled[i], plain[i] / 8);
      ++divided;
    } else {
      const double smooth = (8192 / wavelen - 1) / 3;
      EXPECT_NEAR(scaled[i], (1 - smooth) * plain[i] / 8 + smooth * plain[i], 1e-6 * plain[i]);
      ++between;
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(between, 0);
}

// transformers' own save_pretrained output (the sharded fixture): the rope_parameters layout.
TEST(ModelConfig, LoadsATransformersSave) {
  const auto c = load_model_config(kFixtures / "sharded");
  EXPECT_EQ(c.model_type, "llama");
  EXPECT_EQ(c.hidden_size, 8);
  EXPECT_EQ(c.head_dim, 4);
  EXPECT_EQ(c.num_key_value_heads, 1);
  EXPECT_EQ(c.rope_theta, 10000.0);
  EXPECT_EQ(c.torch_dtype, "float32");
  EXPECT_EQ(c.bos_token_id, 1);
  EXPECT_EQ(c.eos_token_ids, std::vector<int32_t>{2});
  EXPECT_EQ(c.raw["transformers_version"], "5.23.0");
}

TEST(ModelConfig, GenerationConfigAddsStopTokens) {
  const vinci::test::TempDir tmp("cfg");
  auto config = qwen3_config();
  config["eos_token_id"] = 151645;
  vinci::core::write_file_atomic(tmp.path() / "config.json", config.dump());
  vinci::core::write_file_atomic(tmp.path() / "generation_config.json",
                                 R"({"bos_token_id": 151643, "eos_token_id": [151645, 151643]})");
  auto c = load_model_config(tmp.path());
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{151645, 151643}));
  EXPECT_EQ(c.bos_token_id, 151643);

  // Llama's default eos (2) yields to the generation config's when config.json names none.
  nlohmann::json llama = {{"model_type", "llama"}, {"hidden_size", 64}, {"num_attention_heads", 4}};
  vinci::core::write_file_atomic(tmp.path() / "config.json", llama.dump());
  vinci::core::write_file_atomic(tmp.path() / "generation_config.json", R"({"eos_token_id": 128001})");
  c = load_model_config(tmp.path());
  EXPECT_EQ(c.eos_token_ids, std::vector<int32_t>{128001});
  EXPECT_EQ(c.bos_token_id, 1);

  vinci::core::write_file_atomic(tmp.path() / "generation_config.json", "{}");
  EXPECT_EQ(load_model_config(tmp.path()).eos_token_ids, std::vector<int32_t>{2});

  vinci::core::write_file_atomic(tmp.path() / "generation_config.json", R"({"eos_token_id": "x"})");
  EXPECT_THROW(load_model_config(tmp.path()), std::runtime_error);
  EXPECT_THROW(load_model_config(tmp.path() / "absent"), std::runtime_error);
}
TEST(ModelConfig, TrainingFlopsAsWorkedOutByHand) {
  ModelConfig c;
  c.hidden_size = 64;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 16;
  c.intermediate_size = 128;
  c.num_hidden_layers = 2;
  c.vocab_size = 1000;
  // per layer: q|k|v 64 x (4 + 2 x 2) x 16 = 8192, o 4 x 16 x 64 = 4096, gate|up|down 3 x 64 x 128 = 24576
  // per token: 6 x 2 x 36864 + attention 6 x 2 x 64 x 10 (context 10); per projected token: 6 x 64 x 1000
  const auto [per_token, per_projected] = training_flops(c, 10);
  EXPECT_DOUBLE_EQ(per_token, 6.0 * 2 * 36864 + 6.0 * 2 * 64 * 10);
  EXPECT_DOUBLE_EQ(per_projected, 6.0 * 64 * 1000);
}

}  // namespace model_config_test
