// Kernels split over at::parallel_for (OpenMP), with the slips of parallel code that one thread never
// shows: on one intra-op thread every range is one chunk, [begin, end) = [0, n), and both are exact.
#include <ATen/Parallel.h>
#include <torch/extension.h>

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
