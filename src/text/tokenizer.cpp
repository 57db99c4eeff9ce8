#include "text/tokenizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <variant>

#include "core/files.h"
#include "text/bpe.h"
#include "text/regex.h"
#include "text/unicode.h"

namespace vinci::text {

namespace {

using nlohmann::json;

// GPT-2's pre-tokenization regex, which ByteLevel applies when use_regex is set.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
};

// Finds added tokens the way HF's Aho-Corasick automaton does (MatchKind::LeftmostLongest): the
// match that starts first wins, and of those the longest; the search resumes after it.
class TokenTrie {
 public:
  TokenTrie() : nodes_(1) {}

  void insert(std::string_view pattern, size_t token) {
    size_t node = 0;
    for (const char c : pattern) {
      const auto byte = static_cast<unsigned char>(c);
      auto& children = nodes_[node].children;
      const auto it = std::find_if(children.begin(), children.end(), [&](const auto& e) { return e.first == byte; });
      if (it != children.end()) {
        node = it->second;
      } else {
        children.emplace_back(byte, nodes_.size());
        node = nodes_.size();
        nodes_.emplace_back();
      }
    }
    nodes_[node].token = token;
    can_start_[static_cast<unsigned char>(pattern.front())] = true;
  }

  struct Found {
    size_t token;
    size_t length;
  };
  std::optional<Found> longest_at(std::string_view text, size_t pos) const {
    if (!can_start_[static_cast<unsigned char>(text[pos])]) return std::nullopt;
    std::optional<Found> found;
    size_t node = 0;
    for (size_t i = pos; i < text.size(); ++i) {
      const auto byte = static_cast<unsigned char>(text[i]);
      const auto& children = nodes_[node].children;
      const auto it = std::find_if(children.begin(), children.end(), [&](const auto& e) { return e.first == byte; });
      if (it == children.end()) break;
      node = it->second;
      if (nodes_[node].token) found = Found{*nodes_[node].token, i + 1 - pos};
    }
    return found;
  }

