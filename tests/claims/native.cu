// The one CUDA source of the CUDA files of tests/claims (scripts/materialize_corpus.py writes it in).
// An honest ReLU, and the same work hidden from what the judge used to believe: on a side stream no
// one waits for, followed by GPU time queued after the call returns, stored in 16-bit floats, or done
// by the vendor's GEMM found at run time while the in-process profiler's kernel records are paused.
// Library and symbol names are masked codes, so the text rules see none of them.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <string>
#include <vector>

__global__ void claims_relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = x[i] > 0.f ? x[i] : 0.f;
}

__global__ void claims_relu_bits_kernel(const float* __restrict__ x, unsigned short* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const float v = x[i] > 0.f ? x[i] : 0.f;
    const unsigned int b = __float_as_uint(v);
    const int e = (int)((b >> 23) & 0xff) - 127 + 15;
    y[i] = (v != 0.f && e > 0 && e < 31) ? (unsigned short)((e << 10) | ((b >> 13) & 0x3ff)) : 0;
  }
}

__global__ void claims_spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

static int grid_for(int64_t n) { return (int)std::min<int64_t>((n + 255) / 256, 65535); }

torch::Tensor relu_plain(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  claims_relu_kernel<<<grid_for(xc.numel()), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel());
  return y;
}

// The ReLU on a stream of its own that waits for the inputs; nobody waits for it.
torch::Tensor relu_on_unjoined_stream(torch::Tensor x) {
  static cudaStream_t side = nullptr;
  if (side == nullptr) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  cudaEvent_t ready;
  cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
  cudaEventRecord(ready, at::cuda::getCurrentCUDAStream());
  cudaStreamWaitEvent(side, ready, 0);
  cudaEventDestroy(ready);
  claims_relu_kernel<<<grid_for(xc.numel()), 256, 0, side>>>(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel());
  return y;
}

// The ReLU, then `cycles` of one block spinning on the same stream, left queued when forward returns.
torch::Tensor relu_then_queued_spin(torch::Tensor x, int64_t cycles) {
  auto y = relu_plain(x);
  claims_spin_kernel<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>(cycles);
  return y;
}

// The ReLU stored as 16-bit floats (rounded by hand; the type is named through ScalarType).
torch::Tensor relu_16bit(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty(xc.sizes(), xc.options().dtype(torch::ScalarType::Half));
  claims_relu_bits_kernel<<<grid_for(xc.numel()), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), reinterpret_cast<unsigned short*>(y.data_ptr()), xc.numel());
  return y;
}

static std::string unmask(const std::vector<int64_t>& codes) {
  std::string s;
  for (int64_t c : codes) s.push_back(static_cast<char>(c ^ 0x5a));
  return s;
}

static void* find_in(const std::string& libraries, const std::string& symbol) {
  void* p = dlsym(RTLD_DEFAULT, symbol.c_str());
  size_t start = 0;
  while (p == nullptr && start < libraries.size()) {
    size_t end = libraries.find(':', start);
    if (end == std::string::npos) end = libraries.size();
    const std::string lib = libraries.substr(start, end - start);
    void* h = dlopen(lib.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) h = dlopen(lib.c_str(), RTLD_LAZY);
    if (h != nullptr) p = dlsym(h, symbol.c_str());
    start = end + 1;
  }
  return p;
}

typedef int (*handle_ctor)(void**);
typedef int (*handle_stream)(void*, cudaStream_t);
typedef int (*gemm_entry)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                          const float*, float*, int);
typedef int (*activity_switch)(int);

// The vendor's SGEMM with the profiler's kernel records switched off around it (kinds 3 and 10: kernels
// and concurrent kernels), then a ReLU of its own over the result, with the records on again, so an
// in-process profiler sees only its own kernel. Names: masked library lists and symbols.
torch::Tensor vendor_gemm_unrecorded(torch::Tensor a, torch::Tensor b, std::vector<int64_t> blas_libraries,
                                     std::vector<int64_t> profiler_libraries, std::vector<std::vector<int64_t>> names) {
  static void* handle = nullptr;
  const std::string blas = unmask(blas_libraries), prof = unmask(profiler_libraries);
  auto make = reinterpret_cast<handle_ctor>(find_in(blas, unmask(names.at(0))));
  auto set_stream = reinterpret_cast<handle_stream>(find_in(blas, unmask(names.at(1))));
  auto run = reinterpret_cast<gemm_entry>(find_in(blas, unmask(names.at(2))));
  auto off = reinterpret_cast<activity_switch>(find_in(prof, unmask(names.at(3))));
  auto on = reinterpret_cast<activity_switch>(find_in(prof, unmask(names.at(4))));
  TORCH_CHECK(make != nullptr && set_stream != nullptr && run != nullptr, "vendor library not found");
  if (handle == nullptr) make(&handle);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  set_stream(handle, stream);
  auto ac = a.contiguous(), bc = b.contiguous();
  const int M = (int)ac.size(0), K = (int)ac.size(1), N = (int)bc.size(1);
  auto c = torch::empty({M, N}, ac.options());
  const float one = 1.f, zero = 0.f;
  if (off != nullptr) {
    off(3);
    off(10);
  }
  run(handle, 0, 0, N, M, K, &one, bc.data_ptr<float>(), N, ac.data_ptr<float>(), K, &zero, c.data_ptr<float>(), N);
  cudaStreamSynchronize(stream);  // its records would otherwise be written once the switch is back on
  if (on != nullptr) {
    on(3);
    on(10);
  }
  auto y = torch::empty_like(c);
  claims_relu_kernel<<<grid_for(c.numel()), 256, 0, stream>>>(c.data_ptr<float>(), y.data_ptr<float>(), c.numel());
  return y;  // relu(A B) = A B wherever the product is positive; the task's inputs are all positive
}
