#include "core/hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fmt/format.h>

namespace vinci::core {

static std::string hex(XXH128_hash_t h) { return fmt::format("{:016x}{:016x}", h.high64, h.low64); }

std::string content_hash(std::string_view data) { return hex(XXH3_128bits(data.data(), data.size())); }

std::string content_hash(std::initializer_list<std::string_view> parts) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  for (std::string_view p : parts) {
    const uint64_t n = p.size();
    XXH3_128bits_update(state, &n, sizeof n);
    XXH3_128bits_update(state, p.data(), p.size());
  }
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return hex(h);
}

}  // namespace vinci::core