 private:
  struct Node {
    std::vector<std::pair<unsigned char, size_t>> children;
    std::optional<size_t> token;
  };
  std::vector<Node> nodes_;
  std::array<bool, 256> can_start_{};
};

// A stretch of text on its way through the pipeline, or an added token already recognised.
struct Piece {
  std::string text;
  std::optional<int32_t> token;
};

enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

struct SplitStep {
  Regex regex;
  SplitBehavior behavior;
  bool invert;
};

struct ByteLevelStep {
  bool add_prefix_space;
  std::optional<Regex> gpt2_regex;  // set when use_regex is
};

using PreTokenizerStep = std::variant<SplitStep, ByteLevelStep>;

// One template of a TemplateProcessing post-processor: the sequence itself, or special tokens.
struct TemplatePiece {
  bool is_sequence = false;
  std::vector<int32_t> ids;
};
using Template = std::vector<TemplatePiece>;

// HF's NormalizedString::split: the matches and the stretches between them, each marked as a
// match or not, then grouped by `behavior`; removed and empty stretches are dropped.
void split(std::string_view text, const SplitStep& step, std::vector<std::string>& out) {
  struct Span {
    size_t begin;
    size_t end;
    bool match;
  };
  std::vector<Span> spans;
  size_t prev = 0;
  for (const RegexMatch& m : step.regex.find_all(text)) {
    if (prev != m.begin) spans.push_back({prev, m.begin, false});
    spans.push_back({m.begin, m.end, true});
    prev = m.end;
  }
  if (prev != text.size()) spans.push_back({prev, text.size(), false});
  if (step.invert)
    for (Span& s : spans) s.match = !s.match;

  std::vector<Span> kept;  // `match` now means "remove"
  bool previous_match = false;
  switch (step.behavior) {
    case SplitBehavior::isolated:
      for (const Span& s : spans) kept.push_back({s.begin, s.end, false});
      break;
    case SplitBehavior::removed: kept = spans; break;
    case SplitBehavior::contiguous:
      for (const Span& s : spans) {
        if (s.match == previous_match && !kept.empty()) {
          kept.back().end = s.end;
        } else {
          kept.push_back({s.begin, s.end, false});
        }
        previous_match = s.match;
      }
      break;
    case SplitBehavior::merged_with_previous:
      for (const Span& s : spans) {
        if (s.match && !previous_match && !kept.empty()) {
          kept.back().end = s.end;
        } else {
          kept.push_back({s.begin, s.end, false});
        }
        previous_match = s.match;
      }
      break;
    case SplitBehavior::merged_with_next:
      for (auto s = spans.rbegin(); s != spans.rend(); ++s) {
        if (s->match && !previous_match && !kept.empty()) {
          kept.back().begin = s->begin;
        } else {
          kept.push_back({s->begin, s->end, false});
        }
        previous_match = s->match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
  }
  for (const Span& s : kept)
    if (!s.match && s.end > s.begin) out.emplace_back(text.substr(s.begin, s.end - s.begin));
}

void byte_level(std::string_view text, const ByteLevelStep& step, std::vector<std::string>& out) {
  std::string prefixed;
  if (step.add_prefix_space && text.front() != ' ') {
    prefixed = " ";
    prefixed += text;
    text = prefixed;
  }
  if (!step.gpt2_regex) {
    out.push_back(to_byte_level(text));
    return;
  }
  std::vector<std::string> parts;
  split(text, SplitStep{*step.gpt2_regex, SplitBehavior::isolated, false}, parts);
  for (const std::string& p : parts) out.push_back(to_byte_level(p));
}

// ---- tokenizer.json reading ----

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(std::string_view field, std::string_view problem) const {
    throw TokenizerError(fmt::format("{}: {}: {}", file_, field, problem));
  }

  const json& member(const json& object, std::string_view path, std::string_view key) const {
    const auto it = object.find(key);
    if (it == object.end()) fail(path, fmt::format("the field \"{}\" is missing", key));
    return *it;
  }
  std::string string(const json& value, std::string_view path) const {
    if (!value.is_string()) fail(path, fmt::format("expected a string, found {}", value.dump().substr(0, 80)));
    return value.get<std::string>();
  }
  std::optional<std::string> optional_string(const json& object, std::string_view path, std::string_view key) const {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return std::nullopt;
    return string(*it, fmt::format("{}.{}", path, key));
  }
  bool flag(const json& object, std::string_view path, std::string_view key, bool fallback) const {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return fallback;
    if (!it->is_boolean())
      fail(fmt::format("{}.{}", path, key), fmt::format("expected true or false, found {}", it->dump()));
    return it->get<bool>();
  }
  const json& object(const json& value, std::string_view path) const {
    if (!value.is_object()) fail(path, fmt::format("expected an object, found {}", value.dump().substr(0, 80)));
    return value;
  }
  const json& array(const json& value, std::string_view path) const {
    if (!value.is_array()) fail(path, fmt::format("expected an array, found {}", value.dump().substr(0, 80)));
    return value;
  }
  std::string type(const json& component, std::string_view path) const {
    return string(member(object(component, path), path, "type"), fmt::format("{}.type", path));
  }
  [[noreturn]] void unsupported_type(std::string_view path, std::string_view type, std::string_view supported) const {
    fail(fmt::format("{}.type", path), fmt::format("\"{}\" is not supported (supported: {})", type, supported));
  }
  int32_t id(const json& value, std::string_view path) const {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > INT32_MAX)
      fail(path, fmt::format("expected a token id, found {}", value.dump()));
    return value.get<int32_t>();
  }
  template <typename F>
  Regex regex(std::string_view path, F&& make) const {
    try {
      return make();
    } catch (const std::invalid_argument& e) {
      fail(path, e.what());
    }
  }

 private:
  std::string file_;
};

}  // namespace

struct Tokenizer::Impl {
  Bpe model;
  std::vector<AddedToken> added;
  Vocab added_ids;
  TokenTrie raw_tokens;         // added tokens matched before normalization
  TokenTrie normalized_tokens;  // added tokens matched in normalized text
  bool has_raw_tokens = false;
  bool has_normalized_tokens = false;
  bool nfc = false;
  std::vector<PreTokenizerStep> pre_tokenizer;
  std::vector<Template> post_processor;
  // By id: the token's string, its bytes after the ByteLevel decoder, and its flags.
  std::vector<std::optional<std::string>> tokens;
  std::vector<std::string> bytes;
  std::vector<bool> special;

