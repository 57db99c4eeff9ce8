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
    auto value = nlohmann::json::parse(*text);
    // A hit marks the entry used, so the cache janitor (cache_janitor.h) evicts by last use, not by
    // age; an entry never changes, so its mtime has no other meaning. A failure here costs nothing.
    std::error_code ec;
    std::filesystem::last_write_time(path(key), std::filesystem::file_time_type::clock::now(), ec);
    return value;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void JsonCache::put(const std::string& key, const nlohmann::json& value) const {
  core::write_file_atomic(path(key), value.dump());
}

}  // namespace vinci::eval
