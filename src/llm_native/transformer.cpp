#include "llm_native/transformer.h"

#include <cmath>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include "llm/safetensors.h"
#include "llm_native/decode_kernels.h"

namespace vinci::llm {
namespace {

at::ScalarType scalar_type_of(DType dtype, const std::string& tensor, const std::filesystem::path& dir) {
  switch (dtype) {
    case DType::f32: return at::kFloat;
    case DType::f16: return at::kHalf;
    case DType::bf16: return at::kBFloat16;
    case DType::f64: return at::kDouble;
    default:
      throw std::runtime_error(fmt::format("{}: tensor '{}' has dtype {}; model weights must be F32, F16, BF16 or F64",
                                           dir.string(), tensor, dtype_name(dtype)));
  }
}

// Copies a file's tensor into dst (a parameter or a slice of a fused one), converting dtype and
// device; the mapped file is never aliased, so the model outlives the checkpoint.
void copy_from(at::Tensor dst, const TensorView& view, const std::filesystem::path& source) {
  if (!std::equal(view.shape.begin(), view.shape.end(), dst.sizes().begin(), dst.sizes().end()))
    throw std::runtime_error(fmt::format("{}: tensor '{}' has shape [{}], but config.json implies [{}]",
                                         source.string(), view.name, fmt::join(view.shape, ", "),
                                         fmt::join(dst.sizes(), ", ")));
  auto tensor = at::from_blob(const_cast<std::byte*>(view.data), view.shape,
                              at::TensorOptions().dtype(scalar_type_of(view.dtype, view.name, source)));
  dst.copy_(tensor);
}

bool qkv_has_bias(const ModelConfig& config) { return config.model_type == "qwen2" || config.attention_bias; }
bool o_has_bias(const ModelConfig& config) { return config.model_type != "qwen2" && config.attention_bias; }

std::string module_name(const std::string& part) { return part.substr(part.rfind('.') + 1); }

template <typename Fn>
void for_each_linear(std::vector<DecoderLayer>& layers, Fn&& fn) {
  for (size_t i = 0; i < layers.size(); ++i)
    for (Linear* linear : {&layers[i].qkv, &layers[i].o, &layers[i].gate_up, &layers[i].down}) fn(i, *linear);
}

}  // namespace

Linear Transformer::build_linear(std::vector<std::pair<std::string, int64_t>> parts, int64_t in, bool bias) const {
  Linear linear;
  int64_t out = 0;
  for (auto& [name, rows] : parts) {
    linear.parts.push_back({name, rows, {}, {}});
    out += rows;
  }
  auto options = at::TensorOptions().dtype(options_.dtype).device(options_.device);
  linear.weight = at::empty({out, in}, options);
  if (bias) linear.bias = at::empty({out}, options);
  return linear;
}

Transformer::Transformer(const ModelConfig& config, const TransformerOptions& options)
    : config_(config), options_(options) {
  const auto& c = config_;
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    throw std::runtime_error(
        fmt::format("config.json: num_attention_heads {} is not a multiple of num_key_value_heads {}",
                    c.num_attention_heads, c.num_key_value_heads));
  auto tensor_options = at::TensorOptions().dtype(options_.dtype).device(options_.device);
  embed_tokens_ = at::empty({c.vocab_size, c.hidden_size}, tensor_options);
  final_norm_ = at::empty({c.hidden_size}, tensor_options);
  lm_head_ = c.tie_word_embeddings ? embed_tokens_ : at::empty({c.vocab_size, c.hidden_size}, tensor_options);
  const int64_t q_rows = c.num_attention_heads * c.head_dim, kv_rows = c.num_key_value_heads * c.head_dim;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    DecoderLayer layer;
    layer.input_norm = at::empty({c.hidden_size}, tensor_options);
    layer.post_attention_norm = at::empty({c.hidden_size}, tensor_options);
    if (c.qk_norm) {
      layer.q_norm = at::empty({c.head_dim}, tensor_options);
      layer.k_norm = at::empty({c.head_dim}, tensor_options);
    }
    layer.qkv =
        build_linear({{"self_attn.q_proj", q_rows}, {"self_attn.k_proj", kv_rows}, {"self_attn.v_proj", kv_rows}},
                     c.hidden_size, qkv_has_bias(c));
    layer.o = build_linear({{"self_attn.o_proj", c.hidden_size}}, q_rows, o_has_bias(c));
    layer.gate_up = build_linear({{"mlp.gate_proj", c.intermediate_size}, {"mlp.up_proj", c.intermediate_size}},
                                 c.hidden_size, c.mlp_bias);
    layer.down = build_linear({{"mlp.down_proj", c.hidden_size}}, c.intermediate_size, c.mlp_bias);
    layers_.push_back(std::move(layer));
  }
  auto inv_freq = rope_inv_freq(c);
  inv_freq_ = at::tensor(inv_freq, at::kFloat).to(options_.device);
}

