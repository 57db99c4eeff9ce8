#include "llm/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <regex>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/files.h"

namespace vinci::llm {

namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
  int rank;  // position in the reference implementation's Dtype enum, which orders the layout
};

constexpr std::array<DTypeInfo, 10> kDTypes{{
    {DType::bool_, "BOOL", 1, 0},
    {DType::u8, "U8", 1, 1},
    {DType::i8, "I8", 1, 2},
    {DType::i16, "I16", 2, 5},
    {DType::f16, "F16", 2, 7},
    {DType::bf16, "BF16", 2, 8},
    {DType::i32, "I32", 4, 9},
    {DType::f32, "F32", 4, 11},
    {DType::f64, "F64", 8, 12},
    {DType::i64, "I64", 8, 13},
}};

const DTypeInfo& info(DType dtype) {
  for (const auto& d : kDTypes)
    if (d.dtype == dtype) return d;
  throw std::logic_error("DType without an entry in kDTypes");
}

std::string supported_dtypes() {
  std::vector<std::string_view> names;
  for (const auto& d : kDTypes) names.push_back(d.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

// Reference limit: a larger header is refused as not a safetensors file.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr std::string_view kIndexName = "model.safetensors.index.json";
constexpr std::string_view kSingleName = "model.safetensors";

std::optional<uint64_t> checked_numel(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > UINT64_MAX / static_cast<uint64_t>(d)) return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

// The bytes shape x dtype need, or nullopt when the product overflows.
std::optional<uint64_t> checked_nbytes(const std::vector<int64_t>& shape, DType dtype) {
  auto n = checked_numel(shape);
  const uint64_t size = dtype_size(dtype);
  if (!n || *n > UINT64_MAX / size) return std::nullopt;
  return *n * size;
}

uint64_t read_u64_le(const std::byte* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | std::to_integer<uint64_t>(p[i]);
  return v;
}

std::vector<int64_t> parse_shape(const nlohmann::json& j, const std::filesystem::path& file, const std::string& name) {
  if (!j.is_array())
    throw SafetensorsError(file, name, fmt::format("\"shape\" must be an array of sizes, got {}", j.dump()));
  std::vector<int64_t> shape;
  for (const auto& d : j) {
    if (!d.is_number_unsigned())
      throw SafetensorsError(file, name, fmt::format("\"shape\" must hold non-negative integers, got {}", j.dump()));
    const uint64_t v = d.get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX))
      throw SafetensorsError(file, name, fmt::format("dimension {} in \"shape\" is too large", v));
    shape.push_back(static_cast<int64_t>(v));
  }
  return shape;
}

std::pair<uint64_t, uint64_t> parse_offsets(const nlohmann::json& j, const std::filesystem::path& file,
                                            const std::string& name) {
  if (!j.is_array() || j.size() != 2 || !j[0].is_number_unsigned() || !j[1].is_number_unsigned())
    throw SafetensorsError(
        file, name, fmt::format("\"data_offsets\" must be [begin, end] with non-negative integers, got {}", j.dump()));
  const auto begin = j[0].get<uint64_t>(), end = j[1].get<uint64_t>();
  if (end < begin)
    throw SafetensorsError(file, name, fmt::format("\"data_offsets\" [{}, {}] end before they begin", begin, end));
  return {begin, end};
}

// nlohmann keeps the last of repeated keys silently; a repeated tensor name must be an error.
nlohmann::json parse_header_json(std::string_view text, const std::filesystem::path& file) {
  std::set<std::string> seen;
  std::string duplicate;
  auto on_event = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::key && depth == 1 && duplicate.empty() &&
        !seen.insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, on_event);
  } catch (const nlohmann::json::exception& e) {
    throw SafetensorsError(file, "", fmt::format("the header is not valid JSON ({}); the file is corrupt", e.what()));
  }
  if (!duplicate.empty()) throw SafetensorsError(file, duplicate, "the name appears twice in the header");
  if (!header.is_object())
    throw SafetensorsError(file, "", fmt::format("the header must be a JSON object, got a {}", header.type_name()));
  return header;
}

struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

std::vector<Entry> parse_entries(const nlohmann::json& header, const std::filesystem::path& file,
                                 std::map<std::string, std::string>& metadata) {
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) throw SafetensorsError(file, "", "\"__metadata__\" must be an object of strings");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string())
          throw SafetensorsError(file, "",
                                 fmt::format("\"__metadata__\" value of \"{}\" must be a string, got {}", k, v.dump()));
        metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (!value.is_object() || !value.contains("dtype") || !value.contains("shape") || !value.contains("data_offsets"))
      throw SafetensorsError(file, name, "the entry must be an object with \"dtype\", \"shape\" and \"data_offsets\"");
    const auto& dtype_json = value["dtype"];
    const std::string dtype_str = dtype_json.is_string() ? dtype_json.get<std::string>() : dtype_json.dump();
    const auto dtype = parse_dtype(dtype_str);
    if (!dtype)
      throw SafetensorsError(file, name,
                             fmt::format("unsupported dtype \"{}\" (supported: {})", dtype_str, supported_dtypes()));
    auto shape = parse_shape(value["shape"], file, name);
    const auto [begin, end] = parse_offsets(value["data_offsets"], file, name);
    const auto nbytes = checked_nbytes(shape, *dtype);
    if (!nbytes) throw SafetensorsError(file, name, fmt::format("shape [{}] overflows", fmt::join(shape, ", ")));
    if (*nbytes != end - begin)
      throw SafetensorsError(file, name,
                             fmt::format("shape [{}] of {} needs {} bytes but data_offsets [{}, {}] span {}",
                                         fmt::join(shape, ", "), dtype_str, *nbytes, begin, end, end - begin));
    entries.push_back({name, *dtype, std::move(shape), begin, end});
  }
  return entries;
}

// The reference rule: sorted by offset, the tensors tile the data section exactly.
void check_layout(std::vector<Entry>& entries, uint64_t data_bytes, const std::filesystem::path& file) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  uint64_t expected = 0;
  const Entry* previous = nullptr;
  for (const auto& e : entries) {
    if (e.begin > expected)
      throw SafetensorsError(
          file, e.name,
          fmt::format("data_offsets [{}, {}] leave a hole: bytes [{}, {}) of the data belong to no tensor", e.begin,
                      e.end, expected, e.begin));
    if (e.begin < expected)
      throw SafetensorsError(file, e.name,
                             fmt::format("data_offsets [{}, {}] overlap tensor \"{}\", which ends at {}", e.begin,
                                         e.end, previous->name, expected));
    if (e.end > data_bytes)
      throw SafetensorsError(
          file, e.name,
          fmt::format("data truncated: the tensor needs bytes [{}, {}) of the data but the file holds only {}; "
                      "re-download or re-save the file",
                      e.begin, e.end, data_bytes));
    expected = e.end;
    previous = &e;
  }
  if (expected != data_bytes)
    throw SafetensorsError(file, "",
                           fmt::format("{} bytes after the last tensor's data (ending at {}) belong to no tensor",
                                       data_bytes - expected, expected));
}

// A temporary sibling that becomes `path` on commit() and is removed if never committed.
class AtomicFile {
 public:
  explicit AtomicFile(const std::filesystem::path& path)
      : path_(path), tmp_(path.string() + fmt::format(".{}.tmp", ::getpid())) {
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw SafetensorsError(path_, "", fmt::format("cannot create {}: {}", tmp_.string(), std::strerror(errno)));
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile() {
    if (fd_ >= 0) {
      ::close(fd_);
      ::unlink(tmp_.c_str());
    }
  }

  void write(const void* data, std::size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw SafetensorsError(path_, "", fmt::format("writing {} failed: {}", tmp_.string(), std::strerror(errno)));
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  }

  void commit() {
    if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
      const int err = errno;
      fd_ = -1;
      ::unlink(tmp_.c_str());
      throw SafetensorsError(path_, "", fmt::format("flushing {} failed: {}", tmp_.string(), std::strerror(err)));
    }
    fd_ = -1;
    std::error_code ec;
    std::filesystem::rename(tmp_, path_, ec);
    if (ec) {
      ::unlink(tmp_.c_str());
      throw SafetensorsError(path_, "", fmt::format("renaming {} into place failed: {}", tmp_.string(), ec.message()));
    }
  }

