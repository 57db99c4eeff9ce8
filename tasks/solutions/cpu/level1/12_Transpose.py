"""Reference CPU solution for level1/12_Transpose: a blocked 2-D transpose (32x32 blocks)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP_SRC = r"""
// The CPU reference kernels of tasks/solutions/cpu, one source for all of them.
//
// Every CPU solution embeds this file verbatim (scripts/sync_cpu_solutions.py writes it in), so
// the extension cache, which keys builds by content, compiles it once for all 25 solutions
// instead of 25 times: compiling torch's headers costs minutes on a small machine.
// Edit this file, then run `python3 scripts/sync_cpu_solutions.py`.
#include <torch/extension.h>

#include <algorithm>
#include <cmath>
#include <vector>

// ---- level1/1_Matmul ----
torch::Tensor matmul_cpu(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "matmul: bad shapes");
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "matmul: inputs must be contiguous");
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  const float* A = a.data_ptr<float>();
  const float* B = b.data_ptr<float>();
  float* C = c.data_ptr<float>();
  std::vector<double> acc(N);
  for (int64_t i = 0; i < M; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t k = 0; k < K; ++k) {
      const double av = A[i * K + k];
      const float* brow = B + k * N;
      for (int64_t j = 0; j < N; ++j) acc[j] += av * brow[j];
    }
    for (int64_t j = 0; j < N; ++j) C[i * N + j] = (float)acc[j];
  }
  return c;
}

// ---- level1/2_BatchedMatmul ----
torch::Tensor bmm_cpu(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0) && a.size(2) == b.size(1),
              "bmm: bad shapes");
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "bmm: inputs must be contiguous");
  const int64_t Bt = a.size(0), M = a.size(1), K = a.size(2), N = b.size(2);
  auto c = torch::empty({Bt, M, N}, a.options());
  std::vector<double> acc(N);
  for (int64_t z = 0; z < Bt; ++z) {
    const float* A = a.data_ptr<float>() + z * M * K;
    const float* B = b.data_ptr<float>() + z * K * N;
    float* C = c.data_ptr<float>() + z * M * N;
    for (int64_t i = 0; i < M; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t k = 0; k < K; ++k) {
        const double av = A[i * K + k];
        for (int64_t j = 0; j < N; ++j) acc[j] += av * B[k * N + j];
      }
      for (int64_t j = 0; j < N; ++j) C[i * N + j] = (float)acc[j];
    }
  }
  return c;
}

// ---- level1/3_Conv2d ----
torch::Tensor conv2d_cpu(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t pad) {
  TORCH_CHECK(x.dim() == 4 && w.dim() == 4 && x.size(1) == w.size(1) && b.numel() == w.size(0), "conv2d: bad shapes");
  TORCH_CHECK(x.is_contiguous() && w.is_contiguous() && b.is_contiguous(), "conv2d: inputs must be contiguous");
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t Co = w.size(0), KH = w.size(2), KW = w.size(3);
  const int64_t Ho = H + 2 * pad - KH + 1, Wo = W + 2 * pad - KW + 1;
  TORCH_CHECK(Ho > 0 && Wo > 0, "conv2d: empty output");
  auto y = torch::empty({N, Co, Ho, Wo}, x.options());
  const float* X = x.data_ptr<float>();
  const float* Wt = w.data_ptr<float>();
  const float* Bs = b.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t co = 0; co < Co; ++co)
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          double acc = Bs[co];
          for (int64_t ci = 0; ci < C; ++ci)
            for (int64_t kh = 0; kh < KH; ++kh) {
              const int64_t ih = oh + kh - pad;
              if (ih < 0 || ih >= H) continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t iw = ow + kw - pad;
                if (iw < 0 || iw >= W) continue;
                acc += (double)X[((n * C + ci) * H + ih) * W + iw] * Wt[((co * C + ci) * KH + kh) * KW + kw];
              }
            }
          Y[((n * Co + co) * Ho + oh) * Wo + ow] = (float)acc;
        }
  return y;
}