Transformer Transformer::load(const ModelConfig& config, const Checkpoint& checkpoint,
                              const TransformerOptions& options) {
  Transformer model(config, options);
  model.load_weights(checkpoint);
  return model;
}

Transformer Transformer::random(const ModelConfig& config, const TransformerOptions& options, uint64_t seed) {
  Transformer model(config, options);
  c10::NoGradGuard no_grad;
  at::manual_seed(seed);
  for (auto& [name, weight] : model.named_weights()) {
    if (name.ends_with("norm.weight"))
      weight.fill_(1.0);
    else
      weight.normal_(0.0, 0.02);
  }
  return model;
}

std::vector<std::pair<std::string, at::Tensor>> Transformer::named_weights() const {
  std::vector<std::pair<std::string, at::Tensor>> out;
  out.emplace_back("model.embed_tokens.weight", embed_tokens_);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const auto& layer = layers_[i];
    const std::string prefix = fmt::format("model.layers.{}.", i);
    out.emplace_back(prefix + "input_layernorm.weight", layer.input_norm);
    out.emplace_back(prefix + "post_attention_layernorm.weight", layer.post_attention_norm);
    if (config_.qk_norm) {
      out.emplace_back(prefix + "self_attn.q_norm.weight", layer.q_norm);
      out.emplace_back(prefix + "self_attn.k_norm.weight", layer.k_norm);
    }
    for (const Linear* linear : {&layer.qkv, &layer.o, &layer.gate_up, &layer.down}) {
      int64_t offset = 0;
      for (const auto& part : linear->parts) {
        out.emplace_back(prefix + part.name + ".weight", linear->weight.narrow(0, offset, part.rows));
        if (linear->bias.defined())
          out.emplace_back(prefix + part.name + ".bias", linear->bias.narrow(0, offset, part.rows));
        offset += part.rows;
      }
    }
  }
  out.emplace_back("model.norm.weight", final_norm_);
  if (!config_.tie_word_embeddings) out.emplace_back("lm_head.weight", lm_head_);
  return out;
}

std::vector<std::pair<std::string, at::Tensor>> Transformer::named_adapters() const {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const auto& layer = layers_[i];
    for (const Linear* linear : {&layer.qkv, &layer.o, &layer.gate_up, &layer.down})
      for (const auto& part : linear->parts) {
        if (!part.lora_a.defined()) continue;
        const std::string prefix = fmt::format("base_model.model.model.layers.{}.{}.", i, part.name);
        out.emplace_back(prefix + "lora_A.weight", part.lora_a);
        out.emplace_back(prefix + "lora_B.weight", part.lora_b);
      }
  }
  return out;
}

void Transformer::load_weights(const Checkpoint& checkpoint) {
  c10::NoGradGuard no_grad;
  for (auto& [name, weight] : named_weights()) copy_from(weight, checkpoint.get(name), checkpoint.dir());
}

void Transformer::load_adapters(const SafetensorsFile& adapters) {
  c10::NoGradGuard no_grad;
  auto named = named_adapters();
  if (named.empty())
    throw std::runtime_error(fmt::format("{}: holds LoRA adapters, but this model was not opened for LoRA training",
                                         adapters.path().string()));
  for (auto& [name, tensor] : named) {
    const TensorView* view = adapters.find(name);
    if (!view)
      throw std::runtime_error(
          fmt::format("{}: no tensor '{}'; the adapter was saved for other target modules or "
                      "another rank",
                      adapters.path().string(), name));
    copy_from(tensor, *view, adapters.path());
  }
}

