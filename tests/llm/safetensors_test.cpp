#include "llm/safetensors.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using namespace vinci::llm;
using vinci::core::read_file;

namespace safetensors_test {

const fs::path kFixtures = fs::path(VINCI_SOURCE_ROOT) / "tests" / "fixtures" / "llm" / "safetensors";

nlohmann::json fixture_json(const std::string& name) { return nlohmann::json::parse(read_file(kFixtures / name)); }

std::string from_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::string bytes_of(const TensorView& t) { return std::string(reinterpret_cast<const char*>(t.data), t.nbytes); }

// A file with the given header text and data, laid out as the format says; header_len overrides
// the length prefix.
fs::path write_raw(const fs::path& path, const std::string& header, const std::string& data,
                   std::optional<uint64_t> header_len = std::nullopt) {
  const uint64_t n = header_len.value_or(header.size());
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  vinci::core::write_file_atomic(path, bytes + header + data);
  return path;
}

// The error open() throws, checked to name the file and the tensor.
SafetensorsError open_error(const fs::path& path, const std::string& tensor) {
  try {
    SafetensorsFile::open(path);
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.tensor(), tensor) << e.what();
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    if (!tensor.empty()) {
      EXPECT_NE(std::string(e.what()).find("\"" + tensor + "\""), std::string::npos) << e.what();
    }
    return e;
  }
  ADD_FAILURE() << "no error opening " << path;
  return SafetensorsError(path, tensor, "");
}

bool mentions(const std::exception& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}

std::vector<TensorToWrite> to_write(const std::vector<TensorView>& views) {
  std::vector<TensorToWrite> out;
  for (const auto& v : views) out.push_back({v.name, v.dtype, v.shape, v.data, v.nbytes});
  return out;
}

TEST(SafetensorsDType, NamesSizesAndParsingAgree) {
  for (DType d : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i64, DType::i32, DType::i16, DType::i8,
                  DType::u8, DType::bool_})
    EXPECT_EQ(parse_dtype(dtype_name(d)), d);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::i64), 8u);
  EXPECT_EQ(dtype_size(DType::bool_), 1u);
  EXPECT_FALSE(parse_dtype("F8_E4M3"));
  EXPECT_FALSE(parse_dtype("bf16"));
}

// Every file the reference wrote reads back with the reference's view: order, dtypes, shapes,
// offsets, bytes and metadata.
TEST(SafetensorsGolden, ReadsWhatTheReferenceWrote) {
  const auto expected = fixture_json("expected.json");
  ASSERT_EQ(expected.size(), 11u);
  for (const auto& [name, want] : expected.items()) {
    SCOPED_TRACE(name);
    const auto file = SafetensorsFile::open(kFixtures / name);
    const auto metadata = want["metadata"].get<std::map<std::string, std::string>>();
    EXPECT_EQ(file.metadata(), metadata);
    ASSERT_EQ(file.tensors().size(), want["tensors"].size());
    const std::byte* data_start =
        file.tensors().front().data - want["tensors"][0]["data_offsets"][0].get<std::size_t>();
    for (std::size_t i = 0; i < file.tensors().size(); ++i) {
      const auto& t = file.tensors()[i];
      const auto& w = want["tensors"][i];
      SCOPED_TRACE(t.name);
      EXPECT_EQ(t.name, w["name"].get<std::string>());
      EXPECT_EQ(dtype_name(t.dtype), w["dtype"].get<std::string>());
      EXPECT_EQ(t.shape, w["shape"].get<std::vector<int64_t>>());
      EXPECT_EQ(t.data - data_start, w["data_offsets"][0].get<std::ptrdiff_t>());
      EXPECT_EQ(bytes_of(t), from_hex(w["hex"]));
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % dtype_size(t.dtype), 0u) << "misaligned";
      EXPECT_EQ(file.find(t.name), &t);
    }
  }
  EXPECT_EQ(SafetensorsFile::open(kFixtures / "mixed.safetensors").find("absent"), nullptr);
}

