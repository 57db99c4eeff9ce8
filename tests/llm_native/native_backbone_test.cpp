// The native backbone against transformers' own outputs (tests/fixtures/llm/make_llm_fixtures.py):
// tiny random Qwen2, Qwen3 and Llama checkpoints, fp32 on the CPU.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/process.h"
#include "llm/safetensors.h"
#include "llm_native/native_backbone.h"
#include "llm_native/sampler.h"
#include "llm_native/transformer.h"
#include "support/captured_log.h"
#include "support/finite_difference.h"
#include "text/tokenizer.h"

namespace vinci::llm {
namespace native_backbone_test {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kFixtures = fs::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm";
constexpr double kLogitTolerance = 1e-4;  // the bound, fp32 against fp32

json golden(const std::string& model) {
  return json::parse(core::read_file(kFixtures / "models" / model / "golden.json"));
}

// Options by assignment: GCC 12 warns about every member a designated initializer leaves out.
NativeOptions options_for(const std::string& device, const std::string& dtype = "auto") {
  NativeOptions o;
  o.device = device;
  o.dtype = dtype;
  return o;
}

std::unique_ptr<TrainableBackbone> open(const std::string& model, NativeOptions options = {}) {
  options.device = "cpu";
  if (options.dtype == "auto") options.dtype = "float32";
  return open_native_backbone(kFixtures / "models" / model, options);
}

std::vector<TrainSequence> all_targets(const json& sequences) {
  std::vector<TrainSequence> out;
  for (const auto& s : sequences) {
    TrainSequence seq{s.get<std::vector<int32_t>>(), {}};
    seq.loss_mask.assign(seq.ids.size(), 1);
    seq.loss_mask[0] = 0;
    out.push_back(std::move(seq));
  }
  return out;
}

fs::path fresh_dir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("vinci-llm-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, LastPositionLogitsMatchTransformers) {
  const auto model = GetParam();
  const auto truth = golden(model);
  auto config = load_model_config(kFixtures / "models" / model);
  auto transformer = Transformer::load(config, Checkpoint::open(kFixtures / "models" / model), {});
  c10::InferenceMode guard;
  for (size_t p = 0; p < truth["prompts"].size(); ++p) {
    auto ids = truth["prompts"][p].get<std::vector<int64_t>>();
    const auto length = static_cast<int64_t>(ids.size());
    auto hidden =
        transformer.hidden(at::tensor(ids).view({1, length}), at::arange(length).view({1, length}), {}, nullptr);
    auto logits = transformer.logits(hidden[0][length - 1].unsqueeze(0))[0];
    auto expected = at::tensor(truth["last_logits"][p].get<std::vector<float>>());
    const double error = (logits - expected).abs().max().item<double>();
    EXPECT_LT(error, kLogitTolerance) << model << " prompt " << p;
  }
}

TEST_P(Golden, BatchedGreedyDecodingEqualsTransformersGenerate) {
  const auto model = GetParam();
  const auto truth = golden(model);
  auto backbone = open(model);
  // All prompts in one batch, of different lengths, stopping at different steps.
  const std::vector<int> budgets = {16, 5, 11, 16};
  std::vector<GenerationRequest> requests;
  for (size_t p = 0; p < truth["prompts"].size(); ++p) {
    GenerationRequest request;
    request.prompt_ids = truth["prompts"][p].get<std::vector<int32_t>>();
    request.sampling.greedy = true;
    request.sampling.ignore_eos = true;
    request.sampling.max_new_tokens = budgets[p];
    requests.push_back(request);
  }
  auto results = backbone->generate(requests);
  ASSERT_EQ(results.size(), requests.size());
  for (size_t p = 0; p < results.size(); ++p) {
    auto expected = truth["greedy"][p].get<std::vector<int32_t>>();
    expected.resize(budgets[p]);
    EXPECT_EQ(results[p].token_ids, expected) << model << " prompt " << p;
    EXPECT_EQ(results[p].finish_reason, FinishReason::length);
    EXPECT_EQ(results[p].prompt_ids, requests[p].prompt_ids);
    ASSERT_EQ(results[p].logprobs.size(), expected.size());
    for (float lp : results[p].logprobs) EXPECT_LE(lp, 0.0f);
  }
}

TEST_P(Golden, TeacherForcedLogprobsMatchTransformersPaddedAndPacked) {
  const auto model = GetParam();
  const auto truth = golden(model);
  auto backbone = open(model);
  auto sequences = all_targets(truth["forced"]);
  std::vector<float> expected;
  for (const auto& row : truth["forced_logprobs"])
    for (float v : row) expected.push_back(v);
  for (bool pack : {false, true}) {
    LogprobOptions options;
    options.pack = pack;
    options.max_tokens_per_row = 96;
    auto logprobs = backbone->logprobs(sequences, options);
    ASSERT_EQ(logprobs.numel(), static_cast<int64_t>(expected.size()));
    const double error = (logprobs - at::tensor(expected)).abs().max().item<double>();
    EXPECT_LT(error, kLogitTolerance) << model << (pack ? " packed" : " padded");
  }
}

TEST_P(Golden, EntropyIsTheEntropyOfTransformersLastPositionLogits) {
  // One target after each prompt: the position that predicts it is the prompt's last, whose logits
  // transformers recorded. The truth: -sum softmax(z) log_softmax(z), in float64, from them.
  const auto model = GetParam();
  const auto truth = golden(model);
  auto backbone = open(model);
  std::vector<TrainSequence> sequences;
  std::vector<double> expected;
  for (size_t p = 0; p < truth["prompts"].size(); ++p) {
    TrainSequence s{truth["prompts"][p].get<std::vector<int32_t>>(), {}};
    s.ids.push_back(0);
    s.loss_mask.assign(s.ids.size(), 0);
    s.loss_mask.back() = 1;
    sequences.push_back(std::move(s));
    const auto logp = at::tensor(truth["last_logits"][p].get<std::vector<double>>()).log_softmax(0);
    expected.push_back(-(logp.exp() * logp).sum().item<double>());
  }
  at::Tensor entropy;
  LogprobOptions options;
  options.entropy = &entropy;
  backbone->logprobs(sequences, options);
  ASSERT_EQ(entropy.numel(), static_cast<int64_t>(expected.size()));
  for (size_t p = 0; p < expected.size(); ++p)
    EXPECT_NEAR(entropy[static_cast<int64_t>(p)].item<double>(), expected[p], 1e-4) << model << " prompt " << p;
}

INSTANTIATE_TEST_SUITE_P(Backbone, Golden, ::testing::Values("qwen2", "qwen3", "llama"));

// The same comparisons in bf16 on a GPU (skipped without one; run by benchmarks/llm_gpu.sh on the
// GPU machine). bf16 keeps 8 significant bits, and the error compounds over the layers, so the
// bounds are stated against the fp32 truth: logits and logprobs within kBf16Tolerance (about 3% of
// these models' logit range), and each greedy choice within 2·kBf16Tolerance of the best logit of
// the fp32 model (the CPU one, itself checked against transformers above) on the same prefix.
constexpr double kBf16Tolerance = 0.15;

TEST_P(Golden, Bf16OnTheGpuStaysWithinStatedTolerances) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  const auto model = GetParam();
  const auto truth = golden(model);
  auto gpu = open_native_backbone(kFixtures / "models" / model, options_for("cuda", "bfloat16"));
  auto config = load_model_config(kFixtures / "models" / model);
  auto reference = Transformer::load(config, Checkpoint::open(kFixtures / "models" / model), {});