void Transformer::enable_training(const Training& training, uint64_t seed) {
  training_ = training;
  const bool master = training.fp32_master && (options_.dtype == at::kBFloat16 || options_.dtype == at::kHalf);
  const auto param_dtype = master ? at::kFloat : options_.dtype;
  if (training.mode == Training::Mode::full) {
    auto promote = [&](at::Tensor& t) {
      if (!t.defined()) return;
      t = t.detach().to(param_dtype).requires_grad_(true);
    };
    promote(embed_tokens_);
    promote(final_norm_);
    if (config_.tie_word_embeddings)
      lm_head_ = embed_tokens_;
    else
      promote(lm_head_);
    for (auto& layer : layers_) {
      for (at::Tensor* t : {&layer.input_norm, &layer.post_attention_norm, &layer.q_norm, &layer.k_norm}) promote(*t);
      for (Linear* linear : {&layer.qkv, &layer.o, &layer.gate_up, &layer.down}) {
        promote(linear->weight);
        promote(linear->bias);
      }
    }
  } else if (training.mode == Training::Mode::lora) {
    const auto& targets = training.lora.target_modules;
    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    int matched = 0;
    for_each_linear(layers_, [&](size_t, Linear& linear) {
      for (auto& part : linear.parts) {
        if (std::find(targets.begin(), targets.end(), module_name(part.name)) == targets.end()) continue;
        const int64_t in = linear.weight.size(1);
        // PEFT's default: A ~ kaiming-uniform (bound 1/sqrt(in)), B = 0.
        const double bound = 1.0 / std::sqrt(static_cast<double>(in));
        part.lora_a = at::empty({training.lora.rank, in}, at::kFloat)
                          .uniform_(-bound, bound, generator)
                          .to(at::TensorOptions().dtype(param_dtype).device(options_.device))
                          .requires_grad_(true);
        part.lora_b =
            at::zeros({part.rows, training.lora.rank}, at::TensorOptions().dtype(param_dtype).device(options_.device))
                .requires_grad_(true);
        ++matched;
      }
    });
    if (matched == 0)
      throw std::runtime_error(
          fmt::format("LoRA target_modules [{}] match no layer; the layers are q_proj, k_proj, "
                      "v_proj, o_proj, gate_proj, up_proj, down_proj",
                      fmt::join(targets, ", ")));
  }
}

std::vector<at::Tensor> Transformer::trainable_parameters() const {
  std::vector<at::Tensor> out;
  if (training_.mode == Training::Mode::lora) {
    for (auto& [name, t] : named_adapters()) out.push_back(t);
    return out;
  }
  if (training_.mode == Training::Mode::none) return out;
  out.push_back(embed_tokens_);
  out.push_back(final_norm_);
  if (!config_.tie_word_embeddings) out.push_back(lm_head_);
  for (const auto& layer : layers_) {
    for (const at::Tensor* t : {&layer.input_norm, &layer.post_attention_norm, &layer.q_norm, &layer.k_norm})
      if (t->defined()) out.push_back(*t);
    for (const Linear* linear : {&layer.qkv, &layer.o, &layer.gate_up, &layer.down}) {
      out.push_back(linear->weight);
      if (linear->bias.defined()) out.push_back(linear->bias);
    }
  }
  return out;
}

PagedKvCache::Shape Transformer::cache_shape() const {
  return {static_cast<int64_t>(layers_.size()), config_.num_key_value_heads, config_.head_dim, options_.dtype,
          options_.device};
}

at::Tensor Transformer::compute(const at::Tensor& weight) const {
  return weight.scalar_type() == options_.dtype ? weight : weight.to(options_.dtype);
}

at::Tensor Transformer::lora_delta(const Linear::Part& part, const at::Tensor& x) const {
  return at::linear(at::linear(x, compute(part.lora_a)), compute(part.lora_b)) *
         (training_.lora.alpha / training_.lora.rank);
}

at::Tensor Transformer::project(const Linear& linear, const at::Tensor& x) const {
  auto y = at::linear(x, compute(linear.weight), linear.bias.defined() ? compute(linear.bias) : at::Tensor());
  int64_t offset = 0;
  for (const auto& part : linear.parts) {
    if (part.lora_a.defined()) y.narrow(-1, offset, part.rows).add_(lora_delta(part, x));
    offset += part.rows;
  }
  return y;
}

