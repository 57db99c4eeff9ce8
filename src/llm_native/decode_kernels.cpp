#include "llm_native/decode_kernels.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "core/files.h"
#include "core/hash.h"

#ifdef VINCI_WITH_DECODE_KERNELS
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <nvrtc.h>
#endif

namespace vinci::llm {
namespace {

constexpr int kAttentionThreads = 256;
// A block of attention takes up to kHeadTile query heads of a group sharing a kv head.
constexpr int64_t kHeadTile = 8;
// A split's keys: fewer than kMinSplitKeys leave a block mostly overhead; kMaxSplitKeys bounds its
// shared memory, (tile · dim + keys + max(tile · keys, 256 threads · 8 partial sums)) floats: 45 KiB
// at 8 heads of dim 256, within the 48 KiB a kernel gets without opting in.
constexpr int64_t kMinSplitKeys = 64, kMaxSplitKeys = 1024;

std::atomic<bool> g_enabled{true};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// attention_split's: the queries, the slots, then the scores or the values' partial sums.
int64_t attention_shared_bytes(int64_t tile, int64_t head_dim, int64_t split_keys) {
  return (tile * head_dim + split_keys + std::max(tile * split_keys, int64_t{kAttentionThreads} * 8)) * 4;
}

// Attention is built for each of these head sizes (a template argument, so that a key's loads unroll
// into one batch in flight): kSource's ATTENTION(dim) lines and kKernelNames follow this list.
constexpr int64_t kHeadDims[] = {8, 16, 32, 64, 128, 256};
constexpr int kHeadDimCount = static_cast<int>(std::size(kHeadDims));

bool attention_takes(int64_t head_dim) { return std::ranges::find(kHeadDims, head_dim) != std::end(kHeadDims); }

}  // namespace

void DecodeKernels::set_enabled(bool enabled) { g_enabled = enabled; }

bool DecodeKernels::fits(int64_t hidden, int64_t inter, int64_t head_dim) {
  return hidden % 8 == 0 && inter % 8 == 0 && attention_takes(head_dim);
}

int64_t DecodeKernels::attention_head_tile(int64_t rows, int64_t heads, int64_t kv_heads, int64_t head_dim,
                                           int64_t kv_length, int64_t l2_bytes) {
  const int64_t kv_bytes = rows * kv_length * kv_heads * head_dim * 4;
  return kv_bytes > l2_bytes / 4 ? std::min(heads / kv_heads, kHeadTile) : 1;
}

DecodeKernels::AttentionSplit DecodeKernels::attention_split(int64_t blocks_per_split, int64_t kv_length,
                                                             int64_t sm_count) {
  const int64_t blocks = std::max<int64_t>(blocks_per_split, 1), keys = std::max<int64_t>(kv_length, 1);
  int64_t splits = std::clamp(ceil_div(2 * sm_count, blocks), int64_t{1}, ceil_div(keys, kMinSplitKeys));
  splits = std::max(splits, ceil_div(keys, kMaxSplitKeys));
  const int64_t split_keys = ceil_div(keys, splits);
  return {ceil_div(keys, split_keys), split_keys};
}

#ifdef VINCI_WITH_DECODE_KERNELS

namespace {

// bf16 travels as its 16 bits, so the source needs no header (NVRTC has no include path here).
// Every conversion rounds to nearest even, as ATen's does.
constexpr const char* kSource = R"CUDA(
typedef unsigned short bf16;
#define NEG_INF __int_as_float(0xff800000u)
__device__ __forceinline__ float to_float(bf16 v) { return __uint_as_float(((unsigned)v) << 16); }
__device__ __forceinline__ bf16 to_bf16(float f) {
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (bf16)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (bf16)(u >> 16);
}
__device__ __forceinline__ float round_bf16(float f) { return to_float(to_bf16(f)); }
// Eight bf16 in 16 bytes, the unit every kernel loads and stores: one instruction a thread.
__device__ __forceinline__ void unpack8(uint4 p, float* f) {
  const unsigned w[4] = {p.x, p.y, p.z, p.w};
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}
__device__ __forceinline__ uint4 pack8(const float* f) {
  unsigned w[4];
  for (int i = 0; i < 4; ++i) w[i] = (unsigned)to_bf16(f[2 * i]) | ((unsigned)to_bf16(f[2 * i + 1]) << 16);
  uint4 p;
  p.x = w[0];
  p.y = w[1];
  p.z = w[2];
  p.w = w[3];
  return p;
}

// Each of count values' block total (max when take_max), in every thread; scratch holds count · 32
// floats. blockDim.x is a multiple of 32.
template <int count>
__device__ void block_reduce_each(float* v, bool take_max, float* scratch) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
#pragma unroll
  for (int g = 0; g < count; ++g)
    for (int o = 16; o > 0; o >>= 1) {
      const float other = __shfl_xor_sync(0xffffffffu, v[g], o);
      v[g] = take_max ? fmaxf(v[g], other) : v[g] + other;
    }
  __syncthreads();  // scratch may still be read by the previous reduction
  if (lane == 0)
    for (int g = 0; g < count; ++g) scratch[g * 32 + warp] = v[g];
  __syncthreads();
#pragma unroll
  for (int g = 0; g < count; ++g) {
    v[g] = lane < warps ? scratch[g * 32 + lane] : (take_max ? NEG_INF : 0.f);
    for (int o = 16; o > 0; o >>= 1) {
      const float other = __shfl_xor_sync(0xffffffffu, v[g], o);
      v[g] = take_max ? fmaxf(v[g], other) : v[g] + other;
    }
  }
}

// One value's; scratch holds 32 floats.
__device__ float block_reduce(float v, bool take_max, float* scratch) {
  block_reduce_each<1>(&v, take_max, scratch);
  return v;
}

// One block a row; n is a multiple of 8.
extern "C" __global__ void add_rms_norm(bf16* __restrict__ residual, const bf16* __restrict__ x,
                                        const bf16* __restrict__ weight, bf16* __restrict__ out, int n, float eps) {
  __shared__ float scratch[32];
  const long long row = blockIdx.x;
  uint4* r = (uint4*)(residual + row * n);
  const uint4* in = (const uint4*)(x + row * n);
  const uint4* w = (const uint4*)weight;
  uint4* o = (uint4*)(out + row * n);
  const int chunks = n / 8;
  float squares = 0.f;
  for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
    float h[8], add[8];
    unpack8(r[c], h);
    unpack8(in[c], add);
    for (int e = 0; e < 8; ++e) {
      h[e] = round_bf16(h[e] + add[e]);
      squares += h[e] * h[e];
    }
    r[c] = pack8(h);
  }
  const float inv = rsqrtf(block_reduce(squares, false, scratch) / (float)n + eps);
  for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
    float h[8], g[8];
    unpack8(r[c], h);
    unpack8(w[c], g);
    for (int e = 0; e < 8; ++e) h[e] = h[e] * inv * g[e];
    o[c] = pack8(h);
  }
}