  explicit Impl(Bpe m) : model(std::move(m)) {}

  void split_added(std::string_view sentence, const TokenTrie& trie, std::vector<Piece>& out) const;
  void encode_text(std::string_view text, std::vector<int32_t>& ids) const;
};

namespace {

Bpe read_model(const Reader& r, const json& root) {
  const json& model = r.object(r.member(root, "(top level)", "model"), "model");
  if (const std::string type = r.type(model, "model"); type != "BPE") r.unsupported_type("model", type, "BPE");
  if (const auto it = model.find("dropout"); it != model.end() && !it->is_null()) {
    if (!it->is_number()) r.fail("model.dropout", "expected a number or null");
    if (it->get<double>() != 0.0)
      r.fail("model.dropout", "BPE dropout samples a different split each time; set it to null");
  }

  Vocab vocab;
  const json& vocab_json = r.object(r.member(model, "model", "vocab"), "model.vocab");
  vocab.reserve(vocab_json.size());
  for (const auto& [token, id_json] : vocab_json.items()) {
    const int32_t id = r.id(id_json, fmt::format("model.vocab[{:?}]", token));
    vocab.emplace(token, id);
  }
  std::vector<bool> used;
  for (const auto& [token, id] : vocab) {
    if (static_cast<size_t>(id) >= used.size()) used.resize(static_cast<size_t>(id) + 1);
    if (used[id])
      r.fail(fmt::format("model.vocab[{:?}]", token), fmt::format("id {} is given to another token too", id));
    used[id] = true;
  }

  BpeOptions options;
  options.unk_token = r.optional_string(model, "model", "unk_token");
  options.fuse_unk = r.flag(model, "model", "fuse_unk", false);
  options.byte_fallback = r.flag(model, "model", "byte_fallback", false);
  options.ignore_merges = r.flag(model, "model", "ignore_merges", false);
  options.continuing_subword_prefix = r.optional_string(model, "model", "continuing_subword_prefix").value_or("");
  options.end_of_word_suffix = r.optional_string(model, "model", "end_of_word_suffix").value_or("");

  std::vector<BpeMerge> merges;
  const json& merges_json = r.array(r.member(model, "model", "merges"), "model.merges");
  merges.reserve(merges_json.size());
  const auto lookup = [&](const std::string& token, const std::string& path) {
    const auto it = vocab.find(token);
    if (it == vocab.end()) r.fail(path, fmt::format("{:?} is not in model.vocab", token));
    return it->second;
  };
  for (size_t i = 0; i < merges_json.size(); ++i) {
    const std::string path = fmt::format("model.merges[{}]", i);
    const json& m = merges_json[i];
    std::string left;
    std::string right;
    if (m.is_string()) {  // the older "a b" form; byte-level tokens never contain a space
      const std::string s = m.get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos) r.fail(path, fmt::format("{:?} is not two tokens separated by a space", s));
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2) {
      left = r.string(m[0], path + "[0]");
      right = r.string(m[1], path + "[1]");
    } else {
      r.fail(path, fmt::format("expected \"a b\" or [\"a\", \"b\"], found {}", m.dump().substr(0, 80)));
    }
    const size_t prefix = options.continuing_subword_prefix.size();
    if (right.size() < prefix) r.fail(path, fmt::format("{:?} is shorter than the continuing_subword_prefix", right));
    merges.push_back(BpeMerge{lookup(left, path), lookup(right, path), lookup(left + right.substr(prefix), path)});
  }
  return Bpe(std::move(vocab), merges, std::move(options));
}

void read_normalizer(const Reader& r, const json& normalizer, const std::string& path, bool& nfc) {
  if (normalizer.is_null()) return;
  const std::string type = r.type(normalizer, path);
  if (type == "NFC") {
    nfc = true;
  } else if (type == "Sequence") {
    const json& list = r.array(r.member(normalizer, path, "normalizers"), path + ".normalizers");
    for (size_t i = 0; i < list.size(); ++i)
      read_normalizer(r, list[i], fmt::format("{}.normalizers[{}]", path, i), nfc);
  } else {
    r.unsupported_type(path, type, "NFC, Sequence");
  }
}