  auto forced = all_targets(truth["forced"]);
  std::vector<float> expected;
  for (const auto& row : truth["forced_logprobs"])
    for (float v : row) expected.push_back(v);
  const double logprob_error = (gpu->logprobs(forced, {}).cpu() - at::tensor(expected)).abs().max().item<double>();
  std::cout << model << " bf16 max |logprob error| " << logprob_error << "\n";
  EXPECT_LT(logprob_error, kBf16Tolerance);

  auto gpu_model = Transformer::load(config, Checkpoint::open(kFixtures / "models" / model),
                                     {at::Device(at::kCUDA, 0), at::kBFloat16});
  double logit_error = 0;
  {
    c10::InferenceMode guard;
    for (size_t p = 0; p < truth["prompts"].size(); ++p) {
      auto prompt = truth["prompts"][p].get<std::vector<int64_t>>();
      const auto length = static_cast<int64_t>(prompt.size());
      auto ids = at::tensor(prompt).view({1, length}).cuda();
      auto hidden = gpu_model.hidden(ids, at::arange(length).view({1, length}).cuda(), {}, nullptr);
      auto logits = gpu_model.logits(hidden[0][length - 1].unsqueeze(0))[0].cpu();
      logit_error =
          std::max(logit_error,
                   (logits - at::tensor(truth["last_logits"][p].get<std::vector<float>>())).abs().max().item<double>());
    }
  }
  std::cout << model << " bf16 max |last-position logit error| " << logit_error << "\n";
  EXPECT_LT(logit_error, kBf16Tolerance);