// ---- level1/4_Softmax ----
torch::Tensor softmax_cpu(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), "softmax: expected a contiguous 2-D tensor");
  const int64_t R = x.size(0), D = x.size(1);
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = X + r * D;
    float* yr = Y + r * D;
    float m = -INFINITY;
    for (int64_t i = 0; i < D; ++i) m = std::max(m, xr[i]);
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += std::exp(xr[i] - m);
    const float fs = (float)s;
    for (int64_t i = 0; i < D; ++i) yr[i] = std::exp(xr[i] - m) / fs;
  }
  return y;
}

// ---- level1/5_LayerNorm ----
torch::Tensor layernorm_cpu(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
  TORCH_CHECK(x.is_contiguous() && w.is_contiguous() && b.is_contiguous(), "layernorm: inputs must be contiguous");
  const int64_t D = x.size(-1);
  TORCH_CHECK(w.numel() == D && b.numel() == D, "layernorm: bad parameter shapes");
  const int64_t R = D > 0 ? x.numel() / D : 0;
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  const float* Wt = w.data_ptr<float>();
  const float* Bs = b.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = X + r * D;
    float* yr = Y + r * D;
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += xr[i];
    const double mean = s / D;
    double q = 0.0;
    for (int64_t i = 0; i < D; ++i) q += (xr[i] - mean) * (xr[i] - mean);
    const double rstd = 1.0 / std::sqrt(q / D + eps);
    for (int64_t i = 0; i < D; ++i) yr[i] = (float)((xr[i] - mean) * rstd * Wt[i] + Bs[i]);
  }
  return y;
}

// ---- level1/6_RMSNorm ----
torch::Tensor rmsnorm_cpu(torch::Tensor x, torch::Tensor w, double eps) {
  TORCH_CHECK(x.is_contiguous() && w.is_contiguous(), "rmsnorm: inputs must be contiguous");
  const int64_t D = x.size(-1);
  TORCH_CHECK(w.numel() == D, "rmsnorm: bad weight shape");
  const int64_t R = D > 0 ? x.numel() / D : 0;
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  const float* Wt = w.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = X + r * D;
    float* yr = Y + r * D;
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += (double)xr[i] * xr[i];
    const float inv = (float)(1.0 / std::sqrt(s / D + eps));
    for (int64_t i = 0; i < D; ++i) yr[i] = xr[i] * inv * Wt[i];
  }
  return y;
}

// ---- level1/7_SumReduction ----
torch::Tensor sum_dim1_cpu(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 3 && x.is_contiguous(), "sum_dim1: expected a contiguous 3-D tensor");
  const int64_t B = x.size(0), R = x.size(1), C = x.size(2);
  auto y = torch::empty({B, C}, x.options());
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  std::vector<double> acc(C);
  for (int64_t b = 0; b < B; ++b) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t r = 0; r < R; ++r) {
      const float* row = X + (b * R + r) * C;
      for (int64_t c = 0; c < C; ++c) acc[c] += row[c];
    }
    for (int64_t c = 0; c < C; ++c) Y[b * C + c] = (float)acc[c];
  }
  return y;
}

// ---- level1/8_MaxReduction ----
torch::Tensor max_dim1_cpu(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 3 && x.is_contiguous() && x.size(1) > 0, "max_dim1: expected a contiguous 3-D tensor");
  const int64_t B = x.size(0), R = x.size(1), C = x.size(2);
  auto y = torch::empty({B, C}, x.options());
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t b = 0; b < B; ++b) {
    float* out = Y + b * C;
    const float* first = X + b * R * C;
    for (int64_t c = 0; c < C; ++c) out[c] = first[c];
    for (int64_t r = 1; r < R; ++r) {
      const float* row = X + (b * R + r) * C;
      for (int64_t c = 0; c < C; ++c) out[c] = row[c] > out[c] ? row[c] : out[c];
    }
  }
  return y;
}

// ---- level1/9_Cumsum ----
torch::Tensor cumsum_cpu(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), "cumsum: expected a contiguous 2-D tensor");
  const int64_t R = x.size(0), L = x.size(1);
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    double s = 0.0;
    for (int64_t i = 0; i < L; ++i) {
      s += X[r * L + i];
      Y[r * L + i] = (float)s;
    }
  }
  return y;
}

// ---- level1/10_GELU ----
torch::Tensor gelu_cpu(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "gelu: input must be contiguous");
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    const float v = X[i];
    Y[i] = 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752440f));
  }
  return y;
}

