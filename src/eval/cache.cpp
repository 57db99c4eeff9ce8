#include "eval/cache.h"

#include "core/files.h"

namespace vinci::eval {

std::filesystem::path JsonCache::path(const std::string& key) const {
  return dir_ / key.substr(0, 2) / (key + ".json");
}

std::optional<nlohmann::json> JsonCache::get(const std::string& key) const {
  const auto text = core::try_read_file(path(key));
  if (!text) return std::nullopt;
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void JsonCache::put(const std::string& key, const nlohmann::json& value) const {
  core::write_file_atomic(path(key), value.dump());
}

}  // namespace vinci::eval
