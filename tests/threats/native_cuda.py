# --- shared CUDA source: tests/threats/threat_kernels.cu, written in by scripts/materialize_corpus.py ---
_THREAT_CU_DECL = r"""
#include <torch/extension.h>
torch::Tensor relu_cuda(torch::Tensor x);
torch::Tensor relu_on_pool_stream(torch::Tensor x, bool join);
torch::Tensor copy_into_cuda(torch::Tensor dst, torch::Tensor src);
torch::Tensor empty_with_decoy(torch::Tensor x);
torch::Tensor vendor_gemm_dlsym(torch::Tensor a, torch::Tensor b, std::vector<int64_t> libraries, std::vector<int64_t> ctor, std::vector<int64_t> bind, std::vector<int64_t> gemm);
"""
_THREAT_CU = r"""
@threat_kernels.cu@
"""
_cuda = load_inline(name="vinci_threat_cuda_kernels", cpp_sources=_THREAT_CU_DECL, cuda_sources=_THREAT_CU,
                    functions=['relu_cuda', 'relu_on_pool_stream', 'copy_into_cuda', 'empty_with_decoy', 'vendor_gemm_dlsym'],
                    extra_cflags=["-O2"], extra_cuda_cflags=["-O2"], verbose=False)
# --- end of shared CUDA source ---