void read_pre_tokenizer(const Reader& r, const json& pre, const std::string& path,
                        std::vector<PreTokenizerStep>& steps) {
  if (pre.is_null()) return;
  const std::string type = r.type(pre, path);
  if (type == "Sequence") {
    const json& list = r.array(r.member(pre, path, "pretokenizers"), path + ".pretokenizers");
    for (size_t i = 0; i < list.size(); ++i)
      read_pre_tokenizer(r, list[i], fmt::format("{}.pretokenizers[{}]", path, i), steps);
  } else if (type == "Split") {
    const json& pattern = r.object(r.member(pre, path, "pattern"), path + ".pattern");
    const std::string pattern_path = path + ".pattern";
    std::optional<Regex> regex;
    if (pattern.contains("Regex")) {
      const std::string source = r.string(pattern["Regex"], pattern_path + ".Regex");
      regex = r.regex(pattern_path + ".Regex", [&] { return Regex(source); });
    } else if (pattern.contains("String")) {
      const std::string literal = r.string(pattern["String"], pattern_path + ".String");
      regex = r.regex(pattern_path + ".String", [&] { return Regex(Regex::escape(literal)); });
    } else {
      r.fail(pattern_path, "expected {\"Regex\": ...} or {\"String\": ...}");
    }
    const std::string behavior = r.string(r.member(pre, path, "behavior"), path + ".behavior");
    static const std::pair<std::string_view, SplitBehavior> kBehaviors[] = {
        {"Removed", SplitBehavior::removed},
        {"Isolated", SplitBehavior::isolated},
        {"MergedWithPrevious", SplitBehavior::merged_with_previous},
        {"MergedWithNext", SplitBehavior::merged_with_next},
        {"Contiguous", SplitBehavior::contiguous}};
    const auto it =
        std::find_if(std::begin(kBehaviors), std::end(kBehaviors), [&](const auto& b) { return b.first == behavior; });
    if (it == std::end(kBehaviors))
      r.fail(path + ".behavior",
             fmt::format("\"{}\" is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous",
                         behavior));
    steps.emplace_back(SplitStep{std::move(*regex), it->second, r.flag(pre, path, "invert", false)});
  } else if (type == "ByteLevel") {
    ByteLevelStep step{r.flag(pre, path, "add_prefix_space", true), std::nullopt};
    if (r.flag(pre, path, "use_regex", true)) step.gpt2_regex = Regex(kGpt2Pattern);
    steps.emplace_back(std::move(step));
  } else {
    r.unsupported_type(path, type, "Split, ByteLevel, Sequence");
  }
}