// ---- level1/11_ElementwiseChain ----
torch::Tensor chain_cpu(torch::Tensor x, torch::Tensor y, torch::Tensor z) {
  TORCH_CHECK(x.is_contiguous() && y.is_contiguous() && z.is_contiguous(), "chain: inputs must be contiguous");
  TORCH_CHECK(x.sizes() == y.sizes() && x.sizes() == z.sizes(), "chain: shapes differ");
  auto out = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  const float* Yp = y.data_ptr<float>();
  const float* Z = z.data_ptr<float>();
  float* O = out.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    const float prod = X[i] * Yp[i];
    const float t = prod + Z[i];
    O[i] = (t > 0.f ? t : 0.f) * 0.5f;
  }
  return out;
}

// ---- level1/12_Transpose ----
torch::Tensor transpose_cpu(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), "transpose: expected a contiguous 2-D tensor");
  const int64_t R = x.size(0), C = x.size(1);
  auto y = torch::empty({C, R}, x.options());
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t T = 32;
  for (int64_t r0 = 0; r0 < R; r0 += T)
    for (int64_t c0 = 0; c0 < C; c0 += T) {
      const int64_t r1 = std::min(R, r0 + T), c1 = std::min(C, c0 + T);
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) Y[c * R + r] = X[r * C + c];
    }
  return y;
}

// ---- level1/13_ReLU ----
torch::Tensor relu_cpu(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "relu: input must be contiguous");
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) Y[i] = X[i] > 0.f ? X[i] : 0.f;
  return y;
}

// ---- level1/14_MeanReduction ----
torch::Tensor mean_cpu(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), "mean: expected a contiguous 2-D tensor");
  const int64_t R = x.size(0), D = x.size(1);
  auto y = torch::empty({R}, x.options());
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += X[r * D + i];
    Y[r] = (float)(s / D);
  }
  return y;
}

// ---- level1/15_L2Normalize ----
torch::Tensor l2norm_cpu(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), "l2norm: expected a contiguous 2-D tensor");
  const int64_t R = x.size(0), D = x.size(1);
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += (double)X[r * D + i] * X[r * D + i];
    const float norm = (float)std::sqrt(s);
    for (int64_t i = 0; i < D; ++i) Y[r * D + i] = X[r * D + i] / norm;
  }
  return y;
}

// ---- level1/16_LogSoftmax ----
torch::Tensor log_softmax_cpu(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), "log_softmax: expected a contiguous 2-D tensor");
  const int64_t R = x.size(0), D = x.size(1);
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = X + r * D;
    float m = -INFINITY;
    for (int64_t i = 0; i < D; ++i) m = std::max(m, xr[i]);
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) s += std::exp((double)xr[i] - m);
    const float lse = (float)std::log(s);
    for (int64_t i = 0; i < D; ++i) Y[r * D + i] = (xr[i] - m) - lse;
  }
  return y;
}

// ---- level2/1_GemmBiasReLU ----
torch::Tensor gemm_bias_relu_cpu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1) && b.numel() == w.size(0), "bad shapes");
  TORCH_CHECK(x.is_contiguous() && w.is_contiguous() && b.is_contiguous(), "inputs must be contiguous");
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  auto y = torch::empty({M, N}, x.options());
  const float* X = x.data_ptr<float>();
  const float* Wt = w.data_ptr<float>();
  const float* Bs = b.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += (double)X[m * K + k] * Wt[n * K + k];
      const float v = (float)acc + Bs[n];
      Y[m * N + n] = v > 0.f ? v : 0.f;
    }
  return y;
}