// One block per (row, head of q, k or v), one thread per rotated pair (i, i + dim/2).
extern "C" __global__ void rope_write_kv(const bf16* __restrict__ qkv, const long long* positions,
                                         const float* inv_freq, const long long* slots, bf16* q_out, bf16* keys,
                                         bf16* values, int heads, int kv_heads, int dim) {
  const int row = blockIdx.x, head = blockIdx.y, half = dim / 2;
  const bf16* in = qkv + ((long long)row * (heads + 2 * kv_heads) + head) * dim;
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    if (head >= heads + kv_heads) {
      bf16* v = values + (slots[row] * kv_heads + (head - heads - kv_heads)) * dim;
      v[i] = in[i];
      v[i + half] = in[i + half];
      continue;
    }
    const float angle = (float)positions[row] * inv_freq[i];
    const float c = round_bf16(cosf(angle)), s = round_bf16(sinf(angle));
    const float a = to_float(in[i]), b = to_float(in[i + half]);
    // x·cos rounds on its own, then the rolled half's product is added and rounded (mul, addcmul).
    const bf16 first = to_bf16(round_bf16(a * c) - b * s), second = to_bf16(round_bf16(b * c) + a * s);
    bf16* out = head < heads ? q_out + ((long long)row * heads + head) * dim
                             : keys + (slots[row] * kv_heads + (head - heads)) * dim;
    out[i] = first;
    out[i + half] = second;
  }
}