  std::vector<GenerationRequest> requests;
  for (const auto& prompt : truth["prompts"]) {
    GenerationRequest request;
    request.prompt_ids = prompt.get<std::vector<int32_t>>();
    request.sampling.greedy = true;
    request.sampling.ignore_eos = true;
    request.sampling.max_new_tokens = 16;
    requests.push_back(request);
  }
  auto results = gpu->generate(requests);
  // A second call replays the decode graphs the first captured, on the KV pool it kept.
  const auto again = gpu->generate(requests);
  for (size_t p = 0; p < results.size(); ++p) EXPECT_EQ(again[p].token_ids, results[p].token_ids) << p;
  c10::InferenceMode guard;
  double worst_choice = 0;
  size_t same_as_golden = 0, total = 0;
  for (size_t p = 0; p < results.size(); ++p) {
    auto sequence = requests[p].prompt_ids;
    sequence.insert(sequence.end(), results[p].token_ids.begin(), results[p].token_ids.end());
    const auto length = static_cast<int64_t>(sequence.size());
    auto ids = at::tensor(std::vector<int64_t>(sequence.begin(), sequence.end())).view({1, length});
    auto logits = reference.logits(reference.hidden(ids, at::arange(length).view({1, length}), {}, nullptr)[0]);
    const auto prompt_length = static_cast<int64_t>(requests[p].prompt_ids.size());
    const auto golden_greedy = truth["greedy"][p].get<std::vector<int32_t>>();
    bool diverged = false;
    for (size_t t = 0; t < results[p].token_ids.size(); ++t) {
      auto row = logits[prompt_length - 1 + static_cast<int64_t>(t)];
      worst_choice = std::max(worst_choice, (row.max() - row[results[p].token_ids[t]]).item<double>());
      diverged |= results[p].token_ids[t] != golden_greedy[t];
      same_as_golden += !diverged;
      ++total;
    }
  }
  std::cout << model << " bf16 greedy choices at most " << worst_choice << " below the fp32 best; " << same_as_golden
            << "/" << total << " greedy tokens identical to transformers' fp32 continuation before any divergence\n";
  EXPECT_LT(worst_choice, 2 * kBf16Tolerance);
}

TEST(Backbone, GreedyLogprobsAreTheModelsTeacherForcedLogprobs) {
  auto backbone = open("qwen3");
  GenerationRequest request;
  request.prompt_ids = golden("qwen3")["prompts"][2].get<std::vector<int32_t>>();
  request.sampling.greedy = true;
  request.sampling.ignore_eos = true;
  request.sampling.max_new_tokens = 6;
  auto result = backbone->generate({&request, 1})[0];
  TrainSequence seq{request.prompt_ids, {}};
  seq.ids.insert(seq.ids.end(), result.token_ids.begin(), result.token_ids.end());
  seq.loss_mask.assign(seq.ids.size(), 0);
  std::fill(seq.loss_mask.end() - 6, seq.loss_mask.end(), 1);
  auto forced = backbone->logprobs({&seq, 1}, {});
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(forced[i].item<float>(), result.logprobs[i], 1e-5) << i;
}

TEST(Backbone, StopTokensAndStopStringsEndARequest) {
  auto backbone = open("qwen2");
  const auto truth = golden("qwen2");
  const auto prompt = truth["prompts"][1].get<std::vector<int32_t>>();
  const auto continuation = truth["greedy"][1].get<std::vector<int32_t>>();
  GenerationRequest by_token;
  by_token.prompt_ids = prompt;
  by_token.sampling.greedy = true;
  by_token.sampling.max_new_tokens = 16;
  by_token.sampling.stop_token_ids = {continuation[3]};
  auto stopped = backbone->generate({&by_token, 1})[0];
  const auto first = std::find(continuation.begin(), continuation.end(), continuation[3]) - continuation.begin();
  EXPECT_EQ(stopped.finish_reason, FinishReason::stop);
  EXPECT_EQ(stopped.token_ids, std::vector<int32_t>(continuation.begin(), continuation.begin() + first + 1));
  // The text leaves the stop token out; the ids keep it, since the model produced it.
  const auto& tokenizer = backbone->tokenizer();
  // The model's vocabulary is padded past the tokenizer's; those ids have no text.
  auto text = [&](std::span<const int32_t> ids) {
    std::vector<int32_t> known;
    for (int32_t id : ids)
      if (id < tokenizer.vocab_size()) known.push_back(id);
    return tokenizer.decode(known);
  };
  EXPECT_EQ(stopped.text, text(std::span(continuation).first(first)));

  // A stop string: the text of a later token of the known continuation that is plain ASCII (a
  // token ending inside a UTF-8 sequence decodes to U+FFFD, which no raw byte stream contains).
  const std::string full = text(continuation);
  std::string needle;
  for (size_t i = 2; i < continuation.size() && needle.empty(); ++i) {
    auto piece = text(std::span(continuation).subspan(i, 1));
    if (!piece.empty() && std::all_of(piece.begin(), piece.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
      needle = piece;
  }
  ASSERT_FALSE(needle.empty());
  GenerationRequest by_string = by_token;
  by_string.sampling.stop_token_ids.clear();
  by_string.sampling.stop_strings = {needle};
  auto cut = backbone->generate({&by_string, 1})[0];
  EXPECT_EQ(cut.finish_reason, FinishReason::stop);
  EXPECT_EQ(cut.matched_stop, needle);
  EXPECT_EQ(cut.text, full.substr(0, full.find(needle)));
  EXPECT_LT(cut.token_ids.size(), continuation.size());
}

TEST(Backbone, ChatMessagesAreRenderedWithTheTemplate) {
  NativeOptions templated;
  templated.chat_template = kFixtures / "templates/qwen2_5.jinja";
  auto backbone = open("qwen2", templated);
  nlohmann::ordered_json messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "hi"}}});
  auto ids = backbone->render_chat(messages, nlohmann::ordered_json::object(), true);
  const std::string text = backbone->tokenizer().decode(ids);
  EXPECT_NE(text.find("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"), std::string::npos) << text;
}

