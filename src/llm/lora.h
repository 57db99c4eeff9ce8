// What a backbone trains: nothing, every parameter, or LoRA adapters.
//
// What a backbone trains: nothing, every parameter, or low-rank adapters (LoRA, saved in PEFT's
// adapter format so vLLM and transformers can load them).
#pragma once

#include <string>
#include <vector>

namespace vinci::llm {

struct LoraConfig {
  int rank = 16;
  double alpha = 32.0;  // the update is scaled by alpha / rank, as PEFT does
  std::vector<std::string> target_modules = {"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                             "gate_proj", "up_proj", "down_proj"};
};

struct Training {
  enum class Mode { none, full, lora } mode = Mode::none;
  LoraConfig lora;
  // With a bf16 or fp16 compute dtype, trainable parameters live in fp32 (the master copy the
  // optimizer updates) and are cast for each forward; false trains them in the compute dtype.
  bool fp32_master = true;
  // Keeps only each decoder layer's input for backward and recomputes the layer there: activation
  // memory of one layer instead of all of them, for one more forward pass.
  bool gradient_checkpointing = false;
};

}  // namespace vinci::llm
