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
    const auto generated = [this](std::span<const GenerationRequest> asked) {
      auto results = generate(asked);
      if (results.size() != asked.size())
        throw std::logic_error("the backbone returned a result count unlike the request count");
      return results;
    };
    try {
      auto results = generated(requests);
      for (size_t i = 0; i < round.size(); ++i) feed.complete(round[i].ticket, std::move(results[i]));
    } catch (...) {
      if (round.size() == 1) {
        feed.fail(round.front().ticket, std::current_exception());
        continue;
      }
      for (const auto& a : round) {
        try {
          feed.complete(a.ticket, std::move(generated(std::span<const GenerationRequest>(a.request, 1)).front()));
        } catch (...) {
          feed.fail(a.ticket, std::current_exception());
        }
      }
    }
  }
}

}  // namespace vinci::llm
