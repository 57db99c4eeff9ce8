// Safetensors files and Hugging Face checkpoint folders: read through mmap, written alike.
//
// Safetensors files and Hugging Face checkpoint directories: read through mmap, written so that
// Python's safetensors and transformers load them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vinci::llm {

// The safetensors dtypes a checkpoint of our model families can hold; the FP8 and sub-byte ones
// are refused with an error naming them.
enum class DType { f64, f32, f16, bf16, i64, i32, i16, i8, u8, bool_ };
std::size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);                 // the safetensors spelling: "BF16"
std::optional<DType> parse_dtype(std::string_view name);  // nullopt for anything else

// A malformed or inconsistent file. file() is the offending file; tensor() the tensor, or empty
// when the problem is not about one tensor (a bad header length, bad JSON).
class SafetensorsError : public std::runtime_error {
 public:
  SafetensorsError(std::filesystem::path file, std::string tensor, const std::string& message);
  const std::filesystem::path& file() const { return file_; }
  const std::string& tensor() const { return tensor_; }

 private:
  std::filesystem::path file_;
  std::string tensor_;
};

// One tensor inside a mapped file. data points into the mapping and lives as long as the file
// object; it is aligned for the dtype whenever the writer padded the header to 8 bytes, as the
// reference writer and ours do.
struct TensorView {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const std::byte* data;
  std::size_t nbytes;
};

// A file mapped read-only (MAP_PRIVATE, PROT_READ). open() validates the whole header up front
// with the reference implementation's rules, so a view handed out is always inside the file.
class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::filesystem::path& path);
  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&& other) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  ~SafetensorsFile();

  const TensorView* find(std::string_view name) const;
  const std::vector<TensorView>& tensors() const { return tensors_; }  // in file order
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  SafetensorsFile() = default;
  std::filesystem::path path_;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  std::vector<TensorView> tensors_;
  std::map<std::string, std::size_t, std::less<>> by_name_;
  std::map<std::string, std::string> metadata_;
};

// A model directory: model.safetensors, or the shards that model.safetensors.index.json lists
// ("weight_map": {tensor: file}). Like transformers, the single file wins when both are present.
class Checkpoint {
 public:
  static Checkpoint open(const std::filesystem::path& dir);

  const TensorView& get(std::string_view name) const;  // throws, naming the tensor and the directory
  const TensorView* find(std::string_view name) const;
  std::vector<std::string> names() const;  // sorted
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::vector<SafetensorsFile> files_;
  std::map<std::string, const TensorView*, std::less<>> by_name_;
};

struct TensorToWrite {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void* data;
  std::size_t nbytes;
};

// Lays tensors out as the reference writer does (by dtype size, largest first, then by name) and
// pads the header with spaces to a multiple of 8, so every tensor is aligned for its dtype and the
// bytes equal Python's safetensors.save_file output for the same tensors and a one-key metadata.
// Written to a temporary sibling and renamed, so a crash never leaves a half-written file.
void write_safetensors(const std::filesystem::path& path, std::span<const TensorToWrite> tensors,
                       const std::map<std::string, std::string>& metadata = {});

// Writes dir/model.safetensors, or, when the total exceeds max_shard_bytes, shards
// model-0000k-of-0000n.safetensors plus model.safetensors.index.json, split as transformers'
// save_pretrained splits them (in the given order; a tensor larger than the limit gets a shard
// of its own). Each file is written to a temporary name and renamed; files of an earlier save
// that the new layout does not use (a single file, other shards) are removed afterwards, so they
// cannot shadow the new checkpoint.
void write_checkpoint(const std::filesystem::path& dir, std::span<const TensorToWrite> tensors,
                      std::size_t max_shard_bytes = 5'000'000'000,
                      const std::map<std::string, std::string>& metadata = {{"format", "pt"}});

}  // namespace vinci::llm
