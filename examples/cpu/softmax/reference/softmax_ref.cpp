// Reference softmax: three plain passes per row (max, exp and sum, divide).
// Subtracting the row max keeps exp in range for any logits.
#include "softmax.hpp"

#include <cmath>

namespace {

// Named so the kernel patterns of the spec (softmax_ref*) match it.
void softmax_ref_kernel(const float* in, float* out, std::size_t rows,
                        std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* x = in + r * cols;
    float* y = out + r * cols;
    float max = -INFINITY;
    for (std::size_t j = 0; j < cols; ++j)
      max = std::fmax(max, x[j]);
    float sum = 0.0f;
    for (std::size_t j = 0; j < cols; ++j) {
      y[j] = std::exp(x[j] - max);
      sum += y[j];
    }
    for (std::size_t j = 0; j < cols; ++j)
      y[j] = y[j] / sum;
  }
}

} // namespace

void softmax(const float* in, float* out, std::size_t rows, std::size_t cols) {
  softmax_ref_kernel(in, out, rows, cols);
}