// Little-endian values as torch stored them: a float32, a bfloat16 (the top half of a float32) and
// an int64, decoded by hand.
TEST(SafetensorsGolden, ValuesDecodeAsTorchStoredThem) {
  const auto expected = fixture_json("expected.json");
  const auto f32 = SafetensorsFile::open(kFixtures / "dtypes/F32.safetensors");
  const auto bf16 = SafetensorsFile::open(kFixtures / "dtypes/BF16.safetensors");
  const auto i64 = SafetensorsFile::open(kFixtures / "dtypes/I64.safetensors");
  const auto want = expected["dtypes/F32.safetensors"]["tensors"][1]["values"].get<std::vector<double>>();
  ASSERT_EQ(want.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    float a;
    std::memcpy(&a, f32.find("values")->data + 4 * i, 4);
    uint16_t b16;
    std::memcpy(&b16, bf16.find("values")->data + 2 * i, 2);
    const uint32_t bits = static_cast<uint32_t>(b16) << 16;
    float b;
    std::memcpy(&b, &bits, 4);
    EXPECT_EQ(a, want[i]);
    EXPECT_EQ(b, want[i]);
  }
  int64_t v;
  std::memcpy(&v, i64.find("values")->data + 8 * 4, 8);
  EXPECT_EQ(v, -128);
}

// Given the same tensors, in any order, our writer produces the reference's bytes exactly.
TEST(SafetensorsWriter, ReproducesTheReferenceBytes) {
  const vinci::test::TempDir tmp("st");
  const auto expected = fixture_json("expected.json");
  for (const auto& item : expected.items()) {
    const auto& name = item.key();
    SCOPED_TRACE(name);
    const auto ref = SafetensorsFile::open(kFixtures / name);
    auto tensors = to_write(ref.tensors());
    std::reverse(tensors.begin(), tensors.end());
    const auto out = tmp.path() / "out.safetensors";
    write_safetensors(out, tensors, ref.metadata());
    EXPECT_EQ(read_file(out), read_file(kFixtures / name));
  }
}

TEST(SafetensorsWriter, RoundTripsAlignedWithMetadataAndOddNames) {
  const vinci::test::TempDir tmp("st");
  const std::vector<uint8_t> flags = {1, 0, 1};
  const std::vector<float> weights = {0.5f, -2.0f, 3.25f, 1e-3f, 7.0f, -0.0f};
  const std::vector<uint16_t> halves = {0x3c00, 0xc000, 0x7bff};
  const std::vector<int64_t> ids = {1, -2};
  const std::vector<TensorToWrite> tensors = {
      {"flags", DType::bool_, {3}, flags.data(), 3}, {"layer \"0\"/wé", DType::f32, {2, 3}, weights.data(), 24},
      {"h", DType::f16, {3}, halves.data(), 6},      {"ids", DType::i64, {2}, ids.data(), 16},
      {"empty", DType::bf16, {0, 5}, nullptr, 0},
  };
  const auto path = tmp.path() / "sub" / "rt.safetensors";
  write_safetensors(path, tensors, {{"format", "pt"}, {"note", "ünïcode \"quoted\""}});
  const auto file = SafetensorsFile::open(path);
  EXPECT_EQ(file.metadata(), (std::map<std::string, std::string>{{"format", "pt"}, {"note", "ünïcode \"quoted\""}}));
  ASSERT_EQ(file.tensors().size(), tensors.size());
  for (const auto& w : tensors) {
    const auto* t = file.find(w.name);
    ASSERT_NE(t, nullptr) << w.name;
    EXPECT_EQ(t->dtype, w.dtype);
    EXPECT_EQ(t->shape, w.shape);
    ASSERT_EQ(t->nbytes, w.nbytes);
    if (w.nbytes) {
      EXPECT_EQ(std::memcmp(t->data, w.data, w.nbytes), 0) << w.name;
    }
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % dtype_size(t->dtype), 0u) << w.name;
  }
  // The reference order: 8-byte dtypes first, BOOL last.
  EXPECT_EQ(file.tensors().front().name, "ids");
  EXPECT_EQ(file.tensors().back().name, "flags");
  for (const auto& entry : fs::directory_iterator(path.parent_path()))
    EXPECT_EQ(entry.path().filename(), "rt.safetensors") << "temporary file left behind";
}

TEST(SafetensorsWriter, RefusesInconsistentTensors) {
  const vinci::test::TempDir tmp("st");
  const std::vector<float> data(6);
  const auto path = tmp.path() / "bad.safetensors";
  const std::vector<TensorToWrite> short_data = {{"w", DType::f32, {2, 3}, data.data(), 20}};
  try {
    write_safetensors(path, short_data);
    ADD_FAILURE() << "no error";
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(e.tensor(), "w");
    EXPECT_TRUE(mentions(e, "20 bytes")) << e.what();
  }
  const std::vector<TensorToWrite> twice = {{"w", DType::f32, {6}, data.data(), 24},
                                            {"w", DType::f32, {6}, data.data(), 24}};
  EXPECT_THROW(write_safetensors(path, twice), SafetensorsError);
  const std::vector<TensorToWrite> reserved = {{"__metadata__", DType::f32, {6}, data.data(), 24}};
  EXPECT_THROW(write_safetensors(path, reserved), SafetensorsError);
  EXPECT_FALSE(fs::exists(path));
}