void read_post_processor(const Reader& r, const json& post, const std::string& path, std::vector<Template>& templates) {
  if (post.is_null()) return;
  const std::string type = r.type(post, path);
  if (type == "ByteLevel") return;  // it only trims offsets
  if (type == "Sequence") {
    const json& list = r.array(r.member(post, path, "processors"), path + ".processors");
    for (size_t i = 0; i < list.size(); ++i)
      read_post_processor(r, list[i], fmt::format("{}.processors[{}]", path, i), templates);
    return;
  }
  if (type != "TemplateProcessing") r.unsupported_type(path, type, "ByteLevel, TemplateProcessing, Sequence");
  const json& specials = r.object(r.member(post, path, "special_tokens"), path + ".special_tokens");
  const json& single = r.array(r.member(post, path, "single"), path + ".single");
  Template result;
  for (size_t i = 0; i < single.size(); ++i) {
    const std::string piece_path = fmt::format("{}.single[{}]", path, i);
    const json& piece = r.object(single[i], piece_path);
    if (piece.contains("Sequence")) {
      const std::string which =
          r.string(r.member(r.object(piece["Sequence"], piece_path + ".Sequence"), piece_path + ".Sequence", "id"),
                   piece_path + ".Sequence.id");
      if (which != "A")
        r.fail(piece_path + ".Sequence.id",
               fmt::format("a single-sequence template can only hold sequence A, not {:?}", which));
      result.push_back(TemplatePiece{true, {}});
    } else if (piece.contains("SpecialToken")) {
      const std::string name = r.string(
          r.member(r.object(piece["SpecialToken"], piece_path + ".SpecialToken"), piece_path + ".SpecialToken", "id"),
          piece_path + ".SpecialToken.id");
      const std::string special_path = fmt::format("{}.special_tokens[{:?}]", path, name);
      if (!specials.contains(name))
        r.fail(piece_path, fmt::format("the special token {:?} is not in {}.special_tokens", name, path));
      const json& ids =
          r.array(r.member(r.object(specials[name], special_path), special_path, "ids"), special_path + ".ids");
      TemplatePiece special;
      for (size_t k = 0; k < ids.size(); ++k)
        special.ids.push_back(r.id(ids[k], fmt::format("{}.ids[{}]", special_path, k)));
      result.push_back(std::move(special));
    } else {
      r.fail(piece_path, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
  }
  templates.push_back(std::move(result));
}

void read_decoder(const Reader& r, const json& decoder, const std::string& path, int& byte_levels) {
  if (decoder.is_null()) r.fail(path, "a decoder is required; byte-level BPE needs {\"type\": \"ByteLevel\"}");
  const std::string type = r.type(decoder, path);
  if (type == "ByteLevel") {
    ++byte_levels;
  } else if (type == "Sequence") {
    const json& list = r.array(r.member(decoder, path, "decoders"), path + ".decoders");
    for (size_t i = 0; i < list.size(); ++i)
      read_decoder(r, list[i], fmt::format("{}.decoders[{}]", path, i), byte_levels);
  } else {
    r.unsupported_type(path, type, "ByteLevel, Sequence");
  }
}

// HF's ByteLevel decoder on one token: the bytes its characters stand for, or, if any character
// is outside the byte map, the token's own UTF-8.
std::string decode_byte_level(std::string_view token) {
  std::string out;
  size_t pos = 0;
  while (pos < token.size()) {
    const auto byte = byte_level_byte(next_code_point(token, pos));
    if (!byte) return std::string(token);
    out += static_cast<char>(*byte);
  }
  return out;
}

}  // namespace

Tokenizer::Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Tokenizer Tokenizer::from_file(const std::filesystem::path& tokenizer_json) {
  const Reader r(tokenizer_json.string());
  std::string text;
  try {
    text = core::read_file(tokenizer_json);
  } catch (const std::exception& e) {
    throw TokenizerError(fmt::format("{}: cannot read the tokenizer: {}", tokenizer_json.string(), e.what()));
  }
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    throw TokenizerError(fmt::format("{}: not valid JSON: {}", tokenizer_json.string(), e.what()));
  }
  r.object(root, "(top level)");
  for (const char* unsupported : {"truncation", "padding"}) {
    if (const auto it = root.find(unsupported); it != root.end() && !it->is_null())
      r.fail(unsupported, "must be null: encode returns the whole text, unpadded; remove the setting");
  }

  auto impl = std::make_shared<Impl>(read_model(r, root));
  read_normalizer(r, root.value("normalizer", json()), "normalizer", impl->nfc);
  read_pre_tokenizer(r, root.value("pre_tokenizer", json()), "pre_tokenizer", impl->pre_tokenizer);
  int byte_levels = 0;
  read_decoder(r, root.value("decoder", json()), "decoder", byte_levels);
  if (byte_levels != 1) r.fail("decoder", "needs exactly one ByteLevel decoder");

  // Added tokens get their ids as HF assigns them: the vocab's id when the content is in the
  // vocab, otherwise the next id after the vocab and the added tokens so far.
  const int32_t model_size = static_cast<int32_t>(impl->model.vocab().size());
  std::optional<int32_t> max_added;
  const json added_json = root.value("added_tokens", json::array());
  r.array(added_json, "added_tokens");
  for (size_t i = 0; i < added_json.size(); ++i) {
    const std::string path = fmt::format("added_tokens[{}]", i);
    const json& t = r.object(added_json[i], path);
    AddedToken token;
    token.content = r.string(r.member(t, path, "content"), path + ".content");
    token.special = r.flag(t, path, "special", false);
    token.single_word = r.flag(t, path, "single_word", false);
    token.lstrip = r.flag(t, path, "lstrip", false);
    token.rstrip = r.flag(t, path, "rstrip", false);
    token.normalized = r.flag(t, path, "normalized", !token.special);
    const int32_t declared = r.id(r.member(t, path, "id"), path + ".id");
    if (token.content.empty() || impl->added_ids.contains(token.content)) continue;
    if (const auto in_vocab = impl->model.token_to_id(token.content)) {
      token.id = *in_vocab;
    } else if (!max_added) {
      token.id = model_size;
    } else {
      token.id = *max_added >= model_size || model_size == 0 ? *max_added + 1 : model_size;
    }
    if (token.id != declared) {
      r.fail(path + ".id", fmt::format("{:?} is declared as id {} but HF tokenizers gives it id {} (the vocab and the "
                                       "added tokens before it decide); fix the file",
                                       token.content, declared, token.id));
    }
    max_added = std::max(max_added.value_or(token.id), token.id);
    impl->added_ids.emplace(token.content, token.id);
    impl->added.push_back(std::move(token));
  }
  // HF lists special tokens before the others; only ties between equal contents could care, and
  // contents are unique, so insertion order is free.
  for (size_t i = 0; i < impl->added.size(); ++i) {
    const AddedToken& t = impl->added[i];
    if (t.normalized) {
      impl->normalized_tokens.insert(impl->nfc ? nfc(t.content) : t.content, i);
      impl->has_normalized_tokens = true;
    } else {
      impl->raw_tokens.insert(t.content, i);
      impl->has_raw_tokens = true;
    }
  }

  read_post_processor(r, root.value("post_processor", json()), "post_processor", impl->post_processor);

  int32_t size = 0;
  for (const auto& [token, id] : impl->model.vocab()) size = std::max(size, id + 1);
  for (const AddedToken& t : impl->added) size = std::max(size, t.id + 1);
  impl->tokens.resize(size);
  impl->bytes.resize(size);
  impl->special.resize(size);
  for (const auto& [token, id] : impl->model.vocab()) impl->tokens[id] = token;
  for (const AddedToken& t : impl->added) impl->tokens[t.id] = t.content;
  for (const AddedToken& t : impl->added)
    if (t.special) impl->special[t.id] = true;
  for (int32_t id = 0; id < size; ++id)
    if (impl->tokens[id]) impl->bytes[id] = decode_byte_level(*impl->tokens[id]);
  for (const Template& t : impl->post_processor) {
    for (const TemplatePiece& p : t)
      for (const int32_t id : p.ids)
        if (id >= size || !impl->tokens[id])
          r.fail("post_processor", fmt::format("the template adds id {}, which is not in the vocab", id));
  }
  return Tokenizer(std::move(impl));
}