// A feed that hands its requests out on a schedule: request i joins at the admit() call
// join_at[i] (each call comes between two decode steps), and the order results come back in is
// kept. It closes once everything was admitted and nothing runs.
class ScheduledFeed final : public RequestFeed {
 public:
  ScheduledFeed(std::vector<GenerationRequest> requests, std::vector<int> join_at)
      : requests_(std::move(requests)), join_at_(std::move(join_at)), results_(requests_.size()) {}
  std::vector<Admitted> admit(size_t room, bool) override {
    std::vector<Admitted> out;
    for (size_t i = 0; i < requests_.size() && out.size() < room; ++i)
      if (!given_.count(i) && join_at_[i] <= calls_) {
        given_.insert(i);
        out.push_back({i, &requests_[i]});
      }
    ++calls_;
    return out;
  }
  void complete(size_t ticket, GenerationResult result) override {
    results_[ticket] = std::move(result);
    order_.push_back(ticket);
    events_.push_back(fmt::format("done {}", ticket));
  }
  void fail(size_t ticket, std::exception_ptr error) override {
    failed_.push_back(ticket);
    events_.push_back(fmt::format("failed {}", ticket));
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      errors_.push_back(e.what());
    }
  }
  const std::vector<GenerationResult>& results() const { return results_; }
  const std::vector<size_t>& order() const { return order_; }
  const std::vector<size_t>& failed() const { return failed_; }
  const std::vector<std::string>& errors() const { return errors_; }
  // "done N" and "failed N", in the order they happened.
  const std::vector<std::string>& events() const { return events_; }

 private:
  std::vector<GenerationRequest> requests_;
  std::vector<int> join_at_;
  std::vector<GenerationResult> results_;
  std::set<size_t> given_;
  std::vector<size_t> order_, failed_;
  std::vector<std::string> errors_, events_;
  int calls_ = 0;
};

// Continuous batching: requests that join a running batch mid-flight, and leave it as they
// finish, get exactly the greedy tokens they get alone; a short late one finishes before the long
// early one; a bad request fails alone; and a full batch makes a newcomer wait for a free row.
// Served both ways a step can run: in the rows it has, and in the CUDA graphs' shapes (3 rows
// padded to 4 with scratch rows, spans of 256), the graphs' computation without the capture.
class JoiningMidFlight : public ::testing::TestWithParam<bool> {};

TEST_P(JoiningMidFlight, RequestsDecodeAsIfAlone) {
  auto backbone = open("qwen2");
  NativeOptions served_options;
  served_options.bucketed_decode = GetParam();
  auto served = open("qwen2", served_options);
  const auto truth = golden("qwen2");
  std::vector<GenerationRequest> requests;
  const std::vector<int> lengths{20, 4, 9, 6};
  for (size_t i = 0; i < lengths.size(); ++i) {
    GenerationRequest r;
    r.prompt_ids = truth["prompts"][i % truth["prompts"].size()].get<std::vector<int32_t>>();
    if (i == 3) r.prompt_ids.push_back(5);  // another prompt length than request 0's
    r.sampling.greedy = true;
    r.sampling.ignore_eos = true;
    r.sampling.max_new_tokens = lengths[i];
    requests.push_back(std::move(r));
  }
  GenerationRequest bad = requests[1];
  bad.prompt_ids = {1 << 30};  // outside the vocabulary
  requests.push_back(bad);

  std::vector<GenerationResult> alone;
  for (const auto& r : requests) {
    if (&r == &requests.back()) break;
    alone.push_back(backbone->generate({&r, 1})[0]);
  }
  // Request 0 starts alone; 1 joins after 3 steps, 2 and the bad one after 5, 3 after 6 (when the
  // batch of 3 is full until request 1 leaves).
  ScheduledFeed feed(requests, {0, 3, 5, 6, 5});
  ServeLimits limits;
  limits.max_batch = 3;
  served->serve(feed, limits);
  EXPECT_EQ(feed.failed(), std::vector<size_t>{4});
  for (size_t i = 0; i < alone.size(); ++i) {
    EXPECT_EQ(feed.results()[i].token_ids, alone[i].token_ids) << "request " << i;
    EXPECT_EQ(feed.results()[i].text, alone[i].text) << "request " << i;
    ASSERT_EQ(feed.results()[i].logprobs.size(), alone[i].logprobs.size());
    for (size_t t = 0; t < alone[i].logprobs.size(); ++t)
      EXPECT_NEAR(feed.results()[i].logprobs[t], alone[i].logprobs[t], 1e-4) << "request " << i << ", token " << t;
  }
  // 1 joined at step 3 and ran 4 tokens; 2 joined at 5 and ran 9; 0 ran 20 from step 0; 3 waited for
  // a free row (1's, at step 7) and ran 6.
  EXPECT_EQ(feed.order(), (std::vector<size_t>{1, 3, 2, 0}));
}
INSTANTIATE_TEST_SUITE_P(Backbone, JoiningMidFlight, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "InGraphShapes" : "InItsOwnShapes"; });