 private:
  std::filesystem::path path_, tmp_;
  int fd_ = -1;
};

std::string json_string(const std::string& s, const std::filesystem::path& file, const std::string& tensor) {
  try {
    return nlohmann::json(s).dump();
  } catch (const nlohmann::json::exception&) {
    throw SafetensorsError(file, tensor, fmt::format("\"{}\" is not valid UTF-8", s));
  }
}

void check_tensors_to_write(std::span<const TensorToWrite> tensors, const std::filesystem::path& path) {
  std::set<std::string_view> names;
  for (const auto& t : tensors) {
    if (t.name == "__metadata__") throw SafetensorsError(path, t.name, "the name is reserved for the file's metadata");
    if (!names.insert(t.name).second) throw SafetensorsError(path, t.name, "the name is given twice");
    const auto nbytes = checked_nbytes(t.shape, t.dtype);
    if (!nbytes || *nbytes != t.nbytes)
      throw SafetensorsError(path, t.name,
                             fmt::format("shape [{}] of {} does not match the {} bytes given", fmt::join(t.shape, ", "),
                                         dtype_name(t.dtype), t.nbytes));
    if (t.nbytes > 0 && t.data == nullptr) throw SafetensorsError(path, t.name, "the data pointer is null");
  }
}

}  // namespace

std::size_t dtype_size(DType dtype) { return info(dtype).size; }
std::string_view dtype_name(DType dtype) { return info(dtype).name; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& d : kDTypes)
    if (d.name == name) return d.dtype;
  return std::nullopt;
}

SafetensorsError::SafetensorsError(std::filesystem::path file, std::string tensor, const std::string& message)
    : std::runtime_error(tensor.empty() ? fmt::format("{}: {}", file.string(), message)
                                        : fmt::format("{}: tensor \"{}\": {}", file.string(), tensor, message)),
      file_(std::move(file)),
      tensor_(std::move(tensor)) {}

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  SafetensorsFile f;
  f.path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SafetensorsError(path, "", fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw SafetensorsError(path, "", fmt::format("cannot stat: {}", std::strerror(err)));
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    throw SafetensorsError(path, "",
                           fmt::format("the file is {} bytes, too short for the 8-byte header length; it is not a "
                                       "safetensors file or was truncated",
                                       size));
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);
  if (map == MAP_FAILED) throw SafetensorsError(path, "", fmt::format("mmap failed: {}", std::strerror(map_errno)));
  f.map_ = map;
  f.map_size_ = size;

  const auto* bytes = static_cast<const std::byte*>(map);
  const uint64_t header_len = read_u64_le(bytes);
  if (header_len > kMaxHeaderBytes)
    throw SafetensorsError(path, "",
                           fmt::format("the header length {} exceeds the {}-byte limit; this is not a safetensors file",
                                       header_len, kMaxHeaderBytes));
  if (8 + header_len > size)
    throw SafetensorsError(path, "",
                           fmt::format("the header length {} is larger than the file ({} bytes); the file is truncated "
                                       "or not a safetensors file",
                                       header_len, size));
  const std::string_view text(reinterpret_cast<const char*>(bytes + 8), header_len);
  const auto header = parse_header_json(text, path);
  auto entries = parse_entries(header, path, f.metadata_);
  const uint64_t data_bytes = size - 8 - header_len;
  check_layout(entries, data_bytes, path);

  const std::byte* data = bytes + 8 + header_len;
  f.tensors_.reserve(entries.size());
  for (auto& e : entries) {
    f.by_name_.emplace(e.name, f.tensors_.size());
    f.tensors_.push_back({std::move(e.name), e.dtype, std::move(e.shape), data + e.begin, e.end - e.begin});
  }
  return f;
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept
    : path_(std::move(other.path_)),
      map_(std::exchange(other.map_, nullptr)),
      map_size_(std::exchange(other.map_size_, 0)),
      tensors_(std::move(other.tensors_)),
      by_name_(std::move(other.by_name_)),
      metadata_(std::move(other.metadata_)) {}

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& other) noexcept {
  if (this != &other) {
    if (map_) ::munmap(map_, map_size_);
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    map_size_ = std::exchange(other.map_size_, 0);
    tensors_ = std::move(other.tensors_);
    by_name_ = std::move(other.by_name_);
    metadata_ = std::move(other.metadata_);
  }
  return *this;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(map_, map_size_);
}

