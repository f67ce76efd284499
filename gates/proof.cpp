#include "gates/proof.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fnmatch.h>
#include <set>

namespace kport::gates {

bool kernel_matches(std::string_view name, std::string_view demangled,
                    const std::vector<std::string>& patterns) {
  std::string n{name}, d{demangled};
  for (auto& p : patterns)
    if (::fnmatch(p.c_str(), n.c_str(), 0) == 0 ||
        (!d.empty() && ::fnmatch(p.c_str(), d.c_str(), 0) == 0))
      return true;
  return false;
}

bool kernel_matches(const trace::trace_kernel& k,
                    const std::vector<std::string>& patterns) {
  return kernel_matches(k.name, k.demangled, patterns);
}

std::string joined(const std::vector<std::string>& xs, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < xs.size() && i < most; ++i)
    out += (i ? ", " : "") + xs[i];
  if (xs.size() > most)
    out += fmt::format(" and {} more", xs.size() - most);
  return out;
}

execution_proof collect_proof(const std::vector<trace::trace>& traces,
                              const port_spec& spec,
                              std::optional<std::string> product_hash) {
  execution_proof p;
  p.product_hash = std::move(product_hash);
  std::set<std::string> cand, ref, mods;
  for (auto& t : traces) {
    for (auto& k : t.kernels) {
      ++p.kernels;
      auto& shown = k.demangled.empty() ? k.name : k.demangled;
      if (kernel_matches(k, spec.target.kernels))
        cand.insert(shown);
      else if (kernel_matches(k, spec.reference.kernels))
        ref.insert(shown);
    }
    for (auto& m : t.modules) {
      mods.insert(m.hash);
      if (p.product_hash && m.hash == *p.product_hash)
        p.product_loaded = true;
    }
  }
  p.candidate_kernels.assign(cand.begin(), cand.end());
  p.reference_kernels.assign(ref.begin(), ref.end());
  p.module_hashes.assign(mods.begin(), mods.end());
  return p;
}

proof_decision decide_proof(const execution_proof& p, const port_spec& spec) {
  if (p.product_hash && !p.product_loaded)
    return {false, msg::FailureClass::host,
            fmt::format("the build product `{}` (XXH3-128 {}) was never "
                        "loaded during the tests: the kernels that ran came "
                        "from elsewhere",
                        spec.target.product, *p.product_hash)};
  return {
      true, msg::FailureClass::none,
      fmt::format("candidate kernels ran: {}", joined(p.candidate_kernels))};
}

} // namespace kport::gates
