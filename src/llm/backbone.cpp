#include "llm/backbone.h"

#include <array>

#include "core/enum_names.h"

namespace vinci::llm {

namespace {
constexpr std::array<core::EnumName<FinishReason>, 2> kFinishReasons{
    {{FinishReason::stop, "stop"}, {FinishReason::length, "length"}}};
}  // namespace

std::string_view to_string(FinishReason reason) { return core::enum_to_string(kFinishReasons, reason); }

}  // namespace vinci::llm