const TensorView* SafetensorsFile::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

Checkpoint Checkpoint::open(const std::filesystem::path& dir) {
  Checkpoint c;
  c.dir_ = dir;
  if (!std::filesystem::is_directory(dir))
    throw SafetensorsError(dir, "", "the model directory does not exist or is not a directory");

  const auto single = dir / kSingleName;
  const auto index_path = dir / kIndexName;
  if (std::filesystem::exists(single)) {
    c.files_.push_back(SafetensorsFile::open(single));
  } else if (std::filesystem::exists(index_path)) {
    nlohmann::json index;
    try {
      index = nlohmann::json::parse(core::read_file(index_path));
    } catch (const nlohmann::json::exception& e) {
      throw SafetensorsError(index_path, "", fmt::format("not valid JSON ({})", e.what()));
    }
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
      throw SafetensorsError(index_path, "", "it has no \"weight_map\" object mapping tensor names to shard files");
    std::map<std::string, std::string> weight_map;
    std::map<std::string, std::size_t> shard_slot;
    for (const auto& [tensor, shard] : index["weight_map"].items()) {
      if (!shard.is_string())
        throw SafetensorsError(index_path, tensor, fmt::format("the shard must be a file name, got {}", shard.dump()));
      const auto name = shard.get<std::string>();
      if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
        throw SafetensorsError(index_path, tensor,
                               fmt::format("shard \"{}\" is not a file name inside the directory", name));
      weight_map[tensor] = name;
      if (shard_slot.contains(name)) continue;
      if (!std::filesystem::exists(dir / name))
        throw SafetensorsError(
            index_path, tensor,
            fmt::format("the index puts it in shard \"{}\", which is missing from {}", name, dir.string()));
      shard_slot[name] = 0;
    }
    for (auto& [name, slot] : shard_slot) {
      slot = c.files_.size();
      c.files_.push_back(SafetensorsFile::open(dir / name));
    }
    for (const auto& [tensor, shard] : weight_map) {
      if (!c.files_[shard_slot[shard]].find(tensor))
        throw SafetensorsError(index_path, tensor,
                               fmt::format("the index puts it in shard \"{}\", which does not hold it", shard));
    }
  } else {
    throw SafetensorsError(
        dir, "",
        fmt::format("no {} or {}: not a Hugging Face safetensors checkpoint directory", kSingleName, kIndexName));
  }

  // Like transformers, every tensor of every shard is loaded, listed in the index or not.
  for (const auto& file : c.files_) {
    for (const auto& t : file.tensors()) {
      if (c.by_name_.emplace(t.name, &t).second) continue;
      const auto first = std::find_if(c.files_.begin(), c.files_.end(), [&](const auto& f) { return f.find(t.name); });
      throw SafetensorsError(file.path(), t.name,
                             fmt::format("the tensor is also in {}; a checkpoint must hold each tensor once",
                                         first->path().filename().string()));
    }
  }
  return c;
}

const TensorView* Checkpoint::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const TensorView& Checkpoint::get(std::string_view name) const {
  if (const auto* t = find(name)) return *t;
  throw SafetensorsError(dir_, std::string(name),
                         "the checkpoint has no such tensor; it does not match the architecture in config.json");
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  out.reserve(by_name_.size());
  for (const auto& [name, view] : by_name_) out.push_back(name);
  return out;
}

