#include "llm/backbone.h"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "core/enum_names.h"

namespace vinci::llm {

namespace {
constexpr std::array<core::EnumName<FinishReason>, 2> kFinishReasons{
    {{FinishReason::stop, "stop"}, {FinishReason::length, "length"}}};
}  // namespace

std::string_view to_string(FinishReason reason) { return core::enum_to_string(kFinishReasons, reason); }

void Backbone::serve(RequestFeed& feed, const ServeLimits& limits) {
  for (;;) {
    const auto round = feed.admit(std::max<size_t>(1, limits.max_batch), /*idle=*/true);
    if (round.empty()) return;
    std::vector<GenerationRequest> requests;
    for (const auto& a : round) requests.push_back(*a.request);
    try {
      auto results = generate(requests);
      if (results.size() != requests.size())
        throw std::logic_error("the backbone returned a result count unlike the request count");
      for (size_t i = 0; i < round.size(); ++i) feed.complete(round[i].ticket, std::move(results[i]));
    } catch (...) {
      if (round.size() == 1) {
        feed.fail(round.front().ticket, std::current_exception());
        continue;
      }
      for (const auto& a : round) {
        try {
          auto alone = generate(std::span<const GenerationRequest>(a.request, 1));
          if (alone.size() != 1)
            throw std::logic_error("the backbone returned a result count unlike the request count");
          feed.complete(a.ticket, std::move(alone.front()));
        } catch (...) {
          feed.fail(a.ticket, std::current_exception());
        }
      }
    }
  }
}

}  // namespace vinci::llm