// A KV cache limited to 48 tokens (three 16-token blocks): three requests that each end up needing
// two blocks cannot all run at once, so whichever started last is preempted when another needs its
// next block, and is prefilled again with its prompt and what it had generated once there is room.
// Each still gets the greedy tokens it gets alone. A request that alone needs more than the limit
// fails with a message naming it; the others are unaffected.
TEST(Backbone, AFullKvCachePreemptsAndRecomputesWithoutChangingTokens) {
  auto backbone = open("qwen2");
  const auto truth = golden("qwen2");
  std::vector<GenerationRequest> requests(4);
  const std::vector<std::vector<int32_t>> prompts{
      truth["prompts"][0].get<std::vector<int32_t>>(), truth["prompts"][1].get<std::vector<int32_t>>(),
      truth["prompts"][1].get<std::vector<int32_t>>(), truth["prompts"][1].get<std::vector<int32_t>>()};
  const std::vector<int> lengths{20, 20, 20, 60};
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].prompt_ids = prompts[i];
    if (i == 2) requests[i].prompt_ids.push_back(5);
    requests[i].sampling.greedy = true;
    requests[i].sampling.ignore_eos = true;
    requests[i].sampling.max_new_tokens = lengths[i];
  }
  std::vector<GenerationResult> alone;
  for (size_t i = 0; i < 3; ++i) alone.push_back(backbone->generate({&requests[i], 1})[0]);

  ScheduledFeed feed(requests, {0, 0, 0, 0});
  ServeLimits limits;
  limits.max_batch = 4;
  limits.kv_cache_tokens = 48;
  std::string log;
  {
    vinci::test::CapturedLog captured;
    backbone->serve(feed, limits);
    log = captured.str();
  }
  // By hand: the prompts (1, 8 and 9 tokens) take one block each, so all three start and fill the
  // cache; the first row to pass 16 tokens finds no block free, so at least one row must be
  // preempted, and the token checks below then cover its recompute.
  const auto preemptions = [&] {
    size_t n = 0;
    for (size_t at = log.find("the KV cache is full"); at != std::string::npos;
         at = log.find("the KV cache is full", at + 1))
      ++n;
    return n;
  }();
  EXPECT_GT(preemptions, 0u) << log;
  ASSERT_EQ(feed.failed(), std::vector<size_t>{3});
  EXPECT_NE(feed.errors()[0].find("needs 49 KV cache tokens and the cache holds 48"), std::string::npos)
      << feed.errors()[0];
  for (size_t i = 0; i < alone.size(); ++i) {
    EXPECT_EQ(feed.results()[i].token_ids, alone[i].token_ids) << "request " << i;
    ASSERT_EQ(feed.results()[i].logprobs.size(), alone[i].logprobs.size());
    for (size_t t = 0; t < alone[i].logprobs.size(); ++t)
      EXPECT_NEAR(feed.results()[i].logprobs[t], alone[i].logprobs[t], 1e-4) << "request " << i << ", token " << t;
  }
}

// A prompt longer than the whole cache fails as it arrives, with the limit in its message, not
// after the requests running beside it have finished; they are unaffected.
TEST(Backbone, APromptTheKvCacheCanNeverHoldFailsAtOnce) {
  auto backbone = open("qwen2");
  const auto truth = golden("qwen2");
  std::vector<GenerationRequest> requests(2);
  requests[0].prompt_ids = truth["prompts"][1].get<std::vector<int32_t>>();  // 8 tokens
  requests[1].prompt_ids = truth["prompts"][3].get<std::vector<int32_t>>();  // 93 tokens
  for (auto& r : requests) {
    r.sampling.greedy = true;
    r.sampling.ignore_eos = true;
    r.sampling.max_new_tokens = 12;
  }
  const auto alone = backbone->generate({&requests[0], 1})[0];
  ScheduledFeed feed(requests, {0, 2});  // the long one arrives while the first decodes
  ServeLimits limits;
  limits.kv_cache_tokens = 48;
  backbone->serve(feed, limits);
  EXPECT_EQ(feed.events(), (std::vector<std::string>{"failed 1", "done 0"}));
  ASSERT_EQ(feed.errors().size(), 1u);
  EXPECT_NE(feed.errors()[0].find("needs 93 KV cache tokens and the cache holds 48"), std::string::npos)
      << feed.errors()[0];
  EXPECT_EQ(feed.results()[0].token_ids, alone.token_ids);
}

