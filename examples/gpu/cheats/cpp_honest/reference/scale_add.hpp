// The interface the reference and the port implement: the test suite and the
// bench are written against it and link either implementation.
#pragma once

#include <cuda_runtime.h>

// out[i] = a * x[i] + y[i] for 0 <= i < n, float32, launched on `stream`.
// x, y and out are device pointers; out overlaps neither input.
void scale_add(float a, const float* x, const float* y, float* out, long long n,
               cudaStream_t stream);