TEST(SafetensorsCorrupt, HeaderLengthLargerThanFile) {
  const vinci::test::TempDir tmp("st");
  const auto path = write_raw(tmp.path() / "f.safetensors", "{}", "", 1000);
  EXPECT_TRUE(mentions(open_error(path, ""), "larger than the file"));
  EXPECT_TRUE(mentions(open_error(write_raw(tmp.path() / "g.safetensors", "{}", "", 200'000'000), ""), "limit"));
  vinci::core::write_file_atomic(tmp.path() / "tiny.safetensors", "abc");
  EXPECT_TRUE(mentions(open_error(tmp.path() / "tiny.safetensors", ""), "too short"));
}

TEST(SafetensorsCorrupt, BadJson) {
  const vinci::test::TempDir tmp("st");
  const auto path = write_raw(tmp.path() / "f.safetensors", R"({"a": {"dtype": "F32",)", "");
  EXPECT_TRUE(mentions(open_error(path, ""), "not valid JSON"));
  EXPECT_TRUE(mentions(open_error(write_raw(tmp.path() / "g.safetensors", "[1, 2]", ""), ""), "JSON object"));
}

TEST(SafetensorsCorrupt, UnknownDtypeNamesTensorAndListsSupported) {
  const vinci::test::TempDir tmp("st");
  const auto path =
      write_raw(tmp.path() / "f.safetensors", R"({"w8":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})", "ab");
  const auto e = open_error(path, "w8");
  EXPECT_TRUE(mentions(e, "F8_E4M3")) << e.what();
  EXPECT_TRUE(mentions(e, "BF16")) << e.what();
}

TEST(SafetensorsCorrupt, ShapeDisagreesWithOffsets) {
  const vinci::test::TempDir tmp("st");
  const auto path = write_raw(tmp.path() / "f.safetensors",
                              R"({"ok":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("w":{"dtype":"F32","shape":[2,3],"data_offsets":[8,28]}})",
                              std::string(28, '\0'));
  EXPECT_TRUE(mentions(open_error(path, "w"), "needs 24 bytes"));
}