// Chunked prefill, 4 prompt tokens per step: an 8-token prompt starts decoding at step 1; a
// 93-token one that joins at step 2 goes in over 24 steps while the first decodes a token at each
// (unchunked, it would take one step and the first would wait for it); a 90-token one ends on a
// short chunk. Each gets the greedy tokens it gets alone.
TEST(Backbone, ALongPromptJoinsInChunksWhileOthersDecode) {
  auto backbone = open("qwen2");
  const auto truth = golden("qwen2");
  std::vector<GenerationRequest> requests(3);
  const std::vector<size_t> prompt_of{1, 3, 3};
  const std::vector<int> lengths{27, 6, 5};
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].prompt_ids = truth["prompts"][prompt_of[i]].get<std::vector<int32_t>>();
    requests[i].sampling.greedy = true;
    requests[i].sampling.ignore_eos = true;
    requests[i].sampling.max_new_tokens = lengths[i];
  }
  requests[2].prompt_ids.resize(90);  // 22 chunks of 4, then one of 2
  std::vector<GenerationResult> alone;
  for (const auto& r : requests) alone.push_back(backbone->generate({&r, 1})[0]);

  // Every streamed token, in order: which request, and how many tokens it has.
  std::vector<std::pair<size_t, size_t>> events;
  for (size_t i = 0; i < requests.size(); ++i)
    requests[i].on_text = [&events, i, n = size_t{0}](std::string_view) mutable {
      events.emplace_back(i, ++n);
      return true;
    };
  ScheduledFeed feed(requests, {0, 2, 2});
  ServeLimits limits;
  limits.max_batch = 4;
  limits.prefill_chunk = 4;
  backbone->serve(feed, limits);
  ASSERT_TRUE(feed.failed().empty());
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(feed.results()[i].token_ids, alone[i].token_ids) << "request " << i;
    ASSERT_EQ(feed.results()[i].logprobs.size(), alone[i].logprobs.size());
    for (size_t t = 0; t < alone[i].logprobs.size(); ++t)
      EXPECT_NEAR(feed.results()[i].logprobs[t], alone[i].logprobs[t], 1e-4) << "request " << i << ", token " << t;
  }
  // Step k gives request 0 its k-th token; request 1's prompt is whole at step 25 (chunks at steps
  // 2..25), and request 2's at step 24: each then gets its first token in that step, after request
  // 0's. Request 0 ends at step 27, request 2 at 28, request 1 at 30.
  const auto first_of = [&](size_t request) {
    return std::find(events.begin(), events.end(), std::pair<size_t, size_t>{request, 1}) - events.begin();
  };
  const auto zeroth_at = [&](size_t n) {
    return std::find(events.begin(), events.end(), std::pair<size_t, size_t>{0, n}) - events.begin();
  };
  EXPECT_GT(first_of(1), zeroth_at(25));
  EXPECT_LT(first_of(1), zeroth_at(26));
  EXPECT_GT(first_of(2), zeroth_at(24));
  EXPECT_LT(first_of(2), zeroth_at(25));
  EXPECT_EQ(feed.order(), (std::vector<size_t>{0, 2, 1}));
}

TEST(Sampler, SeededRequestsRepeatWhateverTheirBatch) {
  auto backbone = open("llama");
  GenerationRequest a;
  a.prompt_ids = golden("llama")["prompts"][1].get<std::vector<int32_t>>();
  a.sampling.temperature = 1.0;
  a.sampling.max_new_tokens = 12;
  a.sampling.ignore_eos = true;
  a.sampling.seed = 7;
  GenerationRequest other = a;
  other.sampling.seed.reset();
  other.prompt_ids = golden("llama")["prompts"][3].get<std::vector<int32_t>>();
  auto alone = backbone->generate({&a, 1})[0];
  std::vector<GenerationRequest> pair = {other, a};
  auto together = backbone->generate(pair)[1];
  EXPECT_EQ(alone.token_ids, together.token_ids);
  // The draws are the same; the logprobs only as far as batched matmuls round alike.
  ASSERT_EQ(alone.logprobs.size(), together.logprobs.size());
  for (size_t i = 0; i < alone.logprobs.size(); ++i) EXPECT_NEAR(alone.logprobs[i], together.logprobs[i], 1e-4);
  GenerationRequest b = a;
  b.sampling.seed = 8;
  EXPECT_NE(backbone->generate({&b, 1})[0].token_ids, alone.token_ids);
}

// d logprobs / d parameter by central differences in float64, against autograd, for a few
// coordinates of each kind of weight, through the packed path.
TEST(Training, LogprobGradientsMatchFiniteDifferences) {
  for (auto mode : {Training::Mode::full, Training::Mode::lora}) {
    NativeOptions options;
    options.dtype = "float64";
    options.training.mode = mode;
    options.training.lora.rank = 2;
    auto backbone = open("qwen3", options);
    auto params = backbone->trainable_parameters();
    ASSERT_FALSE(params.empty());
    if (mode == Training::Mode::lora) {  // B starts at zero, where A's gradient vanishes
      c10::NoGradGuard no_grad;
      for (auto& p : params) p.normal_(0.0, 0.1);
    }
    auto sequences = all_targets(golden("qwen3")["forced"]);
    sequences.resize(2);
    LogprobOptions packed{.pack = true, .max_tokens_per_row = 80};
    auto loss = [&] { return backbone->logprobs(sequences, packed).sum(); };
    auto value = loss();
    value.backward();
    std::mt19937 rng(11);
    int checked = 0;
    for (size_t i = 0; i < params.size(); i += std::max<size_t>(1, params.size() / 6)) {
      auto flat = params[i].view(-1);
      auto grad = params[i].grad().view(-1);
      for (int trial = 0; trial < 2; ++trial) {
        const int64_t j = std::uniform_int_distribution<int64_t>(0, flat.numel() - 1)(rng);
        const double numeric = vinci::test::central_difference(flat, j, loss), analytic = grad[j].item<double>();
        EXPECT_NEAR(analytic, numeric, 1e-6 + 1e-5 * std::abs(numeric)) << "parameter " << i << " index " << j;
        ++checked;
      }
    }
    EXPECT_GE(checked, 10);
  }
}