std::vector<at::Tensor> Transformer::project_parts(const Linear& linear, const at::Tensor& x) const {
  const auto weight = compute(linear.weight);
  const auto bias = linear.bias.defined() ? compute(linear.bias) : at::Tensor();
  std::vector<at::Tensor> out;
  int64_t offset = 0;
  for (const auto& part : linear.parts) {
    auto y = at::linear(x, weight.narrow(0, offset, part.rows),
                        bias.defined() ? bias.narrow(0, offset, part.rows) : at::Tensor());
    if (part.lora_a.defined()) y = y + lora_delta(part, x);
    out.push_back(std::move(y));
    offset += part.rows;
  }
  return out;
}

at::Tensor Transformer::norm(const at::Tensor& x, const at::Tensor& weight) const {
  // One fused kernel where transformers launches eight: a decode step is bound by launches. It
  // computes in fp32 (fp64 for a float64 model) like transformers, and rounds once at the end.
  return at::rms_norm(x, {x.size(-1)}, compute(weight), config_.rms_norm_eps);
}

std::pair<at::Tensor, at::Tensor> Transformer::rope_tables(const at::Tensor& positions) const {
  auto freqs = positions.to(at::kFloat).unsqueeze(-1) * inv_freq_;  // [B, T, head_dim/2]
  auto cos = freqs.cos(), sin = freqs.sin();
  // rotate_half(x) * sin == roll(x, half) * [-sin, sin]: the sign goes into the table, so the
  // rotation costs a roll and a fused multiply-add instead of a negation, a concat and three ops.
  return {at::cat({cos, cos}, -1).to(options_.dtype).unsqueeze(1),
          at::cat({-sin, sin}, -1).to(options_.dtype).unsqueeze(1)};
}

at::Tensor Transformer::attention(const DecoderLayer& layer, int64_t index, const at::Tensor& x, const at::Tensor& cos,
                                  const at::Tensor& sin, const at::Tensor& positions, const AttentionSpec& spec,
                                  PagedKvCache* cache) const {
  const int64_t batch = x.size(0), length = x.size(1);
  const int64_t heads = config_.num_attention_heads, kv_heads = config_.num_key_value_heads, dim = config_.head_dim;
  // split, not three narrows: its backward is one concatenation, where the narrows' would each
  // zero-fill a full-size gradient to copy into and add.
  const auto parts = project(layer.qkv, x).split_with_sizes({(heads + kv_heads) * dim, kv_heads * dim}, -1);
  auto v = parts[1].view({batch, length, kv_heads, dim}).transpose(1, 2);
  // RoPE on q and k together, one pass over the heads of both: three kernels where two passes
  // took six (a decode step is bound by how many kernels it runs, not by their size).
  auto qk = parts[0].view({batch, length, heads + kv_heads, dim});
  if (config_.qk_norm) {
    const auto normed = qk.split_with_sizes({heads, kv_heads}, 2);
    qk = at::cat({norm(normed[0], layer.q_norm), norm(normed[1], layer.k_norm)}, 2);
  }
  qk = qk.transpose(1, 2);
  const int64_t half = dim / 2;
  qk = at::addcmul(qk * cos, qk.roll(half, -1), sin);
  const auto rotated = qk.split_with_sizes({heads, kv_heads}, 1);
  auto q = rotated[0], k = rotated[1];
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));

  at::Tensor out;
  if (cache) {
    cache->keys(index).index_copy_(0, spec.write_slots, k.transpose(1, 2).reshape({batch * length, kv_heads, dim}));
    cache->values(index).index_copy_(0, spec.write_slots, v.transpose(1, 2).reshape({batch * length, kv_heads, dim}));
  }
  if (spec.kind == AttentionSpec::Kind::kDecode) {
    if (!cache) throw std::logic_error("decode attention needs a KV cache");
    // Each row's new tokens at their own positions (one per row in a decode step, the next chunk of
    // a prompt in a chunked prefill), written above; they attend to the row's positions 0..position,
    // gathered block by block (whole blocks are contiguous) and read in place by the fused
    // attention, which takes strided keys where a matmul would first copy them.
    const int64_t block = cache->block_tokens(), blocks = spec.kv_length / block;
    const auto gathered = [&](const at::Tensor& pool) {
      return pool.view({-1, block, kv_heads, dim})
          .index_select(0, spec.read_blocks)
          .view({batch, blocks * block, kv_heads, dim})
          .transpose(1, 2);
    };
    out = at::scaled_dot_product_attention(q, gathered(cache->keys(index)), gathered(cache->values(index)),
                                           spec.visible_keys, 0.0, false, scale, /*enable_gqa=*/true);
  } else {
    if (spec.kind == AttentionSpec::Kind::kCausal) {
      out = at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true, scale, /*enable_gqa=*/true);
    } else {
      // Each packed sequence attends within itself, one causal call per sequence: Σ length² work,
      // where one masked call over the row does row² (4x for four equal sequences) and its dense
      // [B, T, T] mask cannot skip a block (2.2 s of a 6k-token CPU SFT step, 0.5 s so).
      // Padding gets zeros: no sequence reads it as a key, and nothing reads its output.
      const auto* span = spec.spans.data_ptr<int64_t>();
      const int64_t count = spec.spans.size(0);
      std::vector<at::Tensor> rows;
      for (int64_t i = 0, row = 0; row < batch; ++row) {
        std::vector<at::Tensor> pieces;
        int64_t covered = 0;
        for (; i < count && span[3 * i] == row; ++i) {
          const int64_t start = span[3 * i + 1], n = span[3 * i + 2];
          const auto window = [&](const at::Tensor& t) { return t.select(0, row).narrow(1, start, n).unsqueeze(0); };
          pieces.push_back(
              at::scaled_dot_product_attention(window(q), window(k), window(v), {}, 0.0, true, scale, true)[0]);
          covered = start + n;
        }
        if (covered < length) pieces.push_back(at::zeros({heads, length - covered, dim}, q.options()));
        rows.push_back(pieces.size() == 1 ? pieces[0] : at::cat(pieces, 1));
      }
      out = at::stack(rows);
    }
  }
  out = out.transpose(1, 2).reshape({batch, length, heads * dim});
  return project(layer.o, out);
}

