_NATIVE_CU = r"""
@native.cu@
"""
_NATIVE_CU_DECLS = r"""
#include <torch/extension.h>
torch::Tensor relu_plain(torch::Tensor x);
torch::Tensor relu_on_unjoined_stream(torch::Tensor x);
torch::Tensor relu_then_queued_spin(torch::Tensor x, int64_t cycles);
torch::Tensor relu_16bit(torch::Tensor x);
torch::Tensor vendor_gemm_unrecorded(torch::Tensor a, torch::Tensor b, std::vector<int64_t> blas_libraries,
                                     std::vector<int64_t> profiler_libraries, std::vector<std::vector<int64_t>> names);
"""
_cuda = load_inline(name="vinci_claims_cuda", cpp_sources=_NATIVE_CU_DECLS, cuda_sources=_NATIVE_CU,
                    functions=["relu_plain", "relu_on_unjoined_stream", "relu_then_queued_spin", "relu_16bit",
                               "vendor_gemm_unrecorded"],
                    extra_cuda_cflags=["-O3"], verbose=False)