void write_safetensors(const std::filesystem::path& path, std::span<const TensorToWrite> tensors,
                       const std::map<std::string, std::string>& metadata) {
  check_tensors_to_write(tensors, path);
  std::vector<const TensorToWrite*> order;
  for (const auto& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const TensorToWrite* a, const TensorToWrite* b) {
    const int ra = info(a->dtype).rank, rb = info(b->dtype).rank;
    return ra != rb ? ra > rb : a->name < b->name;
  });

  // Built by hand: the reference writes "__metadata__" first, then tensors in data order, with
  // the fields in this order and no spaces.
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) header += ',';
      first = false;
      header += json_string(k, path, "") + ":" + json_string(v, path, "");
    }
    header += "}";
  }
  uint64_t offset = 0;
  for (const auto* t : order) {
    if (header.size() > 1) header += ',';
    header += fmt::format("{}:{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
                          json_string(t->name, path, t->name), dtype_name(t->dtype), fmt::join(t->shape, ","), offset,
                          offset + t->nbytes);
    offset += t->nbytes;
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');

  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  AtomicFile out(path);
  std::array<unsigned char, 8> len{};
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(static_cast<uint64_t>(header.size()) >> (8 * i));
  out.write(len.data(), len.size());
  out.write(header.data(), header.size());
  for (const auto* t : order) out.write(t->data, t->nbytes);
  out.commit();
}

void write_checkpoint(const std::filesystem::path& dir, std::span<const TensorToWrite> tensors,
                      std::size_t max_shard_bytes, const std::map<std::string, std::string>& metadata) {
  check_tensors_to_write(tensors, dir);

  // huggingface_hub's split: greedy in the given order; an oversized tensor is closed into a shard
  // of its own at once, while the shard being filled stays open.
  std::vector<std::vector<TensorToWrite>> shards;
  std::vector<TensorToWrite> current;
  std::size_t current_bytes = 0;
  for (const auto& t : tensors) {
    if (t.nbytes > max_shard_bytes) {
      shards.push_back({t});
      continue;
    }
    if (current_bytes + t.nbytes > max_shard_bytes) {
      shards.push_back(std::move(current));
      current = {};
      current_bytes = 0;
    }
    current.push_back(t);
    current_bytes += t.nbytes;
  }
  if (!current.empty() || shards.empty()) shards.push_back(std::move(current));

  std::set<std::string> written;
  if (shards.size() == 1) {
    write_safetensors(dir / kSingleName, shards.front(), metadata);
    written.insert(std::string(kSingleName));
  } else {
    nlohmann::json weight_map = nlohmann::json::object();
    uint64_t total_size = 0, total_parameters = 0;
    for (std::size_t i = 0; i < shards.size(); ++i) {
      const auto name = fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, shards.size());
      write_safetensors(dir / name, shards[i], metadata);
      written.insert(name);
      for (const auto& t : shards[i]) {
        weight_map[t.name] = name;
        total_size += t.nbytes;
        total_parameters += *checked_numel(t.shape);
      }
    }
    const nlohmann::json index = {{"metadata", {{"total_parameters", total_parameters}, {"total_size", total_size}}},
                                  {"weight_map", weight_map}};
    // As transformers writes it: sorted keys, indent 2, ASCII only, a final newline.
    core::write_file_atomic(dir / kIndexName, index.dump(2, ' ', true) + "\n");
    written.insert(std::string(kIndexName));
  }

  // Left behind, an earlier single file would shadow new shards (loaders prefer it), and an
  // earlier index would point into stale shards.
  static const std::regex stale(R"(model(-\d{5}-of-\d{5})?\.safetensors|model\.safetensors\.index\.json)");
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (entry.is_regular_file() && !written.contains(name) && std::regex_match(name, stale))
      std::filesystem::remove(entry.path());
  }
}

}  // namespace vinci::llm
