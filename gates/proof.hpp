#pragma once

#include "kport/port_spec.hpp"
#include "messages/common_generated.h"
#include "trace/trace_file.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kport::gates {

/// Whether a kernel's name (mangled or demangled) matches a glob pattern.
bool kernel_matches(std::string_view name, std::string_view demangled,
                    const std::vector<std::string>& patterns);

/// The same for a kernel of a trace.
bool kernel_matches(const trace::trace_kernel& k,
                    const std::vector<std::string>& patterns);

/// What the traces of a run show about which code executed.
struct execution_proof {
  std::vector<std::string> candidate_kernels; ///< distinct names seen
  std::vector<std::string> reference_kernels;
  std::vector<std::string> module_hashes;
  int kernels = 0; ///< every kernel execution of the run
  std::optional<std::string> product_hash; ///< when the spec names one
  bool product_loaded = false;
};

/// Collects the proof from a run's traces; `product_hash` is the hash of
/// the spec's build product, when it names one.
execution_proof collect_proof(const std::vector<trace::trace>& traces,
                              const port_spec& spec,
                              std::optional<std::string> product_hash);

/// The proof decision of the correctness gate on a GPU, once the integrity
/// rules on the run's kernels (gates/integrity.hpp) have passed. Pure.
struct proof_decision {
  bool ok = false;
  msg::FailureClass failure = msg::FailureClass::none; ///< when not ok
  std::string reason;
};

/// Passes when the build product was loaded (when the spec names one) and
/// says which candidate kernels ran.
proof_decision decide_proof(const execution_proof& p, const port_spec& spec);

/// "a, b, c and 2 more": a list of names for a reason.
std::string joined(const std::vector<std::string>& names, std::size_t most = 5);

} // namespace kport::gates
