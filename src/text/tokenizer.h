// Hugging Face byte-level BPE tokenizers from tokenizer.json, giving the ids HF gives.
//
// Hugging Face byte-level BPE tokenizers (Qwen2/2.5/3, Llama-3) from their tokenizer.json, giving
// the ids and text HF `tokenizers` gives on every string: the ids a model was trained on are the
// only ones it understands, and training must score exactly the tokens the rollouts sampled.
//
// Supported: added tokens (with their special/normalized/lstrip/rstrip/single_word flags);
// normalizer null, NFC or a Sequence of them; pre-tokenizers Split, ByteLevel and Sequence;
// the BPE model (ignore_merges, byte_fallback, unk_token, subword prefix and suffix); post-
// processors ByteLevel, TemplateProcessing and Sequence; the ByteLevel decoder. Anything else is
// refused when the file is loaded, never approximated.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vinci::text {

class TokenizerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Immutable once loaded: copies share the tables, and every method may be called from several
// threads at once.
class Tokenizer {
 public:
  // Throws TokenizerError naming the file and the field at fault.
  static Tokenizer from_file(const std::filesystem::path& tokenizer_json);

  // `text` must be valid UTF-8 (TokenizerError otherwise). add_special_tokens applies the
  // post-processor's template, e.g. Llama-3's <|begin_of_text|>; special tokens written in the
  // text are always recognised.
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = false) const;
  // Ids outside the vocab are skipped and bytes that do not form UTF-8 become U+FFFD, as in HF.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const;

  // The bytes a token stands for (an added token: its content), which may be part of a UTF-8
  // character: for incremental decoding and stop strings. Throws TokenizerError for an id
  // outside the vocab.
  std::string token_bytes(int32_t id) const;
  // The token's string as tokenizer.json writes it (byte-level characters for the vocab).
  std::optional<std::string> id_to_token(int32_t id) const;
  std::optional<int32_t> token_to_id(std::string_view token) const;
  // The highest id + 1, added tokens included.
  int32_t vocab_size() const;
  bool is_special(int32_t id) const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace vinci::text