// Flash-decoding: one block per (row, kv head, tile of up to 8 of its query heads, split of the
// keys), so that a step at batch 1 spreads over the SMs (one block per head kept 28 of the H200's 132
// busy, 19 us a layer), and, with tiles of several heads, each key and value is loaded once for the
// query heads that share it (see DecodeKernels::attention_head_tile); attention_combine then merges
// the splits. Shared memory: the block's queries (tile · dim floats), the split's keys' pool slots
// (split_keys ints), then their scores a head in turn (tile · split_keys floats), which the values'
// partial sums reuse (phases · dim floats). A thread scores whole keys; for the values, thread t sums
// 8 dimensions (chunk t % chunks) over every phases-th key, so each iteration loads 16 independent
// bytes. dim is a template argument so that a key's loads unroll into one batch in flight, and so is
// most, the largest tile, which sizes the per-head registers: a build for tiles of 1 keeps the
// one-head kernel as lean as it was before tiles (8.5 us a layer at batch 1 against 11.2 us for the
// build for 8 running tiles of 1). partial[row, head, split] holds the unnormalised sums (dim
// floats), the split's largest score and its sum of exponentials.
template <int dim, int most>
__device__ void attention_split(const bf16* __restrict__ q, const bf16* __restrict__ keys,
                                const bf16* __restrict__ values, const long long* block_table, long long table_stride,
                                const long long* positions, int block_tokens, int kv_length, int split_keys, int heads,
                                int kv_heads, int tile, float scale, float* __restrict__ partial) {
  extern __shared__ float shared[];
  __shared__ float scratch[most * 32];
  const int group = heads / kv_heads, tiles = (group + tile - 1) / tile;
  const int row = blockIdx.x, kv_head = blockIdx.y / tiles, split = blockIdx.z;
  const int first = kv_head * group + (blockIdx.y % tiles) * tile, n = min(tile, (kv_head + 1) * group - first);
  float* qs = shared;
  int* slots = (int*)(shared + tile * dim);
  float* scores = shared + tile * dim + split_keys;
  const int begin = split * split_keys, end = min(min((int)positions[row] + 1, kv_length), begin + split_keys);
  const int count = max(end - begin, 0);
  const long long* table = block_table + row * table_stride;
  const bf16* q_rows = q + ((long long)row * heads + first) * dim;
  for (int i = threadIdx.x; i < n * dim; i += blockDim.x) qs[i] = to_float(q_rows[i]);
  for (int j = threadIdx.x; j < count; j += blockDim.x)
    slots[j] = (int)(table[(begin + j) / block_tokens] * block_tokens + (begin + j) % block_tokens);
  __syncthreads();
  constexpr int chunks = dim / 8, key_unroll = most == 1 ? chunks : 4, value_unroll = most == 1 ? 4 : 2;
  float top[most], total[most];
#pragma unroll
  for (int g = 0; g < most; ++g) top[g] = NEG_INF, total[g] = 0.f;
  for (int j = threadIdx.x; j < count; j += blockDim.x) {
    const uint4* k = (const uint4*)(keys + ((long long)slots[j] * kv_heads + kv_head) * dim);
    float dot[most];
#pragma unroll
    for (int g = 0; g < most; ++g) dot[g] = 0.f;
#pragma unroll key_unroll
    for (int c = 0; c < chunks; ++c) {
      float f[8];
      unpack8(k[c], f);
#pragma unroll
      for (int g = 0; g < most; ++g)
        if (g < n)
          for (int e = 0; e < 8; ++e) dot[g] += qs[g * dim + 8 * c + e] * f[e];
    }
#pragma unroll
    for (int g = 0; g < most; ++g)
      if (g < n) {
        scores[g * split_keys + j] = dot[g] * scale;
        top[g] = fmaxf(top[g], dot[g] * scale);
      }
  }
  block_reduce_each<most>(top, true, scratch);
  for (int j = threadIdx.x; j < count; j += blockDim.x)
#pragma unroll
    for (int g = 0; g < most; ++g)
      if (g < n) {
        const float p = expf(scores[g * split_keys + j] - top[g]);
        scores[g * split_keys + j] = p;
        total[g] += p;
      }
  block_reduce_each<most>(total, false, scratch);  // its barriers publish the scores
  const int chunk = threadIdx.x % chunks, phase = threadIdx.x / chunks, phases = blockDim.x / chunks;
  float sum[most][8];
#pragma unroll
  for (int g = 0; g < most; ++g)
    for (int e = 0; e < 8; ++e) sum[g][e] = 0.f;
#pragma unroll value_unroll
  for (int j = phase; j < count; j += phases) {
    float f[8];
    unpack8(((const uint4*)(values + ((long long)slots[j] * kv_heads + kv_head) * dim))[chunk], f);
#pragma unroll
    for (int g = 0; g < most; ++g)
      if (g < n) {
        const float p = scores[g * split_keys + j];
        for (int e = 0; e < 8; ++e) sum[g][e] += p * f[e];
      }
  }
#pragma unroll
  for (int g = 0; g < most; ++g) {
    if (g >= n) break;  // n is the block's, so every thread reaches the same barriers
    __syncthreads();    // the scores, or the last head's partial sums, read before they are overwritten
    for (int e = 0; e < 8; ++e) scores[phase * dim + 8 * chunk + e] = sum[g][e];
    __syncthreads();
    float* out = partial + (((long long)row * heads + first + g) * gridDim.z + split) * (dim + 2);
    for (int d = threadIdx.x; d < dim; d += blockDim.x) {
      float total_d = 0.f;
      for (int p = 0; p < phases; ++p) total_d += scores[p * dim + d];
      out[d] = total_d;
    }
    if (threadIdx.x == 0) {
      out[dim] = top[g];  // -inf for a split past the row's keys: it then weighs nothing
      out[dim + 1] = total[g];
    }
  }
}

