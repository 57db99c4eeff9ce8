// The transformer's attention modes against each other, on the fixture's Qwen2 shape with random
// fp32 weights: a causal forward over a whole sequence is the truth that a KV-cached decode, a
// packed row and a padded batch must each reproduce. (Agreement with transformers' own logits is
// native_backbone_test's Golden.*.)
#include "llm_native/transformer.h"

#include <filesystem>
#include <set>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "llm/model_config.h"

namespace vinci::llm {
namespace transformer_test {

namespace fs = std::filesystem;

constexpr double kTolerance = 1e-5;  // fp32, the same arithmetic in another order

Transformer fixture_model(uint64_t seed = 7) {
  const auto config = load_model_config(fs::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm/models/qwen2");
  return Transformer::random(config, TransformerOptions{}, seed);
}

at::Tensor ids_of(std::vector<int64_t> ids) { return at::tensor(ids, at::kLong).unsqueeze(0); }
at::Tensor positions_from(int64_t start, int64_t length) {
  return at::arange(start, start + length, at::kLong).unsqueeze(0);
}

// Hidden states [T, hidden] of one sequence run causally from position 0.
at::Tensor alone(const Transformer& model, const std::vector<int64_t>& ids) {
  const auto n = static_cast<int64_t>(ids.size());
  return model.hidden(ids_of(ids), positions_from(0, n), AttentionSpec{}, nullptr).squeeze(0);
}

double max_difference(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

// Blocks of 4 tokens, so that every sequence here spans several, and a pool that starts small and
// must grow.
PagedKvCache small_blocks(const Transformer& model) { return PagedKvCache(model.cache_shape(), 4, 8); }

// A spec for rows (sequence ids) whose calls reach positions below `tokens`.
AttentionSpec with_table(AttentionSpec spec, const PagedKvCache& cache, std::vector<uint64_t> rows, int64_t tokens) {
  spec.block_table = cache.block_table(rows, cache.blocks_for(tokens));
  return spec;
}
AttentionSpec decoding(int64_t kv_length) {
  AttentionSpec spec;
  spec.kind = AttentionSpec::Kind::kDecode;
  spec.kv_length = kv_length;
  return spec;
}

const std::vector<int64_t> kFirst{5, 900, 17, 42, 311, 8, 99, 1000, 3, 64, 77, 12};
const std::vector<int64_t> kSecond{600, 2, 2, 450, 31, 800, 16};

TEST(Transformer, CachedDecodeReproducesTheFullForward) {
  c10::InferenceMode guard;
  const Transformer model = fixture_model();
  const at::Tensor truth = alone(model, kFirst);
  const int64_t prompt = 5, n = static_cast<int64_t>(kFirst.size());
  PagedKvCache cache = small_blocks(model);
  const std::vector<int64_t> head(kFirst.begin(), kFirst.begin() + prompt);
  ASSERT_TRUE(cache.reserve(0, prompt));
  const at::Tensor prefill =
      model.hidden(ids_of(head), positions_from(0, prompt), with_table({}, cache, {0}, prompt), &cache).squeeze(0);
  EXPECT_LT(max_difference(prefill, truth.narrow(0, 0, prompt)), kTolerance);
  for (int64_t t = prompt; t < n; ++t) {
    ASSERT_TRUE(cache.reserve(0, t + 1));  // a new block every 4 tokens, and the pool grows past its first 8
    const at::Tensor step =
        model.hidden(ids_of({kFirst[t]}), positions_from(t, 1), with_table(decoding(t + 1), cache, {0}, t + 1), &cache)
            .view({-1});
    EXPECT_LT(max_difference(step, truth[t]), kTolerance) << "position " << t;
  }
}

// A chunked prefill: the prompt's first 3 tokens from slot 0, then chunks of 4 and 5 written at
// their positions and attending to every slot before them, in a batch whose second row is padded.
TEST(Transformer, ChunksAfterTheFirstReproduceTheFullForward) {
  c10::InferenceMode guard;
  const Transformer model = fixture_model();
  const at::Tensor truth = alone(model, kFirst), other = alone(model, kSecond);
  PagedKvCache cache = small_blocks(model);
  ASSERT_TRUE(cache.reserve(0, static_cast<int64_t>(kFirst.size())));
  ASSERT_TRUE(cache.reserve(1, static_cast<int64_t>(kSecond.size())));
  const auto chunk = [](const std::vector<int64_t>& ids, int64_t from, int64_t n, int64_t width) {
    std::vector<int64_t> out(ids.begin() + from, ids.begin() + from + n);
    out.resize(width, 0);
    return at::tensor(out, at::kLong);
  };
  model.hidden(at::stack({chunk(kFirst, 0, 3, 3), chunk(kSecond, 0, 3, 3)}), positions_from(0, 3).expand({2, 3}),
               with_table({}, cache, {0, 1}, 3), &cache);
  int64_t at_first = 3, at_second = 3;
  for (const auto& [n_first, n_second] : {std::pair<int64_t, int64_t>{4, 4}, {5, 0}}) {
    const int64_t width = std::max(n_first, n_second);
    const int64_t span = std::max(at_first, at_second) + width;
    const AttentionSpec spec = with_table(decoding(span), cache, {0, 1}, span);
    const at::Tensor positions = at::stack({positions_from(at_first, width)[0], positions_from(at_second, width)[0]});
    const at::Tensor hidden = model.hidden(
        at::stack({chunk(kFirst, at_first, n_first, width),
                   n_second > 0 ? chunk(kSecond, at_second, n_second, width) : at::zeros({width}, at::kLong)}),
        positions, spec, &cache);
    EXPECT_LT(max_difference(hidden[0].narrow(0, 0, n_first), truth.narrow(0, at_first, n_first)), kTolerance)
        << "the first row's chunk at " << at_first;
    if (n_second > 0) {
      EXPECT_LT(max_difference(hidden[1].narrow(0, 0, n_second), other.narrow(0, at_second, n_second)), kTolerance)
          << "the second row's chunk at " << at_second;
    }
    at_first += n_first;
    at_second += n_second;
  }
}

TEST(Transformer, RowsAtDifferentPositionsDecodeAsIfAloneAndLeaveTheBatchCleanly) {
  c10::InferenceMode guard;
  const Transformer model = fixture_model();
  const at::Tensor first = alone(model, kFirst), second = alone(model, kSecond);
  // Both prompts' first 4 tokens prefilled together (no padding), then the rows diverge: the first
  // decodes 4 more tokens than the second has, so the second leaves the batch mid-way.
  PagedKvCache cache = small_blocks(model);
  ASSERT_TRUE(cache.reserve(0, 4));
  ASSERT_TRUE(cache.reserve(1, 4));
  const at::Tensor prefill_ids = at::stack({ids_of({kFirst.begin(), kFirst.begin() + 4}).squeeze(0),
                                            ids_of({kSecond.begin(), kSecond.begin() + 4}).squeeze(0)});
  model.hidden(prefill_ids, positions_from(0, 4).expand({2, 4}), with_table({}, cache, {0, 1}, 4), &cache);
  std::vector<const std::vector<int64_t>*> rows{&kFirst, &kSecond};
  std::vector<uint64_t> ids{0, 1};
  for (int64_t t = 4; t < static_cast<int64_t>(kFirst.size()); ++t) {
    if (rows.size() == 2 && t == static_cast<int64_t>(kSecond.size())) {
      const int64_t before = cache.reserved_tokens();
      cache.release(1);
      EXPECT_EQ(cache.reserved_tokens(), before - 8) << "the second row's two blocks of 4 go back";
      rows.pop_back();
      ids.pop_back();
    }
    std::vector<int64_t> next;
    for (size_t r = 0; r < rows.size(); ++r) {
      next.push_back((*rows[r])[t]);
      ASSERT_TRUE(cache.reserve(ids[r], t + 1));
    }
    const auto batch = static_cast<int64_t>(rows.size());
    const at::Tensor step =
        model.hidden(at::tensor(next, at::kLong).view({batch, 1}), at::full({batch, 1}, t, at::kLong),
                     with_table(decoding(t + 1), cache, ids, t + 1), &cache);
    EXPECT_LT(max_difference(step[0].view({-1}), first[t]), kTolerance) << "first sequence, position " << t;
    if (batch == 2) {
      EXPECT_LT(max_difference(step[1].view({-1}), second[t]), kTolerance) << "second, position " << t;
    }
  }
}

// Blocks that one sequence released hold its keys when the next sequence takes them: the newcomer
// must see only its own, and the sequence running beside it must not notice.
TEST(Transformer, ReusedBlocksServeTheNextSequenceAsIfFresh) {
  c10::InferenceMode guard;
  const Transformer model = fixture_model();
  const at::Tensor first = alone(model, kFirst), second = alone(model, kSecond);
  PagedKvCache cache = small_blocks(model);
  const std::vector<int64_t> reversed(kFirst.rbegin(), kFirst.rend());  // a different history
  ASSERT_TRUE(cache.reserve(0, 8));
  ASSERT_TRUE(cache.reserve(1, 8));
  model.hidden(at::stack({at::tensor(std::vector<int64_t>(kFirst.begin(), kFirst.begin() + 8), at::kLong),
                          at::tensor(std::vector<int64_t>(reversed.begin(), reversed.begin() + 8), at::kLong)}),
               positions_from(0, 8).expand({2, 8}), with_table({}, cache, {0, 1}, 8), &cache);
  const at::Tensor before = cache.block_table(std::vector<uint64_t>{1}, 2);
  cache.release(1);
  ASSERT_TRUE(cache.reserve(2, 4));  // takes the lowest free block: the first of the released ones
  EXPECT_EQ(cache.block_table(std::vector<uint64_t>{2}, 1)[0][0].item<int64_t>(), before[0][0].item<int64_t>());
  model.hidden(ids_of({kSecond.begin(), kSecond.begin() + 4}), positions_from(0, 4), with_table({}, cache, {2}, 4),
               &cache);
  // The first sequence goes on from position 8 while the newcomer decodes from 4.
  for (int64_t t = 4; t < static_cast<int64_t>(kSecond.size()); ++t) {
    const int64_t at_first = t + 4;
    ASSERT_TRUE(cache.reserve(0, at_first + 1));
    ASSERT_TRUE(cache.reserve(2, t + 1));
    const at::Tensor step =
        model.hidden(at::tensor(std::vector<int64_t>{kFirst[at_first], kSecond[t]}, at::kLong).view({2, 1}),
                     at::tensor(std::vector<int64_t>{at_first, t}, at::kLong).view({2, 1}),
                     with_table(decoding(at_first + 1), cache, {0, 2}, at_first + 1), &cache);
    EXPECT_LT(max_difference(step[0].view({-1}), first[at_first]), kTolerance) << "the running one, at " << at_first;
    EXPECT_LT(max_difference(step[1].view({-1}), second[t]), kTolerance) << "the newcomer, position " << t;
  }
}

TEST(Transformer, PackedSegmentsAndPaddedRowsEqualEachSequenceAlone) {
  c10::InferenceMode guard;
  const Transformer model = fixture_model();
  const at::Tensor first = alone(model, kFirst), second = alone(model, kSecond);
  const auto n1 = static_cast<int64_t>(kFirst.size()), n2 = static_cast<int64_t>(kSecond.size());

  // Row 0 holds both sequences and 3 padding slots, row 1 the second sequence and padding;
  // positions restart at each sequence.
  const int64_t width = n1 + n2 + 3;
  std::vector<int64_t> ids(kFirst), positions;
  ids.insert(ids.end(), kSecond.begin(), kSecond.end());
  ids.resize(width, 1);
  ids.insert(ids.end(), kSecond.begin(), kSecond.end());
  ids.resize(2 * width, 1);
  for (int64_t t = 0; t < n1; ++t) positions.push_back(t);
  for (int64_t t = 0; t < n2; ++t) positions.push_back(t);
  positions.resize(width, 0);
  for (int64_t t = 0; t < n2; ++t) positions.push_back(t);
  positions.resize(2 * width, 0);
  AttentionSpec packed;
  packed.kind = AttentionSpec::Kind::kSegments;
  packed.spans = at::tensor(std::vector<int64_t>{0, 0, n1, 0, n1, n2, 1, 0, n2}, at::kLong).view({3, 3});
  const at::Tensor rows = model.hidden(at::tensor(ids, at::kLong).view({2, width}),
                                       at::tensor(positions, at::kLong).view({2, width}), packed, nullptr);
  EXPECT_LT(max_difference(rows[0].narrow(0, 0, n1), first), kTolerance);
  EXPECT_LT(max_difference(rows[0].narrow(0, n1, n2), second), kTolerance);
  EXPECT_LT(max_difference(rows[1].narrow(0, 0, n2), second), kTolerance);
  EXPECT_TRUE(rows.isfinite().all().item<bool>());

  // A right-padded batch: the padding ids are arbitrary and must not reach a real position.
  std::vector<int64_t> padded(kSecond);
  padded.resize(n1, 1023);
  const at::Tensor batch = model.hidden(at::stack({ids_of(kFirst)[0], ids_of(padded)[0]}),
                                        positions_from(0, n1).expand({2, n1}), AttentionSpec{}, nullptr);
  EXPECT_LT(max_difference(batch[0], first), kTolerance);
  EXPECT_LT(max_difference(batch[1].narrow(0, 0, n2), second), kTolerance);
}

TEST(Transformer, RandomWeightsAreSeededAndNamedAsTransformersNamesThem) {
  c10::InferenceMode guard;
  const Transformer a = fixture_model(7), b = fixture_model(7), c = fixture_model(8);
  const auto wa = a.named_weights(), wb = b.named_weights(), wc = c.named_weights();
  ASSERT_EQ(wa.size(), wb.size());
  bool any_differs = false;
  std::set<std::string> names;
  for (size_t i = 0; i < wa.size(); ++i) {
    EXPECT_TRUE(wa[i].second.equal(wb[i].second)) << wa[i].first;
    any_differs = any_differs || !wa[i].second.equal(wc[i].second);
    names.insert(wa[i].first);
  }
  EXPECT_TRUE(any_differs) << "another seed draws other weights";
  const auto& config = a.config();
  const int64_t hidden = config.hidden_size, kv = config.num_key_value_heads * config.head_dim;
  // The fused q|k|v and gate|up layers split back into transformers' modules, with their shapes.
  const std::map<std::string, std::vector<int64_t>> expected{
      {"model.embed_tokens.weight", {config.vocab_size, hidden}},
      {"model.layers.0.self_attn.q_proj.weight", {config.num_attention_heads * config.head_dim, hidden}},
      {"model.layers.0.self_attn.k_proj.weight", {kv, hidden}},
      {"model.layers.1.self_attn.v_proj.bias", {kv}},
      {"model.layers.1.mlp.gate_proj.weight", {config.intermediate_size, hidden}},
      {"model.layers.1.mlp.up_proj.weight", {config.intermediate_size, hidden}},
      {"model.layers.1.mlp.down_proj.weight", {hidden, config.intermediate_size}},
      {"model.norm.weight", {hidden}}};
  for (const auto& [name, shape] : expected) {
    ASSERT_TRUE(names.count(name)) << name;
    for (const auto& [n, t] : wa) {
      if (n == name) {
        EXPECT_EQ(t.sizes().vec(), shape) << name;
      }
    }
  }
  EXPECT_FALSE(names.count("lm_head.weight")) << "the fixture ties its embeddings";
  // 2 layers × (q, k, v weights and biases, o, gate, up, down, 2 norms) + embeddings + final norm.
  EXPECT_EQ(wa.size(), 2u * 12u + 2u);
}

}  // namespace transformer_test
}  // namespace vinci::llm
