#include "text/tokenizer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/files.h"

namespace fs = std::filesystem;
using nlohmann::json;
using vinci::text::Tokenizer;
using vinci::text::TokenizerError;
using Ids = std::vector<int32_t>;

namespace tokenizer_test {

const fs::path kFixtures = fs::path(VINCI_SOURCE_ROOT) / "tests/fixtures/llm";

const Tokenizer& fixture(const std::string& name) {
  static const Tokenizer qwen = Tokenizer::from_file(kFixtures / "tokenizer/tokenizer.json");
  static const Tokenizer llama = Tokenizer::from_file(kFixtures / "tokenizer_llama3/tokenizer.json");
  return name == "tokenizer_llama3" ? llama : qwen;
}

const json& golden_cases() {
  static const json cases = json::parse(vinci::core::read_file(kFixtures / "tokenizer_golden.json"))["cases"];
  return cases;
}

// GPT-2's byte-to-character map, written out by hand for the bytes these tests use.
const std::map<unsigned char, std::string> kByteChars = {
    {' ', "\xC4\xA0"} /* Ġ */,  {'\n', "\xC4\x8A"} /* Ċ */, {0x00, "\xC4\x80"} /* Ā */,
    {0x7F, "\xC4\xA1"} /* ġ */, {0xAD, "\xC5\x83"} /* Ń */, {0xA9, "\xC2\xA9"} /* © */,
    {0xC3, "\xC3\x83"} /* Ã */, {0xE2, "\xC3\xA2"},         {0x82, "\xC4\xA4"},
    {0xAC, "\xC2\xAC"},         {0xF0, "\xC3\xB0"},         {0x9F, "\xC5\x81"},
    {0x98, "\xC4\xBA"},         {0xED, "\xC3\xAD"},         {0xA0, "\xC5\x82"},
    {0x80, "\xC4\xA2"},         {0xFF, "\xC3\xBF"},         {0xC0, "\xC3\x80"},
    {0xF4, "\xC3\xB4"},         {0x90, "\xC4\xB2"},         {'A', "A"}};

// A hand-made tokenizer.json: one token per byte (id = byte value) plus `extra` tokens from
// id 256, a ByteLevel pre-tokenizer and decoder; tests edit the rest.
json tiny_tokenizer(const std::vector<std::string>& extra, const json& merges) {
  json vocab = json::object();
  int next = 0;
  for (int b = 0; b < 256; ++b) {
    std::string ch;
    // bytes_to_unicode: printable Latin-1 stands for itself, the rest for U+0100 onwards in order.
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    const int cp = printable ? b : 0x100 + next++;
    if (cp < 0x80) {
      ch += static_cast<char>(cp);
    } else {
      ch += static_cast<char>(0xC0 | (cp >> 6));
      ch += static_cast<char>(0x80 | (cp & 0x3F));
    }
    vocab[ch] = b;
  }
  for (size_t i = 0; i < extra.size(); ++i) vocab[extra[i]] = 256 + static_cast<int>(i);
  return json{
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", json::array()},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", merges}}}};
}

json added(const std::string& content, int id, bool special, json flags = json::object()) {
  json t = {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
            {"rstrip", false}, {"normalized", false}, {"special", special}};
  t.update(flags);
  return t;
}

