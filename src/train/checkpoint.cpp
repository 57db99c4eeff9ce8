#include "train/checkpoint.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "core/files.h"
#include "llm/safetensors.h"

namespace vinci::train {

namespace fs = std::filesystem;

namespace {

llm::DType file_dtype(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return llm::DType::f32;
    case at::kDouble: return llm::DType::f64;
    case at::kBFloat16: return llm::DType::bf16;
    case at::kHalf: return llm::DType::f16;
    case at::kLong: return llm::DType::i64;
    default: throw std::logic_error(fmt::format("optimizer state of dtype {} cannot be saved", c10::toString(t)));
  }
}

at::ScalarType scalar_type(llm::DType t, const fs::path& file) {
  switch (t) {
    case llm::DType::f32: return at::kFloat;
    case llm::DType::f64: return at::kDouble;
    case llm::DType::bf16: return at::kBFloat16;
    case llm::DType::f16: return at::kHalf;
    case llm::DType::i64: return at::kLong;
    default:
      throw std::runtime_error(
          fmt::format("{}: unexpected dtype {} in optimizer state", file.string(), llm::dtype_name(t)));
  }
}

}  // namespace

void save_checkpoint(const fs::path& dir, int64_t step, const llm::TrainableBackbone& backbone, const AdamW& optimizer,
                     const nlohmann::json& trainer_state) {
  const std::string name = fmt::format("step-{}", step);
  const fs::path staging = dir / (name + ".partial"), final_dir = dir / name;
  fs::remove_all(staging);
  fs::create_directories(staging);
  backbone.save(staging / "model");
  std::vector<at::Tensor> keep_alive;
  std::vector<llm::TensorToWrite> tensors;
  for (const auto& [key, tensor] : optimizer.state()) {
    keep_alive.push_back(tensor.detach().cpu().contiguous());
    const auto& t = keep_alive.back();
    tensors.push_back({key, file_dtype(t.scalar_type()), t.sizes().vec(), t.data_ptr(), t.nbytes()});
  }
  llm::write_safetensors(staging / "optimizer.safetensors", tensors);
  nlohmann::json state = trainer_state;
  state["step"] = step;
  core::write_file_atomic(staging / "trainer.json", state.dump(2) + "\n");
  fs::remove_all(final_dir);
  fs::rename(staging, final_dir);
  core::write_file_atomic(dir / "latest", name + "\n");
}

namespace {

std::optional<nlohmann::json> try_trainer_state(const fs::path& checkpoint) {
  const auto text = core::try_read_file(checkpoint / "trainer.json");
  if (!text) return std::nullopt;
  auto state = nlohmann::json::parse(*text, nullptr, false);
  if (state.is_discarded() || !state.is_object() || !state.contains("step")) return std::nullopt;
  return state;
}

// Where a resume can go on from when `broken` cannot be read: the newest other step-<N> folder
// beside it whose trainer.json reads, named in a sentence, or "" when there is none.
std::string previous_checkpoint_hint(const fs::path& broken) {
  const fs::path dir = broken.parent_path();
  std::optional<std::pair<int64_t, fs::path>> best;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind("step-", 0) != 0 || e.path() == broken) continue;
    const auto state = try_trainer_state(e.path());
    if (!state || !(*state)["step"].is_number_integer()) continue;
    const int64_t step = (*state)["step"].get<int64_t>();
    if (!best || step > best->first) best = {step, e.path()};
  }
  if (!best) return "";
  return fmt::format("; the previous checkpoint {} reads: write '{}' into {} to resume from it", best->second.string(),
                     best->second.filename().string(), (dir / "latest").string());
}

}  // namespace

nlohmann::json read_trainer_state(const fs::path& checkpoint) {
  const fs::path file = checkpoint / "trainer.json";
  if (auto state = try_trainer_state(checkpoint)) return *state;
  throw std::runtime_error(fmt::format(
      "{}: {}{}", file.string(),
      fs::exists(file) ? (fs::file_size(file) == 0 ? "empty" : "not a trainer state (torn or edited)") : "missing",
      previous_checkpoint_hint(checkpoint)));
}

std::optional<fs::path> latest_checkpoint(const fs::path& dir) {
  const auto name = core::try_read_file(dir / "latest");
  if (!name) return std::nullopt;
  std::string trimmed = *name;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) trimmed.pop_back();
  const fs::path path = dir / trimmed;
  if (!fs::exists(path / "trainer.json"))
    throw std::runtime_error(fmt::format("{} names {}, which holds no trainer.json{}", (dir / "latest").string(),
                                         path.string(), previous_checkpoint_hint(path)));
  return path;
}

namespace {

void load_weights(const fs::path& checkpoint, llm::TrainableBackbone& backbone, AdamW& optimizer) {
  backbone.load(checkpoint / "model");
  const fs::path file = checkpoint / "optimizer.safetensors";
  const auto mapped = llm::SafetensorsFile::open(file);
  std::map<std::string, at::Tensor> state;
  for (const auto& view : mapped.tensors())
    state[view.name] = at::from_blob(const_cast<std::byte*>(view.data), view.shape,
                                     at::TensorOptions().dtype(scalar_type(view.dtype, file)))
                           .clone();
  try {
    optimizer.load_state(state);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(fmt::format("{}: {}", file.string(), e.what()));
  }
}

}  // namespace

nlohmann::json load_checkpoint(const fs::path& checkpoint, llm::TrainableBackbone& backbone, AdamW& optimizer) {
  nlohmann::json state = read_trainer_state(checkpoint);
  try {
    load_weights(checkpoint, backbone, optimizer);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}{}", e.what(), previous_checkpoint_hint(checkpoint)));
  }
  return state;
}

}  // namespace vinci::train
