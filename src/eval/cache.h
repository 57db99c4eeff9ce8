// The evaluator's on-disk caches, content-addressed, written by atomic renames.
//
// The evaluator's on-disk caches, content-addressed: a key is a hash of everything that decides
// the value, so an entry never goes stale, and concurrent writers only ever race to write the
// same bytes (each write is an atomic rename).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace vinci::eval {

class JsonCache {
 public:
  explicit JsonCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // A corrupt entry reads as a miss; a hit sets the entry's mtime to now (its last use, for the janitor).
  std::optional<nlohmann::json> get(const std::string& key) const;
  void put(const std::string& key, const nlohmann::json& value) const;

 private:
  std::filesystem::path path(const std::string& key) const;
  std::filesystem::path dir_;
};

}  // namespace vinci::eval
