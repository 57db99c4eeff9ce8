#include "llm/backbone.h"

namespace vinci::llm {

const char* finish_reason_name(FinishReason reason) { return reason == FinishReason::kStop ? "stop" : "length"; }

}  // namespace vinci::llm