// HF's AddedVocabulary::find_matches, with its handling of single_word, lstrip and rstrip.
void Tokenizer::Impl::split_added(std::string_view sentence, const TokenTrie& trie, std::vector<Piece>& out) const {
  const auto leading_space = [](std::string_view s) {
    size_t pos = 0;
    while (pos < s.size()) {
      size_t next = pos;
      if (!is_white_space(next_code_point(s, next))) break;
      pos = next;
    }
    return pos;
  };
  const auto trailing_space_start = [](std::string_view s) {
    size_t end = s.size();
    while (end > 0) {
      size_t prev = end;
      if (!is_white_space(previous_code_point(s, prev))) break;
      end = prev;
    }
    return end;
  };

  size_t start_offset = 0;
  size_t pos = 0;
  while (pos < sentence.size()) {
    const auto found = trie.longest_at(sentence, pos);
    if (!found) {
      ++pos;
      continue;
    }
    size_t start = pos;
    size_t stop = pos + found->length;
    pos = stop;
    const AddedToken& token = added[found->token];
    if (token.single_word) {
      size_t before = start;
      size_t after = stop;
      const bool word_before = start > 0 && is_word_char(previous_code_point(sentence, before));
      const bool word_after = stop < sentence.size() && is_word_char(next_code_point(sentence, after));
      if (word_before || word_after) continue;
    }
    if (token.lstrip) start = std::max(trailing_space_start(sentence.substr(0, start)), start_offset);
    if (token.rstrip) stop += leading_space(sentence.substr(stop));
    if (start_offset < start)
      out.push_back(Piece{std::string(sentence.substr(start_offset, start - start_offset)), std::nullopt});
    out.push_back(Piece{std::string(sentence.substr(start, stop - start)), token.id});
    start_offset = stop;
  }
  if (start_offset < sentence.size()) out.push_back(Piece{std::string(sentence.substr(start_offset)), std::nullopt});
}