// Checkpointing recomputes each layer in backward; the gradients must be those of the plain
// graph (float64, so only summation order could differ), with LoRA over frozen embeddings too.
TEST(Training, GradientCheckpointingGivesThePlainGradients) {
  for (auto mode : {Training::Mode::full, Training::Mode::lora}) {
    for (bool pack : {true, false}) {
      SCOPED_TRACE(std::string(mode == Training::Mode::full ? "full" : "lora") + (pack ? " packed" : " padded"));
      std::vector<std::vector<at::Tensor>> grads;
      for (bool checkpointing : {false, true}) {
        NativeOptions options;
        options.dtype = "float64";
        options.training.mode = mode;
        options.training.lora.rank = 2;
        options.training.gradient_checkpointing = checkpointing;
        auto backbone = open("qwen3", options);
        auto params = backbone->trainable_parameters();
        if (mode == Training::Mode::lora) {  // nonzero B, so every adapter gets a gradient
          c10::NoGradGuard no_grad;
          for (size_t i = 0; i < params.size(); ++i)
            params[i].copy_(at::sin(at::arange(params[i].numel(), params[i].options()) * (i + 1.0)).view_as(params[i]) *
                            0.1);
        }
        auto sequences = all_targets(golden("qwen3")["forced"]);
        sequences.resize(2);
        LogprobOptions how{.pack = pack, .max_tokens_per_row = 80};
        backbone->logprobs(sequences, how).sum().backward();
        grads.emplace_back();
        for (auto& p : params) {
          ASSERT_TRUE(p.grad().defined());
          grads.back().push_back(p.grad().clone());
        }
      }
      ASSERT_EQ(grads[0].size(), grads[1].size());
      for (size_t i = 0; i < grads[0].size(); ++i) {
        const double scale = grads[0][i].abs().max().item<double>();
        EXPECT_GT(scale, 0) << "parameter " << i;
        EXPECT_LE((grads[0][i] - grads[1][i]).abs().max().item<double>(), 1e-12 * (1 + scale)) << "parameter " << i;
      }
    }
  }
}

TEST(Training, LoraSgdStepChangesTheAdapterNotTheBase) {
  const auto dir = kFixtures / "models" / "qwen2";
  auto config = load_model_config(dir);
  auto model = Transformer::load(config, Checkpoint::open(dir), {});
  Training training;
  training.mode = Training::Mode::lora;
  training.lora.rank = 4;
  training.lora.target_modules = {"q_proj", "v_proj", "down_proj"};
  model.enable_training(training, 5);
  EXPECT_EQ(model.trainable_parameters().size(), 2u * 3 * config.num_hidden_layers);
  std::map<std::string, at::Tensor> base_before, adapters_before;
  for (auto& [name, t] : model.named_weights()) base_before[name] = t.detach().clone();
  for (auto& [name, t] : model.named_adapters()) adapters_before[name] = t.detach().clone();

  auto ids = at::tensor(golden("qwen2")["forced"][3].get<std::vector<int64_t>>()).unsqueeze(0);
  const int64_t length = ids.size(1);
  auto hidden = model.hidden(ids, at::arange(length).unsqueeze(0), {}, nullptr);
  auto logp = model.logits(hidden[0].narrow(0, 0, length - 1)).log_softmax(-1);
  auto loss = -logp.gather(1, ids[0].narrow(0, 1, length - 1).unsqueeze(1)).mean();
  loss.backward();
  {
    c10::NoGradGuard no_grad;
    for (auto& p : model.trainable_parameters()) p.sub_(p.grad() * 0.5);
  }
  for (auto& [name, t] : model.named_weights()) EXPECT_TRUE(at::equal(t, base_before[name])) << name;
  int changed = 0;
  for (auto& [name, t] : model.named_adapters()) changed += !at::equal(t, adapters_before[name]);
  // Every B moves (its gradient is x·A, non-zero); A moves only once B is non-zero, i.e. not yet.
  EXPECT_EQ(changed, 3 * config.num_hidden_layers);
}

TEST(Checkpoints, SaveAndLoadRoundTripBitExactly) {
  // Full weights: bf16 on disk, fp32 in memory; save keeps fp32, so nothing is rounded.
  NativeOptions options;
  options.training.mode = Training::Mode::full;
  auto backbone = open("qwen3", options);
  {
    c10::NoGradGuard no_grad;
    for (auto& p : backbone->trainable_parameters()) p.add_(at::randn_like(p) * 1e-3);
  }
  const auto dir = fresh_dir("full");
  backbone->save(dir);
  auto reopened = open_native_backbone(dir, options_for("cpu", "float32"));
  auto sequences = all_targets(golden("qwen3")["forced"]);
  EXPECT_TRUE(at::equal(backbone->logprobs(sequences, {}).detach(), reopened->logprobs(sequences, {})));
  EXPECT_TRUE(fs::exists(dir / "tokenizer.json"));
  auto config = json::parse(core::read_file(dir / "config.json"));
  EXPECT_EQ(config["model_type"], "qwen3");

  // LoRA: the adapter alone, in PEFT's layout, loaded back into a fresh LoRA model.
  NativeOptions lora;
  lora.training.mode = Training::Mode::lora;
  lora.training.lora.rank = 3;
  auto tuned = open("qwen3", lora);
  {
    c10::NoGradGuard no_grad;
    for (auto& p : tuned->trainable_parameters()) p.normal_(0.0, 0.05);
  }
  const auto adapter_dir = fresh_dir("lora");
  tuned->save(adapter_dir);
  auto adapter_config = json::parse(core::read_file(adapter_dir / "adapter_config.json"));
  EXPECT_EQ(adapter_config["peft_type"], "LORA");
  EXPECT_EQ(adapter_config["r"], 3);
  auto file = SafetensorsFile::open(adapter_dir / "adapter_model.safetensors");
  EXPECT_NE(file.find("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"), nullptr);
  auto fresh = open("qwen3", lora);
  EXPECT_FALSE(at::equal(fresh->logprobs(sequences, {}), tuned->logprobs(sequences, {})));
  fresh->load(adapter_dir);
  EXPECT_TRUE(at::equal(fresh->logprobs(sequences, {}), tuned->logprobs(sequences, {})));
  fs::remove_all(dir);
  fs::remove_all(adapter_dir);
}