TEST(SafetensorsCorrupt, OffsetsOverlapOrLeaveHoles) {
  const vinci::test::TempDir tmp("st");
  const auto overlap = write_raw(tmp.path() / "o.safetensors",
                                 R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                 R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                 std::string(12, '\0'));
  EXPECT_TRUE(mentions(open_error(overlap, "b"), "overlap tensor \"a\""));
  const auto hole = write_raw(tmp.path() / "h.safetensors",
                              R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})",
                              std::string(20, '\0'));
  EXPECT_TRUE(mentions(open_error(hole, "b"), "hole"));
  const auto first_hole =
      write_raw(tmp.path() / "f.safetensors", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                std::string(12, '\0'));
  EXPECT_TRUE(mentions(open_error(first_hole, "a"), "bytes [0, 4)"));
  const auto backwards = write_raw(tmp.path() / "r.safetensors",
                                   R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", std::string(8, '\0'));
  open_error(backwards, "a");
  const auto trailing = write_raw(tmp.path() / "t.safetensors",
                                  R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", std::string(10, '\0'));
  EXPECT_TRUE(mentions(open_error(trailing, ""), "2 bytes after the last tensor"));
}

TEST(SafetensorsCorrupt, TruncatedDataNamesTheTensorCut) {
  const vinci::test::TempDir tmp("st");
  // The reference's mixed file, cut inside its last tensor (BOOL, last in the reference layout)
  // and then inside the F64 one.
  const auto whole = read_file(kFixtures / "mixed.safetensors");
  const auto ref = SafetensorsFile::open(kFixtures / "mixed.safetensors");
  const auto path = tmp.path() / "cut.safetensors";
  vinci::core::write_file_atomic(path, whole.substr(0, whole.size() - 1));
  EXPECT_TRUE(mentions(open_error(path, ref.tensors().back().name), "truncated"));
  const auto* f64 = ref.find("t_f64");
  const auto cut = static_cast<std::size_t>(f64->data - ref.tensors().front().data) + 5;
  const auto data_start =
      whole.size() - (ref.tensors().back().data + ref.tensors().back().nbytes - ref.tensors().front().data);
  vinci::core::write_file_atomic(path, whole.substr(0, data_start + cut));
  EXPECT_TRUE(mentions(open_error(path, "t_f64"), "truncated"));
}

TEST(SafetensorsCorrupt, DuplicateNamesAndBadMetadata) {
  const vinci::test::TempDir tmp("st");
  const auto dup = write_raw(tmp.path() / "d.safetensors",
                             R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                             std::string(16, '\0'));
  EXPECT_TRUE(mentions(open_error(dup, "a"), "twice"));
  const auto meta = write_raw(tmp.path() / "m.safetensors", R"({"__metadata__":{"k":1}})", "");
  EXPECT_TRUE(mentions(open_error(meta, ""), "__metadata__"));
}

TEST(SafetensorsFile, MovesKeepViewsValid) {
  auto a = SafetensorsFile::open(kFixtures / "mixed.safetensors");
  const auto* view = a.find("t_f32");
  const auto before = bytes_of(*view);
  SafetensorsFile b = std::move(a);
  EXPECT_EQ(b.find("t_f32"), view);
  auto c = SafetensorsFile::open(kFixtures / "dtypes/F32.safetensors");
  c = std::move(b);
  EXPECT_EQ(bytes_of(*c.find("t_f32")), before);
}

// transformers' save_pretrained output: two shards and an index.
TEST(SafetensorsCheckpoint, ReadsTransformersShards) {
  const auto golden = fixture_json("sharded.json");
  const auto ckpt = Checkpoint::open(kFixtures / "sharded");
  auto want_names = golden["order"].get<std::vector<std::string>>();
  std::sort(want_names.begin(), want_names.end());
  EXPECT_EQ(ckpt.names(), want_names);
  for (const auto& [name, want] : golden["tensors"].items()) {
    const auto& t = ckpt.get(name);
    EXPECT_EQ(t.shape, want["shape"].get<std::vector<int64_t>>()) << name;
    EXPECT_EQ(bytes_of(t), from_hex(want["hex"])) << name;
  }
  EXPECT_EQ(ckpt.find("lm_head.bias"), nullptr);
  try {
    ckpt.get("lm_head.bias");
    ADD_FAILURE() << "no error";
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(e.tensor(), "lm_head.bias");
    EXPECT_TRUE(mentions(e, (kFixtures / "sharded").string())) << e.what();
  }
}

// Same tensors, same order, same limit: the same shard files and index, byte for byte.
TEST(SafetensorsCheckpoint, WritesShardsAsTransformersDoes) {
  const vinci::test::TempDir tmp("st");
  const auto golden = fixture_json("sharded.json");
  const auto ckpt = Checkpoint::open(kFixtures / "sharded");
  std::vector<TensorToWrite> tensors;
  for (const auto& name : golden["order"]) {
    const auto& t = ckpt.get(name.get<std::string>());
    tensors.push_back({t.name, t.dtype, t.shape, t.data, t.nbytes});
  }
  write_checkpoint(tmp.path(), tensors, golden["max_shard_size"].get<std::size_t>());
  for (const char* name :
       {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "model.safetensors.index.json"})
    EXPECT_EQ(read_file(tmp.path() / name), read_file(kFixtures / "sharded" / name)) << name;
  EXPECT_FALSE(fs::exists(tmp.path() / "model.safetensors"));
  EXPECT_EQ(Checkpoint::open(tmp.path()).names(), ckpt.names());
}

// huggingface_hub's split, worked by hand: with a 100-byte limit, b (200 bytes) is closed into
// shard 1 at once while a stays open; c joins a; d (a+c+d = 120 > 100) opens shard 3.
TEST(SafetensorsCheckpoint, OversizedTensorGetsItsOwnShard) {
  const vinci::test::TempDir tmp("st");
  const std::vector<float> small(10), big(50);
  const std::vector<TensorToWrite> tensors = {{"a", DType::f32, {10}, small.data(), 40},
                                              {"b", DType::f32, {50}, big.data(), 200},
                                              {"c", DType::f32, {10}, small.data(), 40},
                                              {"d", DType::f32, {10}, small.data(), 40}};
  write_checkpoint(tmp.path(), tensors, 100);
  const auto index = nlohmann::json::parse(read_file(tmp.path() / "model.safetensors.index.json"));
  EXPECT_EQ(index["weight_map"], (nlohmann::json{{"a", "model-00002-of-00003.safetensors"},
                                                 {"b", "model-00001-of-00003.safetensors"},
                                                 {"c", "model-00002-of-00003.safetensors"},
                                                 {"d", "model-00003-of-00003.safetensors"}}));
  EXPECT_EQ(index["metadata"]["total_size"], 320);
  EXPECT_EQ(index["metadata"]["total_parameters"], 80);
  EXPECT_EQ(SafetensorsFile::open(tmp.path() / "model-00001-of-00003.safetensors").metadata().at("format"), "pt");
}

TEST(SafetensorsCheckpoint, RemovesFilesOfAnEarlierLayout) {
  const vinci::test::TempDir tmp("st");
  const std::vector<float> data(10);
  const std::vector<TensorToWrite> tensors = {{"a", DType::f32, {10}, data.data(), 40},
                                              {"b", DType::f32, {10}, data.data(), 40}};
  vinci::core::write_file_atomic(tmp.path() / "config.json", "{}");
  write_checkpoint(tmp.path(), tensors, 50);
  ASSERT_TRUE(fs::exists(tmp.path() / "model-00002-of-00002.safetensors"));
  write_checkpoint(tmp.path(), tensors);  // now fits in one file
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tmp.path())) left.push_back(e.path().filename());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"config.json", "model.safetensors"}));
  write_checkpoint(tmp.path(), tensors, 50);  // and back: the single file would shadow the shards
  EXPECT_FALSE(fs::exists(tmp.path() / "model.safetensors"));
  EXPECT_EQ(Checkpoint::open(tmp.path()).names(), (std::vector<std::string>{"a", "b"}));
}

