// The interface both the reference and the port implement: the test suite and
// the bench are written against it and link either implementation.
#pragma once

#include <cstddef>

// Row-wise softmax of a row-major rows x cols float32 matrix:
// out[r][j] = exp(in[r][j]) / sum_k exp(in[r][k]). in and out do not overlap.
void softmax(const float* in, float* out, std::size_t rows, std::size_t cols);
