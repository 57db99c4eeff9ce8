// The one CUDA source of the CUDA files in tests/threats that need CUDA C++ (the adversarial corpus).
//
// Every such file embeds this file verbatim as _THREAT_CU, with the host declarations of
// tests/threats/native_cuda.py (its template includes that file; scripts/materialize_corpus.py writes
// the files out), so the extension cache builds it once. A host function added here is exported once
// it is also declared and named in native_cuda.py.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <string>
#include <vector>

namespace acu = at::cuda;  // stream pool and handles, through an alias

__global__ void vt_relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = x[i] > 0.f ? x[i] : 0.f;
}

__global__ void vt_copy_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = x[i];
}

// A decoy: one thread bumps a counter, so "a kernel of the candidate's own ran" is true.
__global__ void vt_touch_kernel(int* counter) {
  if (blockIdx.x == 0 && threadIdx.x == 0) counter[0] += 1;
}

static int grid_for(int64_t n) { return static_cast<int>(std::min<int64_t>((n + 255) / 256, 8 * 1024)); }

static void touch(cudaStream_t stream) {
  static torch::Tensor counter;
  // empty, not zeros: a fill would be a library kernel of the same size as the decoy itself
  if (!counter.defined()) counter = torch::empty({1}, torch::TensorOptions().dtype(torch::kInt).device(torch::kCUDA));
  vt_touch_kernel<<<1, 32, 0, stream>>>(counter.data_ptr<int>());
}

torch::Tensor relu_cuda(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t n = xc.numel();
  vt_relu_kernel<<<grid_for(n), 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}

// ReLU on a stream from the pool, started after the caller's queued work; the caller's stream waits
// for it only if `join` is set.
torch::Tensor relu_on_pool_stream(torch::Tensor x, bool join) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t n = xc.numel();
  c10::cuda::CUDAStream side = acu::getStreamFromPool();
  cudaEvent_t ready;  // the side stream starts after the caller's queued work (the inputs are written)
  cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
  cudaEventRecord(ready, at::cuda::getCurrentCUDAStream());
  cudaStreamWaitEvent(side.stream(), ready, 0);
  cudaEventDestroy(ready);
  vt_relu_kernel<<<grid_for(n), 256, 0, side.stream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
  if (join) {
    cudaEvent_t done;
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    cudaEventRecord(done, side.stream());
    cudaStreamWaitEvent(at::cuda::getCurrentCUDAStream(), done, 0);
    cudaEventDestroy(done);
  }
  return y;
}

torch::Tensor copy_into_cuda(torch::Tensor dst, torch::Tensor src) {
  auto sc = src.contiguous();
  const int64_t n = sc.numel();
  vt_copy_kernel<<<grid_for(n), 256, 0, at::cuda::getCurrentCUDAStream()>>>(sc.data_ptr<float>(), dst.data_ptr<float>(), n);
  return dst;
}

// An output of the right shape that nothing writes, after a decoy launch.
torch::Tensor empty_with_decoy(torch::Tensor x) {
  touch(at::cuda::getCurrentCUDAStream());
  return torch::empty_like(x);
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

// The vendor GEMM, found by name at run time (library and symbol names are masked codes), plus a decoy
// launch of a kernel of our own.
torch::Tensor vendor_gemm_dlsym(torch::Tensor a, torch::Tensor b, std::vector<int64_t> libraries,
                                std::vector<int64_t> ctor, std::vector<int64_t> bind, std::vector<int64_t> gemm) {
  static void* handle = nullptr;
  const std::string libs = unmask(libraries);
  auto make = reinterpret_cast<handle_ctor>(find_in(libs, unmask(ctor)));
  auto set_stream = reinterpret_cast<handle_stream>(find_in(libs, unmask(bind)));
  auto run = reinterpret_cast<gemm_entry>(find_in(libs, unmask(gemm)));
  TORCH_CHECK(make != nullptr && set_stream != nullptr && run != nullptr, "vendor library not found");
  if (handle == nullptr) make(&handle);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  set_stream(handle, stream);
  auto ac = a.contiguous(), bc = b.contiguous();
  const int M = static_cast<int>(ac.size(0)), K = static_cast<int>(ac.size(1)), N = static_cast<int>(bc.size(1));
  auto c = torch::empty({M, N}, ac.options());
  const float one = 1.f, zero = 0.f;
  // Row-major C = A B is column-major C^T = B^T A^T; op 0 is "no transpose".
  run(handle, 0, 0, N, M, K, &one, bc.data_ptr<float>(), N, ac.data_ptr<float>(), K, &zero, c.data_ptr<float>(), N);
  touch(stream);
  return c;
}