TEST(SafetensorsCheckpoint, InconsistentIndexNamesTensorAndShard) {
  const vinci::test::TempDir tmp("st");
  fs::copy(kFixtures / "sharded", tmp.path(), fs::copy_options::recursive);
  const auto index_path = tmp.path() / "model.safetensors.index.json";
  const auto index = nlohmann::json::parse(read_file(index_path));

  auto missing_shard = index;
  missing_shard["weight_map"]["lm_head.weight"] = "model-00003-of-00003.safetensors";
  vinci::core::write_file_atomic(index_path, missing_shard.dump());
  try {
    Checkpoint::open(tmp.path());
    ADD_FAILURE() << "no error";
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(e.tensor(), "lm_head.weight");
    EXPECT_TRUE(mentions(e, "model-00003-of-00003.safetensors")) << e.what();
    EXPECT_TRUE(mentions(e, "missing")) << e.what();
  }

  auto wrong_shard = index;
  wrong_shard["weight_map"]["lm_head.weight"] = "model-00001-of-00002.safetensors";
  vinci::core::write_file_atomic(index_path, wrong_shard.dump());
  try {
    Checkpoint::open(tmp.path());
    ADD_FAILURE() << "no error";
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(e.tensor(), "lm_head.weight");
    EXPECT_TRUE(mentions(e, "does not hold it")) << e.what();
  }

  auto escaping = index;
  escaping["weight_map"]["lm_head.weight"] = "../model-00002-of-00002.safetensors";
  vinci::core::write_file_atomic(index_path, escaping.dump());
  EXPECT_THROW(Checkpoint::open(tmp.path()), SafetensorsError);

  // A corrupt shard surfaces with the shard's own name and the tensor.
  vinci::core::write_file_atomic(index_path, index.dump());
  const auto shard = tmp.path() / "model-00002-of-00002.safetensors";
  const auto bytes = read_file(shard);
  vinci::core::write_file_atomic(shard, bytes.substr(0, bytes.size() - 4));
  try {
    Checkpoint::open(tmp.path());
    ADD_FAILURE() << "no error";
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(e.file(), shard);
    EXPECT_EQ(e.tensor(), "lm_head.weight");
  }
}

TEST(SafetensorsCheckpoint, DuplicateAcrossShardsAndEmptyDirectory) {
  const vinci::test::TempDir tmp("st");
  EXPECT_THROW(Checkpoint::open(tmp.path() / "absent"), SafetensorsError);
  try {
    Checkpoint::open(tmp.path());
    ADD_FAILURE() << "no error";
  } catch (const SafetensorsError& e) {
    EXPECT_TRUE(mentions(e, "model.safetensors.index.json")) << e.what();
  }
  const std::vector<float> data(2);
  const std::vector<TensorToWrite> a = {{"a", DType::f32, {2}, data.data(), 8}};
  const std::vector<TensorToWrite> ab = {{"a", DType::f32, {2}, data.data(), 8},
                                         {"b", DType::f32, {2}, data.data(), 8}};
  write_safetensors(tmp.path() / "s1.safetensors", a);
  write_safetensors(tmp.path() / "s2.safetensors", ab);
  vinci::core::write_file_atomic(tmp.path() / "model.safetensors.index.json",
                                 R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})");
  try {
    Checkpoint::open(tmp.path());
    ADD_FAILURE() << "no error";
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(e.tensor(), "a");
    EXPECT_TRUE(mentions(e, "s1.safetensors")) << e.what();
  }
}
}  // namespace safetensors_test
