#include "llm/cuda_graph.h"

#include <stdexcept>

#ifdef VINCI_WITH_CUDA_GRAPHS
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace vinci::llm {

#ifdef VINCI_WITH_CUDA_GRAPHS

namespace {

class GraphStep final : public CapturedStep {
 public:
  at::Tensor replay() override {
    graph.replay();
    return output;
  }
  at::cuda::CUDAGraph graph;
  at::Tensor output;
};

// One memory pool for every graph: a graph's intermediates live only while it replays, and
// replays never overlap, so the graphs of many batch buckets need one set of buffers, not one each
// (vLLM shares one the same way). A replay's output stays allocated, so the graphs captured after
// it never take its memory; a later replay of another graph may, hence replay()'s contract.
c10::MempoolId_t shared_pool() {
  static const c10::MempoolId_t pool = at::cuda::graph_pool_handle();
  return pool;
}

}  // namespace

bool CapturedStep::available() { return true; }

std::unique_ptr<CapturedStep> CapturedStep::capture(const std::function<at::Tensor()>& step, at::Tensor& first) {
  auto captured = std::make_unique<GraphStep>();
  auto current = c10::cuda::getCurrentCUDAStream();
  // Capture must happen off the default stream; the side stream starts after what the current one
  // queued (the inputs' copies), and the current one goes on only after the capture.
  auto side = c10::cuda::getStreamFromPool();
  current.synchronize();
  {
    c10::cuda::CUDAStreamGuard guard(side);
    first = step();  // eager: cuBLAS chooses its algorithms and the allocator warms before capture
    captured->graph.capture_begin(shared_pool());
    captured->output = step();
    captured->graph.capture_end();
  }
  side.synchronize();
  return captured;
}

#else

bool CapturedStep::available() { return false; }

std::unique_ptr<CapturedStep> CapturedStep::capture(const std::function<at::Tensor()>&, at::Tensor&) {
  throw std::logic_error("CUDA graphs are not compiled into this build (libtorch without CUDA runtime headers)");
}

#endif

}  // namespace vinci::llm