namespace {

// silu(gate) * up, with a backward of three elementwise kernels: grad x silu(gate) for up, and
// silu's backward of grad x up for gate (autograd's own adds the product's and silu's nodes'
// bookkeeping, and keeps the same tensors).
struct SwiGlu : torch::autograd::Function<SwiGlu> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& gate, const at::Tensor& up) {
    auto activated = at::silu(gate);
    ctx->save_for_backward({gate, up, activated});
    return activated * up;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& grad = grad_out[0];
    return {at::silu_backward(grad * saved[1], saved[0]), grad * saved[2]};
  }
};

}  // namespace

// Gradient checkpointing of one decoder layer. forward runs the layer without a graph and keeps
// only its input; backward runs it again with a graph and differentiates that. The layer's
// trainable parameters are inputs of the function, so their gradients come back through the
// autograd graph (backward() and autograd::grad alike) and a frozen input still yields them, as
// with LoRA over frozen embeddings. The model must outlive the backward pass.
struct CheckpointedLayer : torch::autograd::Function<CheckpointedLayer> {
  using Ctx = torch::autograd::AutogradContext;

  static at::Tensor forward(Ctx* ctx, const at::Tensor& x, at::TensorList parameters, const Transformer* model,
                            int64_t index, const at::Tensor& cos, const at::Tensor& sin, const at::Tensor& positions,
                            const AttentionSpec& spec) {
    ctx->save_for_backward({x, cos, sin, positions});
    ctx->saved_data["model"] = reinterpret_cast<int64_t>(model);
    ctx->saved_data["index"] = index;
    ctx->saved_data["kind"] = static_cast<int64_t>(spec.kind);
    ctx->saved_data["spans"] = spec.spans;
    ctx->saved_data["parameters"] = static_cast<int64_t>(parameters.size());
    return model->layer_forward(static_cast<size_t>(index), x, cos, sin, positions, spec, nullptr);
  }