class TempDir {
 public:
  // The process id, not gtest's time-based random seed: ctest runs tests in parallel processes, and
  // two that started in the same millisecond shared a folder and deleted each other's files.
  TempDir()
      : path_(fs::temp_directory_path() /
              ("vinci_tokenizer_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& text) const {
    const fs::path file = path_ / ("tokenizer" + std::to_string(files_++) + ".json");
    std::ofstream(file) << text;
    return file;
  }
  Tokenizer load(const json& j) const { return Tokenizer::from_file(write(j.dump())); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
  mutable int files_ = 0;
};

std::string load_error(const TempDir& dir, const std::string& text) {
  try {
    Tokenizer::from_file(dir.write(text));
  } catch (const TokenizerError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TokenizerGolden, EveryCaseMatchesHuggingFace) {
  ASSERT_GE(golden_cases().size(), 200u);
  for (const json& c : golden_cases()) {
    const Tokenizer& tok = fixture(c["tokenizer"]);
    const std::string text = c["text"];
    SCOPED_TRACE(c["tokenizer"].get<std::string>() + ": " + json(text).dump().substr(0, 120));
    const Ids ids = tok.encode(text);
    EXPECT_EQ(ids, c["ids"].get<Ids>());
    EXPECT_EQ(tok.encode(text, true), c["ids_with_special"].get<Ids>());
    EXPECT_EQ(tok.decode(c["ids"].get<Ids>()), c["decoded"].get<std::string>());
    EXPECT_EQ(tok.decode(c["ids"].get<Ids>(), true), c["decoded_skip_special"].get<std::string>());
  }
}

TEST(TokenizerGolden, TokenBytesConcatenateToTheDecodedText) {
  // Every golden text is valid UTF-8, so HF's decoding replaced nothing.
  for (const json& c : golden_cases()) {
    const Tokenizer& tok = fixture(c["tokenizer"]);
    std::string bytes;
    for (const int32_t id : c["ids"].get<Ids>()) bytes += tok.token_bytes(id);
    EXPECT_EQ(bytes, c["decoded"].get<std::string>()) << c["text"].dump();
  }
}

TEST(TokenizerGolden, SpecialTokensAreNamedAndFlagged) {
  const Tokenizer& tok = fixture("tokenizer");
  const auto im_end = tok.token_to_id("<|im_end|>");
  const auto think = tok.token_to_id("<think>");
  ASSERT_TRUE(im_end && think);
  EXPECT_TRUE(tok.is_special(*im_end));
  EXPECT_FALSE(tok.is_special(*think));  // added, but not special: it survives skip_special_tokens
  EXPECT_EQ(tok.token_bytes(*im_end), "<|im_end|>");
  EXPECT_EQ(tok.encode("a<|im_end|>b"), (Ids{*tok.token_to_id("a"), *im_end, *tok.token_to_id("b")}));
  EXPECT_EQ(tok.token_bytes(*tok.token_to_id(kByteChars.at(' '))), " ");
  EXPECT_EQ(tok.token_bytes(*tok.token_to_id(kByteChars.at('\n'))), "\n");
  // The fixture's added tokens come last, "</tool_response>" the very last (make_llm_fixtures.py).
  EXPECT_EQ(tok.vocab_size(), *tok.token_to_id("</tool_response>") + 1);
  EXPECT_FALSE(tok.is_special(-1));
  EXPECT_FALSE(tok.token_to_id("no such token"));
  EXPECT_THROW(tok.token_bytes(tok.vocab_size()), TokenizerError);
}

TEST(TokenizerDecode, IncompleteUtf8BecomesReplacementCharactersAsInHf) {
  const Tokenizer& tok = fixture("tokenizer");
  const auto ids = [&](std::initializer_list<unsigned char> bytes) {
    Ids out;
    for (const unsigned char b : bytes) out.push_back(*tok.token_to_id(kByteChars.at(b)));
    return out;
  };
  const std::string fffd = "\xEF\xBF\xBD";
  // One U+FFFD per maximal ill-formed subsequence, as Rust's String::from_utf8_lossy does.
  EXPECT_EQ(tok.decode(ids({0xE2, 0x82, 0xAC})), "\xE2\x82\xAC");  // €
  EXPECT_EQ(tok.decode(ids({0xC3})), fffd);
  EXPECT_EQ(tok.decode(ids({0xE2, 0x82})), fffd);
  EXPECT_EQ(tok.decode(ids({0xF0, 0x9F, 0x98})), fffd);
  EXPECT_EQ(tok.decode(ids({0xC3, 'A'})), fffd + "A");
  EXPECT_EQ(tok.decode(ids({0xED, 0xA0, 0x80})), fffd + fffd + fffd);               // a surrogate
  EXPECT_EQ(tok.decode(ids({0xC0, 0x80})), fffd + fffd);                            // overlong
  EXPECT_EQ(tok.decode(ids({0xF4, 0x90, 0x80, 0x80})), fffd + fffd + fffd + fffd);  // above U+10FFFF
  EXPECT_EQ(tok.decode(ids({0xFF, 'A'})), fffd + "A");
  // A character split across tokens comes out whole once both halves are there.
  EXPECT_EQ(tok.token_bytes(ids({0xC3})[0]), "\xC3");
  EXPECT_EQ(tok.decode(ids({0xC3, 0xA9})), "\xC3\xA9");
}

TEST(TokenizerDecode, SkipsIdsOutsideTheVocabLikeHf) {
  const Tokenizer& tok = fixture("tokenizer");
  const int32_t a = *tok.token_to_id("A");
  EXPECT_EQ(tok.decode(Ids{a, tok.vocab_size(), -5, 1 << 30, a}), "AA");
}

TEST(TokenizerModel, MergesApplyByRankAndLeftmostFirst) {
  TempDir dir;
  const std::vector<std::string> extra = {"ab", "bc", "abc", "aa"};
  // Pairs spelled with json::array: a braced list of two-element lists would become an object.
  const json pairs = json::array(
      {json::array({"a", "b"}), json::array({"b", "c"}), json::array({"ab", "c"}), json::array({"a", "a"})});
  for (const json& merges : {json{"a b", "b c", "ab c", "a a"}, pairs}) {
    const Tokenizer tok = dir.load(tiny_tokenizer(extra, merges));
    EXPECT_EQ(tok.encode("abc"), (Ids{258}));
    EXPECT_EQ(tok.encode("bcab"), (Ids{257, 256}));  // a b outranks b c
    EXPECT_EQ(tok.encode("aabc"), (Ids{97, 258}));   // a b outranks a a
    EXPECT_EQ(tok.encode("aaa"), (Ids{259, 97}));    // equal ranks: the leftmost pair first
    EXPECT_EQ(tok.encode("cab"), (Ids{99, 256}));
  }
}

TEST(TokenizerModel, IgnoreMergesKeepsAWholeWordFromTheVocab) {
  TempDir dir;
  json j = tiny_tokenizer({"xyz"}, json::array());
  EXPECT_EQ(dir.load(j).encode("xyz xy"), (Ids{120, 121, 122, 32, 120, 121}));
  j["model"]["ignore_merges"] = true;
  EXPECT_EQ(dir.load(j).encode("xyz xy"), (Ids{256, 32, 120, 121}));
}

TEST(TokenizerModel, ByteFallbackAndUnknownTokens) {
  TempDir dir;
  // Without a ByteLevel pre-tokenizer the model sees characters, not bytes.
  json j = tiny_tokenizer({}, json::array());
  j["pre_tokenizer"] = nullptr;
  j["model"]["vocab"] = {{"<unk>", 0}, {"<0xC3>", 1}, {"<0xA9>", 2}, {"a", 3}, {"b", 4}};
  j["model"]["byte_fallback"] = true;
  EXPECT_EQ(dir.load(j).encode("a\xC3\xA9"
                               "b"),
            (Ids{3, 1, 2, 4}));  // é is C3 A9
  j["model"]["unk_token"] = "<unk>";
  EXPECT_EQ(dir.load(j).encode("a\xC3\xB1"), (Ids{3, 0}));  // ñ is C3 B1, and <0xB1> is missing
  j["model"]["byte_fallback"] = false;
  EXPECT_EQ(dir.load(j).encode("a\xC3\xA9\xC3\xA9"
                               "b"),
            (Ids{3, 0, 0, 4}));
  j["model"]["fuse_unk"] = true;
  EXPECT_EQ(dir.load(j).encode("a\xC3\xA9\xC3\xA9"
                               "b"),
            (Ids{3, 0, 4}));
  j["model"]["unk_token"] = "<missing>";
  EXPECT_THROW(dir.load(j).encode("\xC3\xA9"), TokenizerError);
  EXPECT_EQ(dir.load(j).encode("ab"), (Ids{3, 4}));
}

TEST(TokenizerAddedTokens, StripAndSingleWordFlagsBehaveAsInHf) {
  TempDir dir;
  json j = tiny_tokenizer({}, json::array());
  j["added_tokens"] = {added("[L]", 256, false, {{"lstrip", true}}), added("[R]", 257, false, {{"rstrip", true}}),
                       added("word", 258, false, {{"single_word", true}}),
                       added("<mask>", 259, true, {{"lstrip", true}, {"rstrip", true}})};
  const Tokenizer tok = dir.load(j);
  // lstrip takes the spaces before the token, rstrip those after it.
  EXPECT_EQ(tok.encode("x  [L]  y"), (Ids{120, 256, 32, 32, 121}));
  EXPECT_EQ(tok.encode("a [R]  b"), (Ids{97, 32, 257, 98}));
  EXPECT_EQ(tok.encode("a  <mask>  b"), (Ids{97, 259, 98}));
  // single_word: not after or before a word character ('_' is one).
  EXPECT_EQ(tok.encode("word words sword _word word"),
            (Ids{258, 32, 119, 111, 114, 100, 115, 32, 115, 119, 111, 114, 100, 32, 95, 119, 111, 114, 100, 32, 258}));
  EXPECT_EQ(tok.decode(Ids{97, 259, 98}), "a<mask>b");
  EXPECT_EQ(tok.decode(Ids{97, 259, 98}, true), "ab");
  EXPECT_TRUE(tok.is_special(259));
  EXPECT_FALSE(tok.is_special(258));
}

TEST(TokenizerAddedTokens, LongestMatchWinsAndNormalizedTokensMatchNormalizedText) {
  TempDir dir;
  json j = tiny_tokenizer({}, json::array());
  j["normalizer"] = {{"type", "NFC"}};
  j["added_tokens"] = {added("<|a", 256, true), added("<|a|>", 257, true),
                       added("Caf\xC3\xA9", 258, false, {{"normalized", true}}), added("N\xC3\xB1", 259, false)};
  const Tokenizer tok = dir.load(j);
  EXPECT_EQ(tok.encode("<|a|><|a"), (Ids{257, 256}));
  // "Cafe" + U+0301 composes to "Café" before normalized tokens are looked for ...
  EXPECT_EQ(tok.encode("Cafe\xCC\x81!"), (Ids{258, 33}));
  // ... while a token with normalized=false only matches the raw text.
  EXPECT_EQ(tok.encode("N\xC3\xB1"), (Ids{259}));
  EXPECT_EQ(tok.encode("Nn\xCC\x83"), (Ids{78, 0xC3, 0xB1}));
  // HF runs added tokens through the ByteLevel decoder too: é is byte 0xE9 there, not UTF-8.
  EXPECT_EQ(tok.decode(Ids{258}), "Caf\xEF\xBF\xBD");
}

TEST(TokenizerPostProcessor, TemplateAddsTokensOnlyWithAddSpecialTokens) {
  TempDir dir;
  json j = tiny_tokenizer({}, json::array());
  j["added_tokens"] = {added("<s>", 256, true), added("</s>", 257, true)};
  j["post_processor"] = json::parse(R"({"type": "Sequence", "processors": [
      {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
      {"type": "TemplateProcessing",
       "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                  {"SpecialToken": {"id": "</s>", "type_id": 0}}],
       "pair": [],
       "special_tokens": {"<s>": {"id": "<s>", "ids": [256], "tokens": ["<s>"]},
                          "</s>": {"id": "</s>", "ids": [257], "tokens": ["</s>"]}}}]})");
  const Tokenizer tok = dir.load(j);
  EXPECT_EQ(tok.encode("hi", true), (Ids{256, 104, 105, 257}));
  EXPECT_EQ(tok.encode("hi", false), (Ids{104, 105}));
  EXPECT_EQ(tok.encode("", true), (Ids{256, 257}));
}

TEST(TokenizerPreTokenizer, SplitBehaviorsAndInvert) {
  TempDir dir;
  // Merges would join across the pieces, so the ids show where the text was cut.
  json j = tiny_tokenizer({"a-", "-b", "--"}, json{"a -", "- b", "- -"});
  const auto split = [&](const std::string& text, const std::string& behavior, bool invert) {
    j["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior}, {"invert", invert}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}}}};
    return dir.load(j).encode(text);
  };
  EXPECT_EQ(split("a-b", "Isolated", false), (Ids{97, 45, 98}));
  EXPECT_EQ(split("a-b", "Removed", false), (Ids{97, 98}));
  EXPECT_EQ(split("a-b", "MergedWithPrevious", false), (Ids{256, 98}));
  EXPECT_EQ(split("a-b", "MergedWithNext", false), (Ids{97, 257}));
  EXPECT_EQ(split("a--b", "Isolated", false), (Ids{97, 45, 45, 98}));
  EXPECT_EQ(split("a--b", "Contiguous", false), (Ids{97, 258, 98}));
  EXPECT_EQ(split("a-b", "Removed", true), (Ids{45}));  // inverted: the text around the dash goes
}

TEST(TokenizerErrors, NameTheFileAndTheField) {
  TempDir dir;
  const auto expect_error = [&](const std::string& text, std::vector<std::string> needles) {
    const std::string message = load_error(dir, text);
    for (const std::string& needle : needles)
      EXPECT_NE(message.find(needle), std::string::npos) << message << "\nlacks: " << needle;
    EXPECT_NE(message.find("tokenizer"), std::string::npos) << message;  // the file name
  };
  expect_error("{\"model\": ", {"not valid JSON"});
  expect_error("[1, 2]", {"(top level)", "expected an object"});

  json j = tiny_tokenizer({}, json::array());
  j["model"]["type"] = "WordPiece";
  expect_error(j.dump(), {"model.type", "\"WordPiece\" is not supported", "BPE"});

  j = tiny_tokenizer({}, json::array());
  j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "ByteLevel"}}, {{"type", "Metaspace"}}}}};
  expect_error(j.dump(), {"pre_tokenizer.pretokenizers[1].type", "Metaspace"});

  j = tiny_tokenizer({}, json::array());
  j["normalizer"] = {{"type", "Lowercase"}};
  expect_error(j.dump(), {"normalizer.type", "Lowercase", "NFC"});

  j = tiny_tokenizer({}, json{"a b"});
  expect_error(j.dump(), {"model.merges[0]", "\"ab\" is not in model.vocab"});

  j = tiny_tokenizer({}, json::array());
  j["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"Regex", "\\w+"}}}, {"behavior", "Isolated"}, {"invert", false}};
  expect_error(j.dump(), {"pre_tokenizer.pattern.Regex", "\\w"});

  j["pre_tokenizer"]["pattern"]["Regex"] = "(unclosed";
  expect_error(j.dump(), {"pre_tokenizer.pattern.Regex", "does not compile"});

  j = tiny_tokenizer({}, json::array());
  j["decoder"] = nullptr;
  expect_error(j.dump(), {"decoder", "ByteLevel"});

  j = tiny_tokenizer({}, json::array());
  j["added_tokens"] = {added("<x>", 300, true)};
  expect_error(j.dump(), {"added_tokens[0].id", "300", "256"});

  j = tiny_tokenizer({}, json::array());
  j["model"].erase("vocab");
  expect_error(j.dump(), {"model", "\"vocab\" is missing"});

  EXPECT_THROW(Tokenizer::from_file(dir.path() / "absent.json"), TokenizerError);
}