// One block per (row, head), one thread per dimension: the splits rescaled to the largest score.
template <int dim>
__device__ void attention_combine(const float* __restrict__ partial, int splits, int heads, bf16* __restrict__ out) {
  const int row = blockIdx.x, head = blockIdx.y, d = threadIdx.x;
  const float* p = partial + ((long long)row * heads + head) * splits * (dim + 2);
  float top = NEG_INF;
  for (int s = 0; s < splits; ++s) top = fmaxf(top, p[s * (dim + 2) + dim]);
  float weight_sum = 0.f, value = 0.f;
  for (int s = 0; s < splits; ++s) {
    const float split_top = p[s * (dim + 2) + dim];
    if (split_top == NEG_INF) continue;
    const float w = expf(split_top - top);
    weight_sum += w * p[s * (dim + 2) + dim + 1];
    value += w * p[s * (dim + 2) + d];
  }
  out[((long long)row * heads + head) * dim + d] = to_bf16(value / weight_sum);
}

#define ATTENTION_SPLIT(name, dim, most)                                                                         \
  extern "C" __global__ void name##_##dim(                                                                        \
      const bf16* q, const bf16* keys, const bf16* values, const long long* block_table, long long table_stride,  \
      const long long* positions, int block_tokens, int kv_length, int split_keys, int heads, int kv_heads,       \
      int tile, float scale, float* partial) {                                                                    \
    attention_split<dim, most>(q, keys, values, block_table, table_stride, positions, block_tokens, kv_length,   \
                               split_keys, heads, kv_heads, tile, scale, partial);                                \
  }