  static torch::autograd::variable_list backward(Ctx* ctx, torch::autograd::variable_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const auto* model = reinterpret_cast<const Transformer*>(ctx->saved_data["model"].toInt());
    const auto index = static_cast<size_t>(ctx->saved_data["index"].toInt());
    AttentionSpec spec;
    spec.kind = static_cast<AttentionSpec::Kind>(ctx->saved_data["kind"].toInt());
    spec.spans = ctx->saved_data["spans"].toTensor();
    const bool x_needs_grad = ctx->needs_input_grad(0);
    at::Tensor x = saved[0].detach().requires_grad_(x_needs_grad);
    std::vector<at::Tensor> inputs = model->layer_parameters(index);
    if (static_cast<int64_t>(inputs.size()) != ctx->saved_data["parameters"].toInt())
      throw std::logic_error("checkpointed layer: the trainable parameters changed between forward and backward");
    if (x_needs_grad) inputs.insert(inputs.begin(), x);
    at::Tensor y;
    {
      at::AutoGradMode enable(true);
      y = model->layer_forward(index, x, saved[1], saved[2], saved[3], spec, nullptr);
    }
    auto grads = torch::autograd::grad({y}, inputs, {grad_out[0]}, /*retain_graph=*/false, /*create_graph=*/false,
                                       /*allow_unused=*/true);
    // One gradient per forward argument: x, each parameter, then none for the rest.
    torch::autograd::variable_list out;
    out.push_back(x_needs_grad ? grads[0] : at::Tensor());
    out.insert(out.end(), grads.begin() + (x_needs_grad ? 1 : 0), grads.end());
    out.resize(out.size() + 6);
    return out;
  }
};

std::vector<at::Tensor> Transformer::layer_parameters(size_t index) const {
  const auto& layer = layers_[index];
  std::vector<at::Tensor> out;
  auto add = [&](const at::Tensor& t) {
    if (t.defined() && t.requires_grad()) out.push_back(t);
  };
  for (const at::Tensor* t : {&layer.input_norm, &layer.post_attention_norm, &layer.q_norm, &layer.k_norm}) add(*t);
  for (const Linear* linear : {&layer.qkv, &layer.o, &layer.gate_up, &layer.down}) {
    add(linear->weight);
    add(linear->bias);
    for (const auto& part : linear->parts) {
      add(part.lora_a);
      add(part.lora_b);
    }
  }
  return out;
}

at::Tensor Transformer::layer_forward(size_t index, const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                                      const at::Tensor& positions, const AttentionSpec& spec,
                                      PagedKvCache* cache) const {
  const auto& layer = layers_[index];
  auto h =
      x + attention(layer, static_cast<int64_t>(index), norm(x, layer.input_norm), cos, sin, positions, spec, cache);
  const auto normed = norm(h, layer.post_attention_norm);
  at::Tensor mlp;
  if (at::GradMode::is_enabled()) {
    // Training: gate and up from a GEMM each, so both are contiguous and every elementwise kernel
    // of the activation and its backward runs vectorized; slices of one fused output would not
    // be, and their backward would zero-fill, copy and add two gradients of the fused size.
    const auto parts = project_parts(layer.gate_up, normed);
    mlp = SwiGlu::apply(parts[0], parts[1]);
  } else {
    // Generation: one GEMM; a decode step is bound by launches, not by these small tensors.
    const auto gate_up = project(layer.gate_up, normed);
    const int64_t half = gate_up.size(-1) / 2;
    mlp = at::silu(gate_up.narrow(-1, 0, half)) * gate_up.narrow(-1, half, half);
  }
  return h + project(layer.down, mlp);
}