// ---- level2/4_AttentionScores ----
torch::Tensor attention_cpu(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
  TORCH_CHECK(q.dim() == 3 && k.sizes() == q.sizes() && v.sizes() == q.sizes(), "attention: bad shapes");
  TORCH_CHECK(q.is_contiguous() && k.is_contiguous() && v.is_contiguous(), "attention: inputs must be contiguous");
  const int64_t B = q.size(0), S = q.size(1), D = q.size(2);
  auto out = torch::empty_like(q);
  const float div = (float)std::sqrt((double)D);
  std::vector<float> p(S);
  std::vector<double> acc(D);
  for (int64_t b = 0; b < B; ++b) {
    const float* Q = q.data_ptr<float>() + b * S * D;
    const float* Kp = k.data_ptr<float>() + b * S * D;
    const float* V = v.data_ptr<float>() + b * S * D;
    float* O = out.data_ptr<float>() + b * S * D;
    for (int64_t i = 0; i < S; ++i) {
      float m = -INFINITY;
      for (int64_t j = 0; j < S; ++j) {
        double s = 0.0;
        for (int64_t d = 0; d < D; ++d) s += (double)Q[i * D + d] * Kp[j * D + d];
        p[j] = (float)s / div;
        m = std::max(m, p[j]);
      }
      double sum = 0.0;
      for (int64_t j = 0; j < S; ++j) sum += std::exp((double)p[j] - m);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < S; ++j) {
        const double w = std::exp((double)p[j] - m) / sum;
        for (int64_t d = 0; d < D; ++d) acc[d] += w * V[j * D + d];
      }
      for (int64_t d = 0; d < D; ++d) O[i * D + d] = (float)acc[d];
    }
  }
  return out;
}

// ---- level2/6_ResidualAddRMSNorm ----
torch::Tensor add_rmsnorm_cpu(torch::Tensor x, torch::Tensor res, torch::Tensor w, double eps) {
  TORCH_CHECK(x.is_contiguous() && res.is_contiguous() && w.is_contiguous(), "inputs must be contiguous");
  TORCH_CHECK(x.sizes() == res.sizes(), "x and residual differ in shape");
  const int64_t D = x.size(-1);
  TORCH_CHECK(w.numel() == D, "bad weight shape");
  const int64_t R = D > 0 ? x.numel() / D : 0;
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  const float* Rs = res.data_ptr<float>();
  const float* Wt = w.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    double s = 0.0;
    for (int64_t i = 0; i < D; ++i) {
      const float h = X[r * D + i] + Rs[r * D + i];
      s += (double)h * h;
    }
    const float inv = (float)(1.0 / std::sqrt(s / D + eps));
    for (int64_t i = 0; i < D; ++i) {
      const float h = X[r * D + i] + Rs[r * D + i];
      Y[r * D + i] = h * inv * Wt[i];
    }
  }
  return y;
}

// ---- level2/7_BiasAddTanhScale ----
torch::Tensor bias_tanh_scale_cpu(torch::Tensor x, torch::Tensor bias, double scale) {
  TORCH_CHECK(x.dim() == 4 && x.is_contiguous() && bias.is_contiguous(), "expected a contiguous NCHW tensor");
  const int64_t N = x.size(0), C = x.size(1), HW = x.size(2) * x.size(3);
  TORCH_CHECK(bias.numel() == C, "bad bias shape");
  auto y = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  const float* Bs = bias.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  const float s = (float)scale;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t base = (n * C + c) * HW;
      for (int64_t i = 0; i < HW; ++i) Y[base + i] = std::tanh(X[base + i] + Bs[c]) * s;
    }
  return y;
}

// ---- level2/8_MatmulRowSum ----
torch::Tensor matmul_rowsum_cpu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
  TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1) && b.numel() == w.size(0), "bad shapes");
  TORCH_CHECK(x.is_contiguous() && w.is_contiguous() && b.is_contiguous(), "inputs must be contiguous");
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  auto y = torch::empty({M, 1}, x.options());
  const float* X = x.data_ptr<float>();
  const float* Wt = w.data_ptr<float>();
  const float* Bs = b.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  std::vector<double> wsum(K, 0.0);
  double bsum = 0.0;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < K; ++k) wsum[k] += Wt[n * K + k];
    bsum += Bs[n];
  }
  for (int64_t m = 0; m < M; ++m) {
    double acc = bsum;
    for (int64_t k = 0; k < K; ++k) acc += X[m * K + k] * wsum[k];
    Y[m] = (float)acc;
  }
  return y;
}

