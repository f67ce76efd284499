// Port of saxpy: the same formula, written so that g++ -O2 emits packed SSE
// without -O3 or -march: eight floats per step as two explicit 4-lane
// vectors (GCC vector extensions, portable to any GCC/Clang target), then a
// scalar tail. Each lane computes a * x + y exactly as the reference does.
#include "saxpy.hpp"

#include <cstring>

namespace {

using v4f = float __attribute__((vector_size(16)));

// memcpy is how to load and store a vector at any alignment; it compiles to
// movups.
inline v4f load(const float* p) {
  v4f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store(float* p, v4f v) {
  std::memcpy(p, &v, sizeof v);
}

// Named so the kernel patterns of the spec (saxpy_port*) match it.
void saxpy_port_kernel(float a, const float* x, float* y, std::size_t n) {
  const v4f va = {a, a, a, a};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    v4f y0 = va * load(x + i) + load(y + i);
    v4f y1 = va * load(x + i + 4) + load(y + i + 4);
    store(y + i, y0);
    store(y + i + 4, y1);
  }
  for (; i < n; ++i)
    y[i] = a * x[i] + y[i];
}

} // namespace

void saxpy(float a, const float* x, float* y, std::size_t n) {
  saxpy_port_kernel(a, x, y, n);
}
