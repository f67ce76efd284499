#pragma once

// Proof per test: which kernels each test of a suite launched, read from
// the `kport.test:<id>` ranges the SDK's pytest plugin opens around each
// test (sdk/python/kport_bench/pytest_plugin.py).

#include "gates/integrity/rule_table.hpp"
#include "kport/port_spec.hpp"
#include "trace/trace_file.hpp"

#include <map>
#include <string>
#include <vector>

namespace kport::gates {

/// The kernels launched inside one test's range (or a range within it).
struct test_kernels {
  std::vector<std::string> candidate; ///< distinct names
  std::vector<std::string> reference;
  int launches = 0;
};

/// Per test id, from the traces of a test run; empty when the suite ran
/// without the plugin (not pytest, or no NVTX).
std::map<std::string, test_kernels>
kernels_per_test(const std::vector<trace::trace>& traces,
                 const port_spec& spec);

/// fallback at a test: a reference kernel inside a test's range, unless the
/// spec lets the suite call the reference as its oracle
/// (target.test_oracle = "reference"). A port that falls back to the
/// reference only at the shapes the tests try is caught here, even when
/// other tests launch its own kernels.
std::vector<integrity_finding>
check_test_fallback(const std::map<std::string, test_kernels>& tests,
                    const port_spec& spec, const run_label& where);

} // namespace kport::gates