// ---- level2/9_SwiGLU ----
torch::Tensor swiglu_cpu(torch::Tensor x, torch::Tensor w1, torch::Tensor w3) {
  TORCH_CHECK(x.dim() == 2 && w1.sizes() == w3.sizes() && w1.size(1) == x.size(1), "bad shapes");
  TORCH_CHECK(x.is_contiguous() && w1.is_contiguous() && w3.is_contiguous(), "inputs must be contiguous");
  const int64_t M = x.size(0), K = x.size(1), N = w1.size(0);
  auto y = torch::empty({M, N}, x.options());
  const float* X = x.data_ptr<float>();
  const float* W1 = w1.data_ptr<float>();
  const float* W3 = w3.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double a = 0.0, g = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        a += (double)X[m * K + k] * W1[n * K + k];
        g += (double)X[m * K + k] * W3[n * K + k];
      }
      const float af = (float)a;
      Y[m * N + n] = af / (1.0f + std::exp(-af)) * (float)g;
    }
  return y;
}

// ---- level3/1_MLP ----
static torch::Tensor linear_act(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, bool relu) {
  TORCH_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1) && b.numel() == w.size(0), "bad shapes");
  TORCH_CHECK(x.is_contiguous() && w.is_contiguous() && b.is_contiguous(), "inputs must be contiguous");
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  auto y = torch::empty({M, N}, x.options());
  const float* X = x.data_ptr<float>();
  const float* Wt = w.data_ptr<float>();
  const float* Bs = b.data_ptr<float>();
  float* Y = y.data_ptr<float>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) acc += (double)X[m * K + k] * Wt[n * K + k];
      const float v = (float)acc + Bs[n];
      Y[m * N + n] = (relu && v < 0.f) ? 0.f : v;
    }
  return y;
}

torch::Tensor mlp_cpu(torch::Tensor x, torch::Tensor w1, torch::Tensor b1, torch::Tensor w2, torch::Tensor b2,
                      torch::Tensor w3, torch::Tensor b3) {
  auto h1 = linear_act(x, w1, b1, true);
  auto h2 = linear_act(h1, w2, b2, true);
  return linear_act(h2, w3, b3, false);
}

// ---- level3/4_LSTMCell ----
static inline float sigmoidf_(float v) { return 1.f / (1.f + std::exp(-v)); }

std::vector<torch::Tensor> lstm_cell_cpu(torch::Tensor x, torch::Tensor h, torch::Tensor c, torch::Tensor w_ih,
                                         torch::Tensor b_ih, torch::Tensor w_hh, torch::Tensor b_hh) {
  TORCH_CHECK(x.is_contiguous() && h.is_contiguous() && c.is_contiguous() && w_ih.is_contiguous() &&
              b_ih.is_contiguous() && w_hh.is_contiguous() && b_hh.is_contiguous(), "inputs must be contiguous");
  const int64_t B = x.size(0), I = x.size(1), H = h.size(1);
  TORCH_CHECK(w_ih.size(0) == 4 * H && w_ih.size(1) == I && w_hh.size(0) == 4 * H && w_hh.size(1) == H &&
              c.size(1) == H && h.size(0) == B && c.size(0) == B, "bad shapes");
  auto h_new = torch::empty({B, H}, x.options());
  auto c_new = torch::empty({B, H}, x.options());
  const float* X = x.data_ptr<float>();
  const float* Hp = h.data_ptr<float>();
  const float* Cp = c.data_ptr<float>();
  const float* Wi = w_ih.data_ptr<float>();
  const float* Bi = b_ih.data_ptr<float>();
  const float* Wh = w_hh.data_ptr<float>();
  const float* Bh = b_hh.data_ptr<float>();
  float* HN = h_new.data_ptr<float>();
  float* CN = c_new.data_ptr<float>();
  std::vector<float> g(4 * H);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t n = 0; n < 4 * H; ++n) {
      double a1 = 0.0, a2 = 0.0;
      for (int64_t k = 0; k < I; ++k) a1 += (double)X[b * I + k] * Wi[n * I + k];
      for (int64_t k = 0; k < H; ++k) a2 += (double)Hp[b * H + k] * Wh[n * H + k];
      g[n] = ((float)a1 + Bi[n]) + ((float)a2 + Bh[n]);
    }
    for (int64_t j = 0; j < H; ++j) {
      const float ig = sigmoidf_(g[j]), fg = sigmoidf_(g[H + j]);
      const float gg = std::tanh(g[2 * H + j]), og = sigmoidf_(g[3 * H + j]);
      const float cn = fg * Cp[b * H + j] + ig * gg;
      CN[b * H + j] = cn;
      HN[b * H + j] = og * std::tanh(cn);
    }
  }
  return {h_new, c_new};
}