at::Tensor Transformer::hidden(const at::Tensor& ids, const at::Tensor& positions, const AttentionSpec& given,
                               PagedKvCache* cache) const {
  AttentionSpec spec = given;
  if (cache) {  // slots from the block table, once for every layer, on the device
    const int64_t block = cache->block_tokens();
    spec.write_slots =
        (spec.block_table.gather(1, at::floor_divide(positions, block)) * block + positions.remainder(block)).view(-1);
    if (spec.kind == AttentionSpec::Kind::kDecode) {
      const int64_t blocks = (spec.kv_length + block - 1) / block;
      spec.kv_length = blocks * block;  // whole blocks are read; the mask hides what is past a row
      spec.read_blocks = spec.block_table.narrow(1, 0, blocks).reshape(-1);
    }
  }
  if (const DecodeKernels* kernels = decode_kernels_for(ids, spec, cache))
    return fused_decode(*kernels, ids, positions, spec, *cache);
  if (spec.kind == AttentionSpec::Kind::kDecode) {  // the same for every layer: built once
    const auto slots = at::arange(spec.kv_length, positions.options()).view({1, 1, spec.kv_length});
    spec.visible_keys = (slots <= positions.unsqueeze(2)).unsqueeze(1);  // [B, 1, T, kv_length]
  }
  auto x = at::embedding(compute(embed_tokens_), ids);
  auto [cos, sin] = rope_tables(positions);
  const bool checkpoint = training_.gradient_checkpointing && !cache && at::GradMode::is_enabled();
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (!checkpoint) {
      x = layer_forward(i, x, cos, sin, positions, spec, cache);
      continue;
    }
    // As a TensorList, autograd counts each parameter as an input of its own.
    const std::vector<at::Tensor> parameters = layer_parameters(i);
    x = CheckpointedLayer::apply(x, at::TensorList(parameters), this, static_cast<int64_t>(i), cos, sin, positions,
                                 spec);
  }
  return norm(x, final_norm_);
}

const DecodeKernels* Transformer::decode_kernels_for(const at::Tensor& ids, const AttentionSpec& spec,
                                                     const PagedKvCache* cache) const {
  if (!cache || spec.kind != AttentionSpec::Kind::kDecode || ids.size(1) != 1 || options_.dtype != at::kBFloat16 ||
      config_.qk_norm || at::GradMode::is_enabled() ||
      !DecodeKernels::fits(config_.hidden_size, config_.intermediate_size, config_.head_dim))
    return nullptr;
  return DecodeKernels::get(options_.device);
}

// hidden() for one token a row, with what the ATen path spends 24 kernels a layer on in 10: the
// residual add goes into the next RMSNorm, so the stream carries (residual, its norm) between them.
at::Tensor Transformer::fused_decode(const DecodeKernels& kernels, const at::Tensor& ids, const at::Tensor& positions,
                                     const AttentionSpec& spec, PagedKvCache& cache) const {
  const int64_t batch = ids.size(0), hidden_size = config_.hidden_size;
  const auto row_positions = positions.reshape({batch}).contiguous();
  auto residual = at::embedding(compute(embed_tokens_), ids).view({batch, hidden_size}).contiguous();
  auto normed = norm(residual, layers_.front().input_norm);
  const double scale = 1.0 / std::sqrt(static_cast<double>(config_.head_dim));
  for (size_t i = 0; i < layers_.size(); ++i) {
    const auto& layer = layers_[i];
    auto& keys = cache.keys(i);
    auto& values = cache.values(i);
    const auto q =
        kernels.rope_write_kv(project(layer.qkv, normed).contiguous(), row_positions, inv_freq_, spec.write_slots, keys,
                              values, config_.num_attention_heads, config_.num_key_value_heads);
    const auto attended = kernels.attention(q, keys, values, spec.block_table, row_positions, cache.block_tokens(),
                                            spec.kv_length, scale);
    normed = kernels.add_rms_norm(residual, project(layer.o, attended).contiguous(),
                                  compute(layer.post_attention_norm).contiguous(), config_.rms_norm_eps);
    const auto activated = kernels.silu_mul(project(layer.gate_up, normed).contiguous());
    const auto& next_norm = i + 1 < layers_.size() ? layers_[i + 1].input_norm : final_norm_;
    normed = kernels.add_rms_norm(residual, project(layer.down, activated).contiguous(),
                                  compute(next_norm).contiguous(), config_.rms_norm_eps);
  }
  return normed.view({batch, 1, hidden_size});
}

at::Tensor Transformer::logits(const at::Tensor& hidden) const {
  // float32 at least: sampling and logprobs need it; a float64 model (gradient checks) keeps its own.
  return at::linear(hidden, compute(lm_head_)).to(at::promote_types(options_.dtype, at::kFloat));
}

}  // namespace vinci::llm