TEST(TokenizerErrors, InvalidUtf8InputIsRefused) {
  try {
    fixture("tokenizer").encode("ok\xC3(");
    FAIL() << "no error";
  } catch (const TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("not valid UTF-8 (byte 2"), std::string::npos) << e.what();
  }
}

TEST(TokenizerConcurrency, ThreadsEncodeTheSameIdsAsOneThread) {
  const Tokenizer& tok = fixture("tokenizer");
  std::vector<std::string> texts;
  std::vector<Ids> expected;
  for (const json& c : golden_cases()) {
    if (c["tokenizer"] != "tokenizer") continue;
    texts.push_back(c["text"]);
    expected.push_back(c["ids"].get<Ids>());
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        for (size_t i = 0; i < texts.size(); ++i)
          if (tok.encode(texts[(i + t * 7) % texts.size()]) != expected[(i + t * 7) % texts.size()]) ++mismatches[t];
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

TEST(TokenizerSpeed, HundredKilobytesOfCodeEncodeWellUnderASecond) {
  std::string code;
  for (const char* file : {"src/text/tokenizer.cpp", "src/text/regex.cpp", "src/text/bpe.cpp", "src/text/unicode.cpp"})
    code += vinci::core::read_file(fs::path(VINCI_SOURCE_ROOT) / file);
  while (code.size() < 100'000) code += code;
  code.resize(100'000);
  const Tokenizer& tok = fixture("tokenizer");
  const std::clock_t start = std::clock();  // CPU time: the test machines are shared
  const Ids ids = tok.encode(code);
  const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  EXPECT_LT(seconds, 0.5) << ids.size() << " tokens";
  EXPECT_EQ(tok.decode(ids), code);
}
}  // namespace tokenizer_test