#define ATTENTION(dim)                                                                                            \
  ATTENTION_SPLIT(attention_head, dim, 1)                                                                         \
  ATTENTION_SPLIT(attention_group, dim, 8)                                                                        \
  extern "C" __global__ void attention_combine_##dim(const float* partial, int splits, int heads, bf16* out) {   \
    attention_combine<dim>(partial, splits, heads, out);                                                          \
  }
ATTENTION(8)
ATTENTION(16)
ATTENTION(32)
ATTENTION(64)
ATTENTION(128)
ATTENTION(256)

// One thread per 8 outputs; inter is a multiple of 8.
extern "C" __global__ void silu_mul(const bf16* __restrict__ gate_up, bf16* __restrict__ out, int inter,
                                    long long chunks_total) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= chunks_total) return;
  const int per_row = inter / 8;
  const long long row = i / per_row, chunk = i % per_row;
  float gate[8], up[8];
  unpack8(((const uint4*)(gate_up + row * 2 * inter))[chunk], gate);
  unpack8(((const uint4*)(gate_up + row * 2 * inter + inter))[chunk], up);
  for (int e = 0; e < 8; ++e) gate[e] = round_bf16(gate[e] / (1.f + expf(-gate[e]))) * up[e];
  ((uint4*)out)[i] = pack8(gate);
}
)CUDA";

constexpr const char* kKernelNames[] = {"add_rms_norm",         "rope_write_kv",         "silu_mul",
                                        "attention_head_8",     "attention_head_16",     "attention_head_32",
                                        "attention_head_64",    "attention_head_128",    "attention_head_256",
                                        "attention_group_8",    "attention_group_16",    "attention_group_32",
                                        "attention_group_64",   "attention_group_128",   "attention_group_256",
                                        "attention_combine_8",  "attention_combine_16",  "attention_combine_32",
                                        "attention_combine_64", "attention_combine_128", "attention_combine_256"};
// The attention kernels follow kHeadDims' order.
enum Kernel : int {
  kAddRmsNorm,
  kRopeWriteKv,
  kSiluMul,
  kAttentionHead,
  kAttentionGroup = kAttentionHead + kHeadDimCount,
  kAttentionCombine = kAttentionGroup + kHeadDimCount,
  kKernels = kAttentionCombine + kHeadDimCount
};

Kernel for_head_dim(Kernel first, int64_t head_dim) {
  const auto* found = std::find(std::begin(kHeadDims), std::end(kHeadDims), head_dim);
  return static_cast<Kernel>(first + (found - std::begin(kHeadDims)));
}

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(status)));
}

void check_nvrtc(nvrtcResult status, const char* what) {
  if (status != NVRTC_SUCCESS) throw std::runtime_error(fmt::format("{}: {}", what, nvrtcGetErrorString(status)));
}

}  // namespace

struct DecodeKernels::Compiled {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernels[kKernels] = {};
  int64_t sm_count = 0, l2_bytes = 0;
};