void Tokenizer::Impl::encode_text(std::string_view text, std::vector<int32_t>& ids) const {
  std::vector<Piece> raw;
  if (has_raw_tokens) {
    split_added(text, raw_tokens, raw);
  } else if (!text.empty()) {
    raw.push_back(Piece{std::string(text), std::nullopt});
  }
  std::vector<std::string> words;
  std::vector<std::string> next;
  std::vector<Piece> pieces;
  for (Piece& r : raw) {
    pieces.clear();
    if (r.token) {
      pieces.push_back(std::move(r));
    } else {
      std::string normalized = nfc ? vinci::text::nfc(r.text) : std::move(r.text);
      if (has_normalized_tokens) {
        split_added(normalized, normalized_tokens, pieces);
      } else if (!normalized.empty()) {
        pieces.push_back(Piece{std::move(normalized), std::nullopt});
      }
    }
    for (Piece& p : pieces) {
      if (p.token) {
        ids.push_back(*p.token);
        continue;
      }
      words.clear();
      words.push_back(std::move(p.text));
      for (const PreTokenizerStep& step : pre_tokenizer) {
        next.clear();
        for (const std::string& w : words) {
          if (const auto* s = std::get_if<SplitStep>(&step)) {
            split(w, *s, next);
          } else {
            byte_level(w, std::get<ByteLevelStep>(step), next);
          }
        }
        words.swap(next);
      }
      for (const std::string& w : words) model.tokenize(w, ids);
    }
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  if (const auto bad = find_invalid_utf8(text))
    throw TokenizerError(fmt::format(
        "encode: the text is not valid UTF-8 (byte {} of {}); decode it with replacement first", *bad, text.size()));
  std::vector<int32_t> ids;
  try {
    impl_->encode_text(text, ids);
  } catch (const std::runtime_error& e) {
    throw TokenizerError(fmt::format("encode: {}", e.what()));
  }
  for (const Template& t : impl_->post_processor) {
    std::vector<int32_t> processed;
    for (const TemplatePiece& p : t) {
      if (p.is_sequence) {
        processed.insert(processed.end(), ids.begin(), ids.end());
      } else if (add_special_tokens) {
        processed.insert(processed.end(), p.ids.begin(), p.ids.end());
      }
    }
    ids = std::move(processed);
  }
  return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::string bytes;
  for (const int32_t id : ids) {
    if (id < 0 || id >= vocab_size() || !impl_->tokens[id]) continue;
    if (skip_special_tokens && impl_->special[id]) continue;
    bytes += impl_->bytes[id];
  }
  return utf8_lossy(bytes);
}

std::string Tokenizer::token_bytes(int32_t id) const {
  if (id < 0 || id >= vocab_size() || !impl_->tokens[id])
    throw TokenizerError(fmt::format("token_bytes: id {} is not in the vocab (size {})", id, vocab_size()));
  return impl_->bytes[id];
}

std::optional<std::string> Tokenizer::id_to_token(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return std::nullopt;
  return impl_->tokens[id];
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (const auto it = impl_->added_ids.find(token); it != impl_->added_ids.end()) return it->second;
  return impl_->model.token_to_id(token);
}

int32_t Tokenizer::vocab_size() const { return static_cast<int32_t>(impl_->tokens.size()); }

bool Tokenizer::is_special(int32_t id) const { return id >= 0 && id < vocab_size() && impl_->special[id]; }

}  // namespace vinci::text
