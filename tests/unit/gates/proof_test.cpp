#include "gates/proof.hpp"

#include <gtest/gtest.h>

namespace kport::gates {
namespace {

trace::trace_kernel kernel(std::string name, std::string demangled = "") {
  trace::trace_kernel k;
  k.name = std::move(name);
  k.demangled = std::move(demangled);
  return k;
}

port_spec spec_with(std::vector<std::string> cand,
                    std::vector<std::string> ref) {
  port_spec s;
  s.target.kernels = std::move(cand);
  s.reference.kernels = std::move(ref);
  return s;
}

TEST(proof, patterns_match_mangled_or_demangled_names) {
  auto k = kernel("_Z14softmax_kernelPfi", "softmax_kernel(float*, int)");
  EXPECT_TRUE(kernel_matches(k, {"softmax_kernel*"}));
  EXPECT_TRUE(kernel_matches(k, {"*14softmax*"}));
  EXPECT_FALSE(kernel_matches(k, {"layernorm*"}));
}

TEST(proof, candidate_kernels_prove_execution) {
  trace::trace t;
  t.kernels = {kernel("softmax_port_kernel"), kernel("softmax_kernel_triton")};
  auto spec = spec_with({"softmax_port*"}, {"softmax_kernel*"});
  auto p = collect_proof({t}, spec, std::nullopt);
  EXPECT_EQ(p.candidate_kernels,
            (std::vector<std::string>{"softmax_port_kernel"}));
  EXPECT_EQ(p.kernels, 2);
  EXPECT_TRUE(decide_proof(p, spec).ok);
}

TEST(proof, named_build_product_must_be_loaded) {
  trace::trace t;
  t.kernels = {kernel("softmax_port_kernel")};
  trace::trace_module m;
  m.hash = "aaaa";
  t.modules = {m};
  auto spec = spec_with({"softmax_port*"}, {});
  spec.target.product = "build/port.cubin";
  auto missing = collect_proof({t}, spec, std::string{"bbbb"});
  auto d = decide_proof(missing, spec);
  EXPECT_FALSE(d.ok);
  EXPECT_NE(d.reason.find("never loaded"), std::string::npos);
  auto present = collect_proof({t}, spec, std::string{"aaaa"});
  EXPECT_TRUE(present.product_loaded);
  EXPECT_TRUE(decide_proof(present, spec).ok);
}

} // namespace
} // namespace kport::gates