std::string DecodeKernels::compile(int major, int minor) {
  nvrtcProgram program = nullptr;
  check_nvrtc(nvrtcCreateProgram(&program, kSource, "vinci_decode_kernels.cu", 0, nullptr, nullptr),
              "nvrtcCreateProgram");
  const std::string arch = fmt::format("--gpu-architecture=sm_{}{}", major, minor);
  const char* options[] = {arch.c_str(), "--std=c++17"};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 2, options);
  std::string cubin;
  if (compiled == NVRTC_SUCCESS) {
    size_t size = 0;
    check_nvrtc(nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
    cubin.resize(size);
    check_nvrtc(nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN");
  } else {
    size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    nvrtcDestroyProgram(&program);
    throw std::runtime_error(fmt::format("NVRTC ({}): {}\n{}", arch, nvrtcGetErrorString(compiled), log));
  }
  nvrtcDestroyProgram(&program);
  return cubin;
}

namespace {
constexpr std::string_view kElfMagic = "\177ELF";
}  // namespace

std::string DecodeKernels::compile_cached(int major, int minor, const std::filesystem::path& dir) {
  int nvrtc_major = 0, nvrtc_minor = 0;
  check_nvrtc(nvrtcVersion(&nvrtc_major, &nvrtc_minor), "nvrtcVersion");
  const auto path =
      dir / (core::content_hash({kSource, fmt::format("sm_{}{} nvrtc {}.{}", major, minor, nvrtc_major, nvrtc_minor)}) +
             ".cubin");
  if (auto cached = core::try_read_file(path); cached && cached->starts_with(kElfMagic)) return *cached;
  std::string cubin = compile(major, minor);
  try {
    core::write_file_atomic(path, cubin);
  } catch (const std::exception&) {
    // A cache that cannot be written costs the next process the compile again, nothing more.
  }
  return cubin;
}

namespace {

std::shared_ptr<const DecodeKernels::Compiled> compile_for(int device) {
  cudaDeviceProp properties{};
  check_cuda(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  const std::string cubin =
      DecodeKernels::compile_cached(properties.major, properties.minor, core::cache_root() / "decode_kernels");
  auto out = std::make_shared<DecodeKernels::Compiled>();
  out->sm_count = properties.multiProcessorCount;
  out->l2_bytes = properties.l2CacheSize;
  check_cuda(cudaLibraryLoadData(&out->library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
             "cudaLibraryLoadData");
  for (int k = 0; k < kKernels; ++k)
    check_cuda(cudaLibraryGetKernel(&out->kernels[k], out->library, kKernelNames[k]), kKernelNames[k]);
  return out;
}

void launch(const DecodeKernels::Compiled& compiled, Kernel kernel, const at::Tensor& on, dim3 grid, dim3 block,
            size_t shared_bytes, std::vector<void*> args) {
  const auto stream = c10::cuda::getCurrentCUDAStream(on.device().index());
  check_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(compiled.kernels[kernel]), grid, block, args.data(),
                              shared_bytes, stream.stream()),
             kKernelNames[kernel]);
}

void require(bool condition, const char* kernel, const char* what) {
  if (!condition) throw std::invalid_argument(fmt::format("decode kernel {}: {}", kernel, what));
}

// The kernels load 16 bytes at a time.
bool is_bf16_cuda(const at::Tensor& t) {
  return t.is_cuda() && t.scalar_type() == at::kBFloat16 && t.is_contiguous() &&
         reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
}

}  // namespace

const DecodeKernels* DecodeKernels::get(const at::Device& device) {
  if (!g_enabled || !device.is_cuda()) return nullptr;
  static const bool switched_off = [] {
    const char* value = std::getenv("VINCI_DECODE_KERNELS");
    return value && std::string(value) == "0";
  }();
  if (switched_off) return nullptr;
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<DecodeKernels>> built;  // nullptr: the compile failed
  const std::lock_guard lock(mutex);
  const int index = device.has_index() ? device.index() : c10::cuda::current_device();
  auto found = built.find(index);
  if (found == built.end()) {
    std::unique_ptr<DecodeKernels> kernels;
    try {
      const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
      kernels.reset(new DecodeKernels(compile_for(index)));
    } catch (const std::exception& e) {
      fmt::print(stderr, "vinci: fused decode kernels unavailable on cuda:{}, decoding with ATen's: {}\n", index,
                 e.what());
    }
    found = built.emplace(index, std::move(kernels)).first;
  }
  return found->second.get();
}

at::Tensor DecodeKernels::add_rms_norm(at::Tensor& residual, const at::Tensor& x, const at::Tensor& weight,
                                       double eps) const {
  require(is_bf16_cuda(residual) && is_bf16_cuda(x) && is_bf16_cuda(weight) && residual.sizes() == x.sizes() &&
              residual.dim() == 2 && weight.numel() == residual.size(1) && residual.size(1) % 8 == 0,
          "add_rms_norm", "needs contiguous bf16 CUDA residual and x [rows, n] and weight [n], n a multiple of 8");
  auto out = at::empty_like(residual);
  void* residual_ptr = residual.data_ptr();
  const void *x_ptr = x.data_ptr(), *weight_ptr = weight.data_ptr();
  void* out_ptr = out.data_ptr();
  int n = static_cast<int>(residual.size(1));
  float epsilon = static_cast<float>(eps);
  launch(*compiled_, kAddRmsNorm, residual, dim3(static_cast<unsigned>(residual.size(0))), dim3(512), 0,
         {&residual_ptr, &x_ptr, &weight_ptr, &out_ptr, &n, &epsilon});
  return out;
}

at::Tensor DecodeKernels::rope_write_kv(const at::Tensor& qkv, const at::Tensor& positions, const at::Tensor& inv_freq,
                                        const at::Tensor& slots, at::Tensor& keys, at::Tensor& values, int64_t heads,
                                        int64_t kv_heads) const {
  const int64_t rows = qkv.size(0), dim = keys.size(2);
  require(is_bf16_cuda(qkv) && is_bf16_cuda(keys) && is_bf16_cuda(values) && qkv.dim() == 2 &&
              qkv.size(1) == (heads + 2 * kv_heads) * dim && keys.size(1) == kv_heads && dim % 2 == 0,
          "rope_write_kv", "needs contiguous bf16 CUDA qkv [rows, (heads + 2 kv_heads) dim] and pools");
  require(positions.scalar_type() == at::kLong && positions.is_contiguous() && positions.numel() == rows &&
              slots.scalar_type() == at::kLong && slots.is_contiguous() && slots.numel() == rows &&
              inv_freq.scalar_type() == at::kFloat && inv_freq.numel() == dim / 2,
          "rope_write_kv", "needs int64 positions and slots, one a row, and float32 inv_freq [dim/2]");
  auto q = at::empty({rows, heads, dim}, qkv.options());
  const void *qkv_ptr = qkv.data_ptr(), *positions_ptr = positions.data_ptr(), *inv_freq_ptr = inv_freq.data_ptr(),
             *slots_ptr = slots.data_ptr();
  void *q_ptr = q.data_ptr(), *keys_ptr = keys.data_ptr(), *values_ptr = values.data_ptr();
  int heads_arg = static_cast<int>(heads), kv_heads_arg = static_cast<int>(kv_heads), dim_arg = static_cast<int>(dim);
  launch(*compiled_, kRopeWriteKv, qkv, dim3(static_cast<unsigned>(rows), static_cast<unsigned>(heads + 2 * kv_heads)),
         dim3(static_cast<unsigned>(std::min<int64_t>(dim / 2, 256))), 0,
         {&qkv_ptr, &positions_ptr, &inv_freq_ptr, &slots_ptr, &q_ptr, &keys_ptr, &values_ptr, &heads_arg,
          &kv_heads_arg, &dim_arg});
  return q;
}

at::Tensor DecodeKernels::attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                                    const at::Tensor& block_table, const at::Tensor& positions, int64_t block_tokens,
                                    int64_t kv_length, double scale) const {
  const int64_t rows = q.size(0), heads = q.size(1), dim = q.size(2), kv_heads = keys.size(1);
  require(is_bf16_cuda(q) && is_bf16_cuda(keys) && is_bf16_cuda(values) && keys.size(2) == dim &&
              heads % kv_heads == 0 && attention_takes(dim),
          "attention", "needs contiguous bf16 CUDA q [rows, heads, dim] and pools, and a head size it is built for");
  require(block_table.scalar_type() == at::kLong && block_table.size(0) >= rows && block_table.stride(1) == 1 &&
              block_table.size(1) * block_tokens >= kv_length && positions.scalar_type() == at::kLong &&
              positions.is_contiguous() && positions.numel() == rows,
          "attention", "needs an int64 block table covering kv_length and int64 positions, one a row");
  const int64_t tile = attention_head_tile(rows, heads, kv_heads, dim, kv_length, compiled_->l2_bytes),
                tiles = ceil_div(heads / kv_heads, tile);
  const AttentionSplit split = attention_split(rows * kv_heads * tiles, kv_length, compiled_->sm_count);
  auto partial = at::empty({rows, heads, split.splits, dim + 2}, q.options().dtype(at::kFloat));
  auto out = at::empty({rows, heads * dim}, q.options());
  const void *q_ptr = q.data_ptr(), *keys_ptr = keys.data_ptr(), *values_ptr = values.data_ptr(),
             *table_ptr = block_table.data_ptr(), *positions_ptr = positions.data_ptr();
  void *partial_ptr = partial.data_ptr(), *out_ptr = out.data_ptr();
  long long table_stride = block_table.stride(0);
  int block_arg = static_cast<int>(block_tokens), kv_length_arg = static_cast<int>(kv_length),
      split_keys = static_cast<int>(split.keys), splits_arg = static_cast<int>(split.splits),
      heads_arg = static_cast<int>(heads), kv_heads_arg = static_cast<int>(kv_heads), tile_arg = static_cast<int>(tile);
  float scale_arg = static_cast<float>(scale);
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(kv_heads * tiles),
                  static_cast<unsigned>(split.splits));
  launch(*compiled_, for_head_dim(tile == 1 ? kAttentionHead : kAttentionGroup, dim), q, grid, dim3(kAttentionThreads),
         static_cast<size_t>(attention_shared_bytes(tile, dim, split.keys)),
         {&q_ptr, &keys_ptr, &values_ptr, &table_ptr, &table_stride, &positions_ptr, &block_arg, &kv_length_arg,
          &split_keys, &heads_arg, &kv_heads_arg, &tile_arg, &scale_arg, &partial_ptr});
  launch(*compiled_, for_head_dim(kAttentionCombine, dim), q,
         dim3(static_cast<unsigned>(rows), static_cast<unsigned>(heads)), dim3(static_cast<unsigned>(dim)), 0,
         {&partial_ptr, &splits_arg, &heads_arg, &out_ptr});
  return out;
}

