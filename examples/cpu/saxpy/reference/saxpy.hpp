// The interface both the reference and the port implement: the test suite and
// the bench are written against it and link either implementation.
#pragma once

#include <cstddef>

// y[i] = a * x[i] + y[i] for i < n, on float32. x and y do not overlap.
void saxpy(float a, const float* x, float* y, std::size_t n);
