// Byte-pair encoding by merge ranks: the BPE model of HF tokenizers, applied to one pre-token at a
// time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vinci::text {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
using Vocab = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

// A merge rule, by token id; a rule's rank is its index in the list.
struct BpeMerge {
  int32_t left = 0;
  int32_t right = 0;
  int32_t merged = 0;
};

struct BpeOptions {
  std::optional<std::string> unk_token;
  bool fuse_unk = false;
  // Characters outside the vocab become their bytes' <0xXX> tokens.
  bool byte_fallback = false;
  // A pre-token that is itself in the vocab is one token, whatever the merges would make of it
  // (Llama-3).
  bool ignore_merges = false;
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
};

class Bpe {
 public:
  // Later rules for the same pair override earlier ones, as in HF.
  Bpe(Vocab vocab, std::span<const BpeMerge> merges, BpeOptions options);
  Bpe(Bpe&&) noexcept;
  Bpe& operator=(Bpe&&) noexcept;
  ~Bpe();

  // Appends the ids of one pre-token. Throws std::runtime_error if a character needs an unk token
  // that is not in the vocab.
  void tokenize(std::string_view word, std::vector<int32_t>& ids) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  const Vocab& vocab() const { return vocab_; }

 private:
  struct Rule {
    int32_t rank;
    int32_t merged;
  };
  struct Cache;

  std::vector<int32_t> merge_word(std::string_view word) const;
  std::optional<Rule> rule(int32_t left, int32_t right) const;

  Vocab vocab_;
  std::unordered_map<uint64_t, Rule> rules_;
  BpeOptions options_;
  std::unique_ptr<Cache> cache_;
};

}  // namespace vinci::text