// Saves a fine-tuned copy of each fixture model and our own fp32 logits for the golden prompts,
// then tests/fixtures/llm/check_saved_checkpoint.py loads the copies with transformers and
// compares logits within 1e-4. VINCI_EXPORT_DIR keeps the copies (benchmarks/llm_gpu.sh checks
// them again on the GPU machine's transformers).
TEST(Checkpoints, ExportForTransformers) {
  const char* keep = std::getenv("VINCI_EXPORT_DIR");
  const fs::path out = keep ? fs::path(keep) : fresh_dir("export");
  for (const std::string model : {"qwen2", "qwen3", "llama"}) {
    NativeOptions options;
    options.training.mode = Training::Mode::full;
    auto backbone = open(model, options);
    {
      c10::NoGradGuard no_grad;
      for (auto& p : backbone->trainable_parameters()) p.add_(at::randn_like(p) * 0.01);
    }
    const auto dir = fs::path(out) / model;
    backbone->save(dir);
    auto config = load_model_config(dir);
    auto saved = Transformer::load(config, Checkpoint::open(dir), {});
    json logits = json::array();
    c10::InferenceMode guard;
    // Held by name: a range-for over golden(model)["prompts"] would iterate a destroyed temporary.
    const json truth = golden(model);
    for (const auto& prompt : truth["prompts"]) {
      auto ids = prompt.get<std::vector<int64_t>>();
      const auto length = static_cast<int64_t>(ids.size());
      auto row = saved.logits(saved
                                  .hidden(at::tensor(ids).view({1, length}), at::arange(length).view({1, length}), {},
                                          nullptr)[0][length - 1]
                                  .unsqueeze(0))[0];
      logits.push_back({{"prompt", ids},
                        {"logits", std::vector<float>(row.data_ptr<float>(), row.data_ptr<float>() + row.numel())}});
    }
    ASSERT_FALSE(logits.empty()) << model << ": no golden prompts";
    core::write_file_atomic(dir / "vinci_logits.json", logits.dump());
  }
  const char* python = std::getenv("VINCI_PYTHON");
  core::SpawnOptions check;
  check.argv = {python ? python : "python3", (kFixtures / "check_saved_checkpoint.py").string(), out.string()};
  check.stderr_path = out / "check.log";
  const auto c = core::run_to_completion(check, std::chrono::minutes(5));
  EXPECT_TRUE(c.status.exited && c.status.code == 0)
      << "transformers disagrees with or cannot load vinci's checkpoints (" << c.status.describe() << "):\n"
      << c.out << core::try_read_file(out / "check.log").value_or("");
  size_t loaded = 0;
  for (size_t at = c.out.find("transformers loads"); at != std::string::npos;
       at = c.out.find("transformers loads", at + 1))
    ++loaded;
  EXPECT_EQ(loaded, 3u) << "each of the 3 models loaded and compared:\n" << c.out;
  if (!keep) fs::remove_all(out);
}

TEST(Checkpoints, MissingOrMisshapenTensorsAreNamed) {
  const auto source = kFixtures / "models" / "llama";
  auto file = SafetensorsFile::open(source / "model.safetensors");
  const std::string victim = "model.layers.1.mlp.up_proj.weight";
  std::vector<TensorToWrite> kept;
  for (const auto& t : file.tensors())
    if (t.name != victim) kept.push_back({t.name, t.dtype, t.shape, t.data, t.nbytes});
  const auto dir = fresh_dir("missing");
  fs::copy_file(source / "config.json", dir / "config.json");
  write_checkpoint(dir, kept);
  try {
    open_native_backbone(dir, options_for("cpu"));
    FAIL() << "a checkpoint without " << victim << " loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(victim), std::string::npos) << e.what();
  }
  // The same tensor with a wrong shape.
  const auto* up = file.find(victim);
  std::vector<int64_t> wrong = {up->shape[1], up->shape[0]};
  kept.push_back({victim, up->dtype, wrong, up->data, up->nbytes});
  write_checkpoint(dir, kept);
  try {
    open_native_backbone(dir, options_for("cpu"));
    FAIL() << "a misshapen " << victim << " loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(victim), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("shape"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace native_backbone_test
}  // namespace vinci::llm
