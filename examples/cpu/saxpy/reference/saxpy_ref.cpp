// Reference saxpy: the plain scalar loop. g++ -O2 (very-cheap vector cost
// model) leaves it scalar, since x and y may alias and n is unknown.
#include "saxpy.hpp"

namespace {

// Named so the kernel patterns of the spec (saxpy_ref*) match it.
void saxpy_ref_kernel(float a, const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    y[i] = a * x[i] + y[i];
}

} // namespace

void saxpy(float a, const float* x, float* y, std::size_t n) {
  saxpy_ref_kernel(a, x, y, n);
}
