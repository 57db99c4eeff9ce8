// Kernels split over at::parallel_for (OpenMP), with the slips of parallel code that one thread never
// shows: on one intra-op thread every range is one chunk, [begin, end) = [0, n), and both are exact.
#include <ATen/Parallel.h>
#include <omp.h>
#include <torch/extension.h>
#include <xmmintrin.h>

#include <algorithm>
#include <vector>

// ReLU split over the threads; with from_zero each chunk indexes from 0 instead of from `begin`, so
// with two or more chunks the first part of the output is written again and again and the rest never.
torch::Tensor relu_chunks(torch::Tensor x, bool from_zero) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const float* a = x.data_ptr<float>();
  float* o = y.data_ptr<float>();
  at::parallel_for(0, x.numel(), 16384, [&](int64_t begin, int64_t end) {
    const int64_t first = from_zero ? 0 : begin, last = from_zero ? end - begin : end;
    for (int64_t i = first; i < last; ++i) o[i] = a[i] > 0.f ? a[i] : 0.f;
  });
  return y;
}

// Inclusive prefix sums along each row, a row's columns split over the threads, each chunk scanned
// alone: the earlier chunks' totals are never carried in (the missing second pass).
torch::Tensor cumsum_chunks_without_carry(torch::Tensor x) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = x.data_ptr<float>() + r * cols;
    float* o = y.data_ptr<float>() + r * cols;
    at::parallel_for(0, cols, 256, [&](int64_t begin, int64_t end) {
      double s = 0.0;
      for (int64_t i = begin; i < end; ++i) o[i] = static_cast<float>(s += a[i]);
    });
  }
  return y;
}

// Inclusive prefix sums along each row, a row's columns cut into one chunk per intra-op thread: each
// chunk's total is carried into the later chunks by a Blelloch scan over the chunks, written for a
// power-of-two count of them. Only the first power-of-two chunks take part, so on 3, 5, 6 or 7
// threads the last chunks get no carry (exact on 1, 2, 4 or 8 threads).
torch::Tensor cumsum_chunks_carried_for_powers_of_two(torch::Tensor x) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const int64_t rows = x.size(0), cols = x.size(1), chunks = std::max<int64_t>(1, at::get_num_threads());
  int64_t scanned = 1;
  while (scanned * 2 <= chunks) scanned *= 2;
  const int64_t width = (cols + chunks - 1) / chunks;
  std::vector<double> totals(chunks);
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = x.data_ptr<float>() + r * cols;
    float* o = y.data_ptr<float>() + r * cols;
    at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        double s = 0.0;
        for (int64_t i = c * width; i < std::min(cols, (c + 1) * width); ++i) s += a[i];
        totals[c] = s;
      }
    });
    std::vector<double> carry(chunks, 0.0), tree(totals.begin(), totals.begin() + scanned);
    for (int64_t step = 1; step < scanned; step *= 2)  // up-sweep
      for (int64_t i = 2 * step - 1; i < scanned; i += 2 * step) tree[i] += tree[i - step];
    tree[scanned - 1] = 0.0;
    for (int64_t step = scanned / 2; step >= 1; step /= 2)  // down-sweep
      for (int64_t i = 2 * step - 1; i < scanned; i += 2 * step) {
        const double left = tree[i - step];
        tree[i - step] = tree[i];
        tree[i] += left;
      }
    std::copy(tree.begin(), tree.end(), carry.begin());
    at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        double s = carry[c];
        for (int64_t i = c * width; i < std::min(cols, (c + 1) * width); ++i) o[i] = static_cast<float>(s += a[i]);
      }
    });
  }
  return y;
}

// Inclusive prefix sums along each row by a running fp32 sum: honest, and about sqrt(n) fp32 roundings
// off where torch's CPU cumsum sums in double.
torch::Tensor cumsum_rows_in_float(torch::Tensor x) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const int64_t rows = x.size(0), cols = x.size(1);
  const float* a = x.data_ptr<float>();
  float* o = y.data_ptr<float>();
  at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float s = 0.f;
      for (int64_t i = 0; i < cols; ++i) o[r * cols + i] = s += a[r * cols + i];
    }
  });
  return y;
}

// ReLU over at::parallel_for that leaves the first 64 elements of each chunk unclamped where there are
// exactly two intra-op threads, or in a chunk run by a thread numbered 8 or more: exact on 1 and on 3
// to 8 threads.
torch::Tensor relu_wrong_on_two_threads_or_past_eight(torch::Tensor x) {
  x = x.contiguous();
  auto y = torch::empty_like(x);
  const float* a = x.data_ptr<float>();
  float* o = y.data_ptr<float>();
  const bool two = at::get_num_threads() == 2;
  at::parallel_for(0, x.numel(), 16384, [&](int64_t begin, int64_t end) {
    const int64_t skipped = two || at::get_thread_num() >= 8 ? std::min<int64_t>(begin + 64, end) : begin;
    for (int64_t i = begin; i < skipped; ++i) o[i] = a[i];
    for (int64_t i = skipped; i < end; ++i) o[i] = a[i] > 0.f ? a[i] : 0.f;
  });
  return y;
}

// state__relu_leaving_the_idle_pool_rounding_upward (red team, round 67): the floating-point environment
// of every thread of an OpenMP team but the caller's, set to rounding upward with flush-to-zero (poison)
// or put back to nearest. The team is as large as the pool, so its idle threads keep what was set.
static void set_csr(bool poison) {
  unsigned m = _mm_getcsr() & ~(0x6000u | 0x8000u);
  if (poison) m |= 0x4000u | 0x8000u;
  _mm_setcsr(m);
}

void pool_env(bool poison) {
  const int n = omp_get_max_threads();
  if (n <= 1) return;
  const int team = poison ? n : (n > 16 ? n : 16);
#pragma omp parallel num_threads(team)
  {
    if (omp_get_thread_num() != 0) set_csr(poison);
  }
}
