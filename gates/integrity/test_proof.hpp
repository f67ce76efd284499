#pragma once

// Proof per test: which kernels each test of a suite launched, read from
// the `kport.test:<id>` ranges the SDK's pytest plugin opens around each
// test (sdk/python/kport_bench/pytest_plugin.py).

#include "gates/integrity/rule_table.hpp"
#include "gates/test_counts.hpp"
#include "kport/error.hpp"
#include "kport/port_spec.hpp"
#include "trace/trace_file.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kport::gates {

/// The kernels launched inside one test's range (or a range within it).
struct test_kernels {
  std::vector<std::string> candidate; ///< distinct names
  std::vector<std::string> reference;
  int launches = 0;
  int memops = 0;      ///< copies and memsets launched inside the range
  bool ranged = false; ///< the trace holds a kport.test range for the id
};

/// Per test id, from the traces of a test run: every test whose range is in
/// the trace, launches or not; empty when the suite ran without the plugin
/// (not pytest, or no NVTX).
std::map<std::string, test_kernels>
kernels_per_test(const std::vector<trace::trace>& traces,
                 const port_spec& spec);

/// Whether the pytest plugin started with NVTX in one of the traces: it
/// opens and closes a bare `kport.test:` range when pytest configures,
/// before the candidate is imported.
bool test_plugin_started(const std::vector<trace::trace>& traces);

/// fallback at a test: a reference kernel inside a test's range, unless the
/// spec lets the suite call the reference as its oracle
/// (target.test_oracle = "reference"). A port that falls back to the
/// reference only at the shapes the tests try is caught here, even when
/// other tests launch its own kernels.
std::vector<integrity_finding>
check_test_fallback(const std::map<std::string, test_kernels>& tests,
                    const port_spec& spec, const run_label& where);

/// One test of the plugin's report (KPORT_TEST_REPORT).
struct test_outcome {
  std::string id;      ///< pytest's node id, as in the range's name
  std::string outcome; ///< passed | failed | skipped
};

/// What the SDK's pytest plugin says the suite did: written inside the
/// candidate's process, so a claim to check, not evidence.
struct test_report {
  std::vector<test_outcome> tests;
  bool ranges = false; ///< the plugin had NVTX to open the ranges with
};

/// Reads the plugin's report strictly (messages/test_report.fbs); errors
/// name `source` and the parser's line:column.
result<test_report> parse_test_report(std::string_view json,
                                      std::string_view source);

/// What the correctness gate knows about a test run, for the proof per test.
struct test_run_evidence {
  /// Why the plugin was not in the run ("the suite is not pytest's", ...);
  /// empty when kport loaded it into a pytest run.
  std::string plugin_absent;
  std::optional<test_report> report; ///< nothing: no report file
  std::optional<test_counts> counts; ///< the summary the run printed
  /// Records the traces lost (CUPTI records or buffers, over the cap, a
  /// signal): a missing range or kernel may be one of them.
  std::uint64_t dropped = 0;
  bool plugin_started = false; ///< test_plugin_started
};

/// What the reference's own run of the suite (KPORT_SIDE=reference, the
/// same command, plugin and tracing) showed: per passed test, whether it
/// launched a reference kernel. It says which tests must launch a port
/// kernel, whatever the spec lists: a test the reference passes without its
/// kernel (an argument check, an empty input) needs none of the port's.
struct reference_tests {
  /// ranged: `launched` is evidence; unranged: the run shows no per-test
  /// kernels (not pytest, no plugin or NVTX, not on a GPU), `why` says so;
  /// broken: the reference's own suite failed, `why` says how (BLOCKED).
  enum class state { ranged, unranged, broken };
  state at = state::unranged;
  std::string why;
  std::map<std::string, bool> launched; ///< passed test id -> a ref kernel
};

/// Decides reference_tests from the reference run: `failed` is why the run
/// did not pass (decide_correctness's reason), empty when it did; the
/// per-test kernels and the evidence are read as for the candidate's run.
reference_tests
read_reference_tests(const std::map<std::string, test_kernels>& tests,
                     const test_run_evidence& run, const std::string& failed);

/// The cache file of reference_tests (one line per test), and back; a
/// damaged file is an error (the gate runs the reference again).
std::string to_text(const reference_tests& r);
result<reference_tests> parse_reference_tests(std::string_view text,
                                              std::string_view source);

/// The proof per test's findings, and a note for the gate's report (what it
/// checked, or why it could not).
struct test_proof_outcome {
  std::vector<integrity_finding> findings;
  std::string note;
  std::string blocked; ///< why the evidence cannot decide: BLOCKED
};

/// Every passed test must launch a candidate kernel (issue 20, item 11).
/// The report is cross-checked first: a passed count unlike pytest's
/// summary, no report from a loaded plugin while tests passed, a range for
/// an id the report does not list, or a passed test with no range are
/// harness_tampered (the plugin is the harness's part in a test run; the
/// trace itself recorded faithfully that its step did not happen). Then a
/// passed test with no candidate kernel in its range is no_candidate_kernel,
/// whether it launched library kernels and copies or nothing at all, unless
/// `target.host_tests` lists it (argument checks, empty inputs: tests that
/// pass without the port's kernel whatever the port). With `ref` ranged, a
/// passed test that the reference passed without a reference kernel needs
/// no candidate kernel either (host-like: counted in the note); one the
/// reference's run did not pass is judged as without `ref` (noted, never a
/// finding of its own: see the .cpp). Reference kernels in
/// a range are check_test_fallback's. No plugin, or a plugin without NVTX,
/// is no evidence either way: no finding, a note saying why. A trace that
/// lost records cannot show a test's range or kernels: `blocked` says so.
test_proof_outcome
check_test_proof(const std::map<std::string, test_kernels>& tests,
                 const test_run_evidence& run, const port_spec& spec,
                 const run_label& where, const reference_tests* ref = nullptr);

} // namespace kport::gates
