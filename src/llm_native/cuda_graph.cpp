#include "llm_native/cuda_graph.h"

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

}  // namespace

bool CapturedStep::available() { return true; }

std::unique_ptr<CapturedStep> CapturedStep::capture(const std::function<at::Tensor()>& step, at::Tensor& first,
                                                    CapturedStep* share_with) {
  auto captured = std::make_unique<GraphStep>();
  auto current = c10::cuda::getCurrentCUDAStream();
  // Capture must happen off the default stream; the side stream starts after what the current one
  // queued (the inputs' copies), and the current one goes on only after the capture.
  auto side = c10::cuda::getStreamFromPool();
  current.synchronize();
  {
    c10::cuda::CUDAStreamGuard guard(side);
    first = step();  // eager: cuBLAS chooses its algorithms and the allocator warms before capture
    // A pool shared with a live graph stays alive with it (one from graph_pool_handle() would be
    // freed with its last graph and could not be named again).
    captured->graph.capture_begin(share_with ? static_cast<GraphStep*>(share_with)->graph.pool()
                                             : c10::MempoolId_t{0, 0});
    captured->output = step();
    captured->graph.capture_end();
  }
  side.synchronize();
  return captured;
}

#else

bool CapturedStep::available() { return false; }

std::unique_ptr<CapturedStep> CapturedStep::capture(const std::function<at::Tensor()>&, at::Tensor&, CapturedStep*) {
  throw std::logic_error("CUDA graphs are not compiled into this build (libtorch without CUDA runtime headers)");
}

#endif

}  // namespace vinci::llm
