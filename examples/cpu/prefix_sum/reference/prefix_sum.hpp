// The interface both the reference and the port implement: the test suite and
// the bench are written against it and link either implementation.
#pragma once

#include <cstddef>

// Inclusive scan on float32: out[i] = in[0] + ... + in[i] for i < n.
// in and out do not overlap.
void prefix_sum(const float* in, float* out, std::size_t n);
