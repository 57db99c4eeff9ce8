// A computation replayed from a CUDA graph. At small batch a decode step is ~30 small kernels per
// layer, and launching them costs more than running them; a graph launches the whole step at once
// (gpt-fast reaches ~70% of the memory roofline this way). Compiled in where libtorch has CUDA and
// the CUDA runtime's headers are found (cmake/VinciTorch.cmake); elsewhere available() is false.
#pragma once

#include <functional>
#include <memory>

#include <ATen/core/Tensor.h>

namespace vinci::llm {

class CapturedStep {
 public:
  static bool available();
  // Runs `step` once eagerly on a side stream and returns its result in `first`, then captures it:
  // each replay() runs it again on the current stream. `step` must read its inputs from tensors
  // that outlive the capture and that the caller refills in place before each replay.
  // With share_with, the new graph takes its memory from that one's pool: replays never overlap,
  // so the graphs of many batch buckets need one set of intermediate buffers, not one each (vLLM
  // shares one the same way). Hence replay()'s contract.
  static std::unique_ptr<CapturedStep> capture(const std::function<at::Tensor()>& step, at::Tensor& first,
                                               CapturedStep* share_with = nullptr);
  virtual ~CapturedStep() = default;
  // The captured step's output, the same tensor every time: read it before the next replay of this
  // or any other captured step (they share one memory pool).
  virtual at::Tensor replay() = 0;
};

}  // namespace vinci::llm
