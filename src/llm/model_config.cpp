#include "llm/model_config.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

#include "core/files.h"

namespace vinci::llm {

namespace {

// transformers' defaults for fields a config.json leaves out (the dataclass defaults of
// Qwen2Config, Qwen3Config and LlamaConfig). kv_heads 0 means "as many as the query heads";
// head_dim 0 means hidden_size / num_attention_heads.
struct FamilyDefaults {
  std::string_view model_type;
  int64_t vocab_size, hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
      head_dim, max_position_embeddings;
  std::optional<int32_t> bos_token_id, eos_token_id;
};

constexpr FamilyDefaults kFamilies[] = {
    {"llama", 32000, 4096, 11008, 32, 32, 0, 0, 2048, 1, 2},
    {"qwen2", 151936, 4096, 22016, 32, 32, 32, 0, 32768, std::nullopt, std::nullopt},
    {"qwen3", 151936, 4096, 22016, 32, 32, 32, 128, 32768, std::nullopt, std::nullopt},
};

constexpr std::string_view kSupported = "llama, qwen2, qwen3";

const FamilyDefaults* find_family(const std::string& model_type) {
  for (const auto& f : kFamilies)
    if (f.model_type == model_type) return &f;
  return nullptr;
}

[[noreturn]] void fail(const std::string& source, const std::string& field, const std::string& message) {
  throw std::runtime_error(fmt::format("{}: \"{}\" {}", source, field, message));
}

// A present non-null value, or nullptr; null means "use the default" in transformers' configs.
const nlohmann::json* field(const nlohmann::json& j, const std::string& key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

int64_t get_int(const nlohmann::json& j, const std::string& key, int64_t fallback, const std::string& source,
                const std::string& prefix = "") {
  const auto* v = field(j, key);
  if (!v) return fallback;
  if (!v->is_number_integer()) fail(source, prefix + key, fmt::format("must be an integer, got {}", v->dump()));
  return v->get<int64_t>();
}

double get_number(const nlohmann::json& j, const std::string& key, double fallback, const std::string& source,
                  const std::string& prefix = "") {
  const auto* v = field(j, key);
  if (!v) return fallback;
  if (!v->is_number()) fail(source, prefix + key, fmt::format("must be a number, got {}", v->dump()));
  return v->get<double>();
}

bool get_bool(const nlohmann::json& j, const std::string& key, bool fallback, const std::string& source) {
  const auto* v = field(j, key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(source, key, fmt::format("must be true or false, got {}", v->dump()));
  return v->get<bool>();
}

std::string get_string(const nlohmann::json& j, const std::string& key, const std::string& fallback,
                       const std::string& source, const std::string& prefix = "") {
  const auto* v = field(j, key);
  if (!v) return fallback;
  if (!v->is_string()) fail(source, prefix + key, fmt::format("must be a string, got {}", v->dump()));
  return v->get<std::string>();
}

int32_t token_id(const nlohmann::json& v, const std::string& source, const std::string& key) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
    fail(source, key, fmt::format("must be a token id or a list of them, got {}", v.dump()));
  return static_cast<int32_t>(v.get<int64_t>());
}

std::vector<int32_t> token_ids(const nlohmann::json& j, const std::string& key, const std::string& source) {
  const auto* v = field(j, key);
  if (!v) return {};
  if (!v->is_array()) return {token_id(*v, source, key)};
  std::vector<int32_t> ids;
  for (const auto& e : *v) ids.push_back(token_id(e, source, key));
  return ids;
}

// transformers reads rope_scaling (older files) in preference to rope_parameters (transformers 5);
// rope_theta inside the dict wins over a top-level one.
void parse_rope(const nlohmann::json& j, const std::string& source, ModelConfig& c) {
  std::string where = "rope_scaling";
  const nlohmann::json* params = field(j, "rope_scaling");
  if (!params || params->empty()) {
    where = "rope_parameters";
    params = field(j, "rope_parameters");
  }
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!params || params->empty()) params = &kEmpty;
  if (!params->is_object()) fail(source, where, fmt::format("must be an object, got {}", params->dump()));
  for (const auto& [key, value] : params->items())
    if (value.is_object())
      fail(source, where + "." + key, "holds per-layer-type rope parameters, which the supported families do not use");

  const std::string prefix = where + ".";
  c.rope_theta = get_number(*params, "rope_theta", get_number(j, "rope_theta", 10000.0, source), source, prefix);
  const double partial =
      get_number(*params, "partial_rotary_factor", get_number(j, "partial_rotary_factor", 1.0, source), source, prefix);
  if (partial != 1.0) fail(source, "partial_rotary_factor", "must be 1: partial rotary embeddings are not supported");

  const std::string type_key = field(*params, "rope_type") ? "rope_type" : "type";
  c.rope_scaling.type = get_string(*params, type_key, "default", source, prefix);
  if (c.rope_scaling.type == "default") return;
  if (c.rope_scaling.type != "llama3")
    fail(source, prefix + type_key,
         fmt::format("is \"{}\", which is not supported (supported: default, llama3)", c.rope_scaling.type));
  for (const char* key : {"factor", "low_freq_factor", "high_freq_factor"})
    if (!field(*params, key)) fail(source, prefix + key, "is required for llama3 rope scaling");
  c.rope_scaling.factor = get_number(*params, "factor", 0, source, prefix);
  c.rope_scaling.low_freq_factor = get_number(*params, "low_freq_factor", 0, source, prefix);
  c.rope_scaling.high_freq_factor = get_number(*params, "high_freq_factor", 0, source, prefix);
  if (c.rope_scaling.high_freq_factor <= c.rope_scaling.low_freq_factor)
    fail(source, prefix + "high_freq_factor", "must be larger than low_freq_factor");
  // As transformers does: a top-level original_max_position_embeddings wins, then the dict's,
  // then max_position_embeddings.
  c.rope_scaling.original_max_position_embeddings =
      get_int(j, "original_max_position_embeddings",
              get_int(*params, "original_max_position_embeddings", c.max_position_embeddings, source, prefix), source);
}

void require_positive(int64_t value, const std::string& source, const std::string& key) {
  if (value <= 0) fail(source, key, fmt::format("must be positive, got {}", value));
}

void append_unique(std::vector<int32_t>& out, const std::vector<int32_t>& ids) {
  for (int32_t id : ids)
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
}

}  // namespace

ModelConfig parse_model_config(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw std::runtime_error(fmt::format("{}: the config must be a JSON object", source));
  ModelConfig c;
  c.raw = j;
  c.model_type = get_string(j, "model_type", "", source);
  const auto* family = find_family(c.model_type);
  if (!family)
    fail(source, "model_type",
         fmt::format("is \"{}\", which is not supported (supported: {})", c.model_type, kSupported));

  c.vocab_size = get_int(j, "vocab_size", family->vocab_size, source);
  c.hidden_size = get_int(j, "hidden_size", family->hidden_size, source);
  c.intermediate_size = get_int(j, "intermediate_size", family->intermediate_size, source);
  c.num_hidden_layers = get_int(j, "num_hidden_layers", family->num_hidden_layers, source);
  c.num_attention_heads = get_int(j, "num_attention_heads", family->num_attention_heads, source);
  c.max_position_embeddings = get_int(j, "max_position_embeddings", family->max_position_embeddings, source);
  for (const auto& [key, value] : {std::pair{"vocab_size", c.vocab_size},
                                   {"hidden_size", c.hidden_size},
                                   {"intermediate_size", c.intermediate_size},
                                   {"num_hidden_layers", c.num_hidden_layers},
                                   {"num_attention_heads", c.num_attention_heads},
                                   {"max_position_embeddings", c.max_position_embeddings}})
    require_positive(value, source, key);

  // An explicit null means "as many as the query heads" in every family; absent, qwen's
  // dataclass default (32) applies.
  const bool kv_absent = !j.contains("num_key_value_heads");
  c.num_key_value_heads =
      get_int(j, "num_key_value_heads",
              kv_absent && family->num_key_value_heads ? family->num_key_value_heads : c.num_attention_heads, source);
  require_positive(c.num_key_value_heads, source, "num_key_value_heads");
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    fail(source, "num_key_value_heads",
         fmt::format("({}) must divide num_attention_heads ({})", c.num_key_value_heads, c.num_attention_heads));

  const bool head_dim_absent = !j.contains("head_dim");
  const int64_t head_dim_default = head_dim_absent && family->head_dim ? family->head_dim : 0;
  c.head_dim = get_int(j, "head_dim", head_dim_default, source);
  if (c.head_dim == 0) {
    if (c.hidden_size % c.num_attention_heads != 0)
      fail(source, "hidden_size",
           fmt::format("({}) is not a multiple of num_attention_heads ({}), and head_dim is not given", c.hidden_size,
                       c.num_attention_heads));
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (c.head_dim <= 0 || c.head_dim % 2 != 0)
    fail(source, "head_dim", fmt::format("must be positive and even for rotary embeddings, got {}", c.head_dim));

  c.rms_norm_eps = get_number(j, "rms_norm_eps", 1e-6, source);
  c.tie_word_embeddings = get_bool(j, "tie_word_embeddings", false, source);
  const std::string act = get_string(j, "hidden_act", "silu", source);
  if (act != "silu") fail(source, "hidden_act", fmt::format("is \"{}\"; only \"silu\" (SwiGLU) is supported", act));
  if (get_bool(j, "use_sliding_window", false, source))
    fail(source, "use_sliding_window", "is true; sliding-window attention is not supported");

  if (c.model_type == "qwen2") {
    c.attention_bias = true;
  } else {
    c.attention_bias = get_bool(j, "attention_bias", false, source);
  }
  c.qk_norm = c.model_type == "qwen3";
  if (c.model_type == "llama") c.mlp_bias = get_bool(j, "mlp_bias", false, source);

  parse_rope(j, source, c);

  c.torch_dtype = field(j, "dtype") && j["dtype"].is_string()               ? j["dtype"].get<std::string>()
                  : field(j, "torch_dtype") && j["torch_dtype"].is_string() ? j["torch_dtype"].get<std::string>()
                                                                            : "";
  c.eos_token_ids = token_ids(j, "eos_token_id", source);
  if (!j.contains("eos_token_id") && family->eos_token_id) c.eos_token_ids = {*family->eos_token_id};
  c.bos_token_id = j.contains("bos_token_id") ? std::nullopt : family->bos_token_id;
  if (const auto* bos = field(j, "bos_token_id")) c.bos_token_id = token_id(*bos, source, "bos_token_id");
  return c;
}

ModelConfig load_model_config(const std::filesystem::path& model_dir) {
  const auto config_path = model_dir / "config.json";
  const auto text = core::try_read_file(config_path);
  if (!text)
    throw std::runtime_error(
        fmt::format("{}: cannot read; is {} a model directory?", config_path.string(), model_dir.string()));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON ({})", config_path.string(), e.what()));
  }
  ModelConfig c = parse_model_config(j, config_path.string());

  const auto gen_path = model_dir / "generation_config.json";
  if (const auto gen_text = core::try_read_file(gen_path)) {
    nlohmann::json g;
    try {
      g = nlohmann::json::parse(*gen_text);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(fmt::format("{}: not valid JSON ({})", gen_path.string(), e.what()));
    }
    if (!g.is_object()) throw std::runtime_error(fmt::format("{}: must be a JSON object", gen_path.string()));
    // A family default (llama's eos 2) stands only where config.json names no token itself.
    const auto gen_eos = token_ids(g, "eos_token_id", gen_path.string());
    if (!gen_eos.empty() && !j.contains("eos_token_id")) c.eos_token_ids.clear();
    append_unique(c.eos_token_ids, gen_eos);
    if (const auto* bos = field(g, "bos_token_id"); bos && !field(j, "bos_token_id"))
      c.bos_token_id = token_id(*bos, gen_path.string(), "bos_token_id");
  }
  return c;
}

std::vector<float> rope_inv_freq(const ModelConfig& config) {
  // Each step rounds to float32 where transformers' torch code does, so the values match its
  // buffers to the last bit or so instead of drifting by the float32/double gap.
  const int64_t dim = config.head_dim;
  const auto base = static_cast<float>(config.rope_theta);
  std::vector<float> inv(static_cast<std::size_t>(dim / 2));
  for (int64_t i = 0; i < dim / 2; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(dim);
    // Rounding a double pow matches torch's float32 pow bit for bit far more often than powf.
    const auto power = static_cast<float>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
    inv[static_cast<std::size_t>(i)] = 1.0f / power;
  }
  if (config.rope_scaling.type != "llama3") return inv;

  const auto& s = config.rope_scaling;
  const auto factor = static_cast<float>(s.factor), low = static_cast<float>(s.low_freq_factor),
             smooth_span = static_cast<float>(s.high_freq_factor - s.low_freq_factor);
  const auto old_context = static_cast<float>(s.original_max_position_embeddings);
  const auto low_freq_wavelen =
      static_cast<float>(static_cast<double>(s.original_max_position_embeddings) / s.low_freq_factor);
  const auto high_freq_wavelen =
      static_cast<float>(static_cast<double>(s.original_max_position_embeddings) / s.high_freq_factor);
  const auto two_pi = static_cast<float>(2 * std::numbers::pi);
  // torch computes scalar / tensor as reciprocal(tensor) * scalar: two roundings, kept here.
  for (float& f : inv) {
    const float wavelen = (1.0f / f) * two_pi;
    if (wavelen > low_freq_wavelen) {
      f = f / factor;
    } else if (!(wavelen < high_freq_wavelen)) {
      const float smooth = ((1.0f / wavelen) * old_context - low) / smooth_span;
      f = (1 - smooth) * f / factor + smooth * f;
    }
  }
  return inv;
}

std::pair<double, double> training_flops(const ModelConfig& c, int64_t context) {
  const double h = static_cast<double>(c.hidden_size), head_dim = static_cast<double>(c.head_dim);
  const double per_layer = h * static_cast<double>(c.num_attention_heads + 2 * c.num_key_value_heads) * head_dim +
                           static_cast<double>(c.num_attention_heads) * head_dim * h +
                           3.0 * h * static_cast<double>(c.intermediate_size);
  const double layers = static_cast<double>(c.num_hidden_layers);
  return {6.0 * layers * per_layer + 6.0 * layers * h * static_cast<double>(context),
          6.0 * h * static_cast<double>(c.vocab_size)};
}

}  // namespace vinci::llm