at::Tensor DecodeKernels::silu_mul(const at::Tensor& gate_up) const {
  require(is_bf16_cuda(gate_up) && gate_up.dim() == 2 && gate_up.size(1) % 16 == 0, "silu_mul",
          "needs a contiguous bf16 CUDA gate_up [rows, 2 inter], inter a multiple of 8");
  const int64_t rows = gate_up.size(0), inter = gate_up.size(1) / 2;
  auto out = at::empty({rows, inter}, gate_up.options());
  const void* in_ptr = gate_up.data_ptr();
  void* out_ptr = out.data_ptr();
  int inter_arg = static_cast<int>(inter);
  long long chunks = rows * inter / 8;
  launch(*compiled_, kSiluMul, gate_up, dim3(static_cast<unsigned>((chunks + 255) / 256)), dim3(256), 0,
         {&in_ptr, &out_ptr, &inter_arg, &chunks});
  return out;
}

#else  // a build without the CUDA runtime's headers or NVRTC

struct DecodeKernels::Compiled {};

const DecodeKernels* DecodeKernels::get(const at::Device&) { return nullptr; }

namespace {
[[noreturn]] void unavailable() {
  throw std::logic_error("fused decode kernels are not compiled into this build (no CUDA runtime headers or NVRTC)");
}
}  // namespace

std::string DecodeKernels::compile(int, int) { unavailable(); }
std::string DecodeKernels::compile_cached(int, int, const std::filesystem::path&) { unavailable(); }
at::Tensor DecodeKernels::add_rms_norm(at::Tensor&, const at::Tensor&, const at::Tensor&, double) const {
  unavailable();
}
at::Tensor DecodeKernels::rope_write_kv(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                        at::Tensor&, at::Tensor&, int64_t, int64_t) const {
  unavailable();
}
at::Tensor DecodeKernels::attention(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                    const at::Tensor&, int64_t, int64_t, double) const {
  unavailable();
}
at::Tensor DecodeKernels::silu_mul(const at::Tensor&) const { unavailable(); }

#endif

}  // namespace vinci::llm