// ---- level3/5_MixtureOfExperts ----
torch::Tensor moe_cpu(torch::Tensor x, torch::Tensor wr, torch::Tensor br, std::vector<torch::Tensor> w1,
                      std::vector<torch::Tensor> b1, std::vector<torch::Tensor> w2, std::vector<torch::Tensor> b2) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && wr.is_contiguous() && br.is_contiguous(), "bad inputs");
  const int64_t T = x.size(0), D = x.size(1), E = wr.size(0);
  TORCH_CHECK(wr.size(1) == D && (int64_t)w1.size() == E && (int64_t)b1.size() == E && (int64_t)w2.size() == E &&
              (int64_t)b2.size() == E, "bad router / expert shapes");
  auto out = torch::empty_like(x);
  const float* X = x.data_ptr<float>();
  const float* WR = wr.data_ptr<float>();
  const float* BR = br.data_ptr<float>();
  float* O = out.data_ptr<float>();
  std::vector<float> logits(E), probs(E), hid;
  for (int64_t t = 0; t < T; ++t) {
    const float* xt = X + t * D;
    float mx = -INFINITY;
    for (int64_t e = 0; e < E; ++e) {
      double a = 0.0;
      for (int64_t k = 0; k < D; ++k) a += (double)xt[k] * WR[e * D + k];
      logits[e] = (float)a + BR[e];
      mx = std::max(mx, logits[e]);
    }
    float s = 0.f;
    for (int64_t e = 0; e < E; ++e) s += std::exp(logits[e] - mx);
    int64_t best = 0;
    for (int64_t e = 0; e < E; ++e) {
      probs[e] = std::exp(logits[e] - mx) / s;
      if (probs[e] > probs[best]) best = e;
    }
    const float gate = probs[best];
    const torch::Tensor& W1 = w1[best];
    const torch::Tensor& W2 = w2[best];
    TORCH_CHECK(W1.is_contiguous() && W2.is_contiguous() && W1.size(1) == D && W2.size(0) == D &&
                W2.size(1) == W1.size(0), "bad expert weights");
    const int64_t Hd = W1.size(0);
    const float* P1 = W1.data_ptr<float>();
    const float* Q1 = b1[best].data_ptr<float>();
    const float* P2 = W2.data_ptr<float>();
    const float* Q2 = b2[best].data_ptr<float>();
    hid.resize(Hd);
    for (int64_t j = 0; j < Hd; ++j) {
      double a = 0.0;
      for (int64_t k = 0; k < D; ++k) a += (double)xt[k] * P1[j * D + k];
      const float v = (float)a + Q1[j];
      hid[j] = v > 0.f ? v : 0.f;
    }
    for (int64_t n = 0; n < D; ++n) {
      double a = 0.0;
      for (int64_t j = 0; j < Hd; ++j) a += (double)hid[j] * P2[n * Hd + j];
      O[t * D + n] = ((float)a + Q2[n]) * gate;
    }
  }
  return out;
}
"""

_ext = load_inline(name="vinci_cpu_kernels", cpp_sources=_CPP_SRC,
                   functions=['matmul_cpu', 'bmm_cpu', 'conv2d_cpu', 'softmax_cpu', 'layernorm_cpu', 'rmsnorm_cpu', 'sum_dim1_cpu', 'max_dim1_cpu', 'cumsum_cpu', 'gelu_cpu', 'chain_cpu', 'transpose_cpu', 'relu_cpu', 'mean_cpu', 'l2norm_cpu', 'log_softmax_cpu', 'gemm_bias_relu_cpu', 'attention_cpu', 'add_rmsnorm_cpu', 'bias_tanh_scale_cpu', 'matmul_rowsum_cpu', 'swiglu_cpu', 'mlp_cpu', 'lstm_cell_cpu', 'moe_cpu'],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.transpose_cpu(x.contiguous())
