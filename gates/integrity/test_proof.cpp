#include "gates/integrity/test_proof.hpp"

#include "gates/proof.hpp"
#include "kport/nvtx_convention.hpp"
#include "messages/schema.hpp"
#include "messages/test_report_generated.h"

#include <algorithm>
#include <fmt/format.h>
#include <fnmatch.h>
#include <set>
#include <unordered_map>

namespace kport::gates {

std::map<std::string, test_kernels>
kernels_per_test(const std::vector<trace::trace>& traces,
                 const port_spec& spec) {
  std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>>
      names;
  std::map<std::string, test_kernels> out;
  for (auto& t : traces) {
    std::unordered_map<std::int64_t, const trace::trace_range*> by_id;
    for (auto& r : t.ranges) {
      by_id[r.id] = &r;
      if (auto id = nvtx::suffix(r.name, nvtx::test_prefix); !id.empty())
        out[std::string{id}].ranged = true;
    }
    // The test's range may be an ancestor: a candidate's own range inside a
    // test does not take its launches out of the test. Bounded by the
    // number of ranges, whatever a damaged trace's parents say.
    auto test_of = [&](std::int64_t at) {
      std::size_t steps = 0;
      for (; at >= 0 && steps <= by_id.size(); ++steps) {
        auto r = by_id.find(at);
        if (r == by_id.end())
          break;
        if (auto id = nvtx::suffix(r->second->name, nvtx::test_prefix);
            !id.empty())
          return std::string{id};
        at = r->second->parent;
      }
      return std::string{};
    };
    for (auto& k : t.kernels) {
      auto test = test_of(k.range);
      if (test.empty())
        continue;
      auto& shown = k.demangled.empty() ? k.name : k.demangled;
      ++out[test].launches;
      if (kernel_matches(k, spec.target.kernels))
        names[test].first.insert(shown);
      else if (kernel_matches(k, spec.reference.kernels))
        names[test].second.insert(shown);
    }
    for (auto& m : t.memops)
      if (auto test = test_of(m.range); !test.empty())
        ++out[test].memops;
  }
  for (auto& [test, n] : names) {
    out[test].candidate.assign(n.first.begin(), n.first.end());
    out[test].reference.assign(n.second.begin(), n.second.end());
  }
  return out;
}

bool test_plugin_started(const std::vector<trace::trace>& traces) {
  for (auto& t : traces)
    for (auto& r : t.ranges)
      if (r.name == nvtx::test_prefix)
        return true;
  return false;
}

std::vector<integrity_finding>
check_test_fallback(const std::map<std::string, test_kernels>& tests,
                    const port_spec& spec, const run_label& where) {
  std::vector<integrity_finding> out;
  if (spec.target.test_oracle == "reference")
    return out;
  std::vector<std::string> fell_back;
  std::set<std::string> kernels;
  for (auto& [test, k] : tests)
    if (!k.reference.empty()) {
      fell_back.push_back(test);
      kernels.insert(k.reference.begin(), k.reference.end());
    }
  if (fell_back.empty())
    return out;
  auto f = make_finding(
      msg::IntegrityRule::fallback, where, "",
      fmt::format("reference kernels ({}) ran inside {} of {} tests, first "
                  "`{}`; the suite may not call the reference "
                  "(target.test_oracle = \"none\")",
                  joined({kernels.begin(), kernels.end()}), fell_back.size(),
                  tests.size(), fell_back.front()));
  f.kernels.assign(kernels.begin(), kernels.end());
  f.count = static_cast<int>(fell_back.size());
  out.push_back(std::move(f));
  return out;
}

result<test_report> parse_test_report(std::string_view json,
                                      std::string_view source) {
  auto bin = messages::artifact_from_json("test_report", json, source);
  if (!bin)
    return std::move(bin).err();
  const auto* r = msg::GetTestReport(bin->data());
  test_report out;
  out.ranges = r->ranges();
  if (const auto* tests = r->tests())
    for (const auto* t : *tests)
      out.tests.push_back({t->id()->str(), t->outcome()->str()});
  return out;
}

namespace {

bool host_test(const std::string& id, const port_spec& spec) {
  for (auto& p : spec.target.host_tests)
    if (::fnmatch(p.c_str(), id.c_str(), 0) == 0)
      return true;
  return false;
}

/// "`a`, `b` and 3 more": the first few ids of a list a finding names.
std::string first_ids(const std::vector<std::string>& ids) {
  std::string out;
  std::size_t shown = std::min<std::size_t>(ids.size(), 3);
  for (std::size_t i = 0; i < shown; ++i)
    out += fmt::format("{}`{}`", i ? ", " : "", ids[i]);
  if (ids.size() > shown)
    out += fmt::format(" and {} more", ids.size() - shown);
  return out;
}

/// The part of a pytest node id after its file ("t.py::test_a[x]" ->
/// "test_a[x]"): the file's part is relative to pytest's rootdir, which
/// may differ between the sides (a relative path, another cwd).
std::string_view in_file(std::string_view id) {
  auto at = id.find("::");
  return at == std::string_view::npos ? id : id.substr(at + 2);
}

/// Finds a candidate test's id in the reference's run: the same id, else
/// the same test in its file when only one of the reference's tests has it.
class reference_index {
public:
  reference_index() = default;
  explicit reference_index(const reference_tests& r)
      : ref_{&r} {
    for (auto& [id, launched] : r.launched)
      ++by_name_[std::string{in_file(id)}];
  }
  std::optional<bool> launched(const std::string& id) const {
    if (auto it = ref_->launched.find(id); it != ref_->launched.end())
      return it->second;
    auto name = in_file(id);
    auto n = by_name_.find(std::string{name});
    if (n == by_name_.end() || n->second != 1)
      return std::nullopt;
    for (auto& [rid, launched] : ref_->launched)
      if (in_file(rid) == name)
        return launched;
    return std::nullopt;
  }
  /// The reference's passed tests that no test of `run` matches.
  std::vector<std::string> unseen(const std::vector<test_outcome>& run) const {
    std::set<std::string> ids, names;
    for (auto& t : run) {
      ids.insert(t.id);
      names.insert(std::string{in_file(t.id)});
    }
    std::vector<std::string> out;
    for (auto& [id, launched] : ref_->launched)
      if (!ids.count(id) && !names.count(std::string{in_file(id)}))
        out.push_back(id);
    return out;
  }

private:
  const reference_tests* ref_ = nullptr;
  std::map<std::string, int> by_name_;
};

/// Cache lines carry ids as pytest wrote them; a newline or a backslash
/// in one is escaped so that each test stays one line.
std::string escaped(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string unescaped(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      out += s[i + 1] == 'n' ? '\n' : s[i + 1];
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

constexpr std::string_view cache_header = "kport reference-tests 1";

} // namespace

reference_tests
read_reference_tests(const std::map<std::string, test_kernels>& tests,
                     const test_run_evidence& run, const std::string& failed) {
  reference_tests r;
  if (!failed.empty()) {
    r.at = reference_tests::state::broken;
    r.why = "the reference's own run of the suite (KPORT_SIDE=reference) did "
            "not pass: " +
            failed;
    return r;
  }
  auto unranged = [&](std::string why) {
    r.why = std::move(why);
    return r;
  };
  if (!run.plugin_absent.empty())
    return unranged(run.plugin_absent);
  if (!run.report)
    return unranged("the pytest plugin wrote no report on the reference side");
  if (!run.report->ranges)
    return unranged("the pytest plugin had no NVTX on the reference side");
  // A lost record may be a reference kernel: the test would look host-like.
  if (run.dropped > 0)
    return unranged(
        fmt::format("the reference run's trace lost {} records", run.dropped));
  bool any = false;
  for (auto& t : run.report->tests) {
    if (t.outcome != "passed")
      continue;
    auto k = tests.find(t.id);
    if (k == tests.end() || !k->second.ranged)
      continue;
    // A glob of target.kernels may match the reference's kernel too.
    bool launched =
        !k->second.reference.empty() || !k->second.candidate.empty();
    r.launched[t.id] = launched;
    any = any || launched;
  }
  // No test at all with a reference kernel: more likely reference.kernels
  // matching nothing than a suite without the operator; the spec decides.
  if (!any)
    return unranged("no test of the reference's run launched a kernel "
                    "reference.kernels matches");
  r.at = reference_tests::state::ranged;
  return r;
}

std::string to_text(const reference_tests& r) {
  static constexpr const char* names[] = {"ranged", "unranged", "broken"};
  std::string out{cache_header};
  out += fmt::format("\nstate\t{}\nwhy\t{}\n", names[static_cast<int>(r.at)],
                     escaped(r.why));
  for (auto& [id, launched] : r.launched)
    out += fmt::format("test\t{}\t{}\n", launched ? 1 : 0, escaped(id));
  return out;
}

result<reference_tests> parse_reference_tests(std::string_view text,
                                              std::string_view source) {
  reference_tests r;
  auto bad = [&](int line, std::string_view what) {
    return fail(error_code::parse,
                fmt::format("{}:{}: {}; remove it to run the reference's "
                            "suite again",
                            source, line, what));
  };
  int line = 0;
  bool state_seen = false;
  for (std::size_t at = 0; at < text.size(); ++line) {
    auto end = text.find('\n', at);
    if (end == std::string_view::npos)
      return bad(line + 1, "truncated (no newline at its end)");
    auto l = text.substr(at, end - at);
    at = end + 1;
    if (line == 0) {
      if (l != cache_header)
        return bad(1, fmt::format("not a `{}` file", cache_header));
    } else if (l.rfind("state\t", 0) == 0) {
      auto v = l.substr(6);
      if (v == "ranged")
        r.at = reference_tests::state::ranged;
      else if (v == "unranged")
        r.at = reference_tests::state::unranged;
      else if (v == "broken")
        r.at = reference_tests::state::broken;
      else
        return bad(line + 1, "unknown state");
      state_seen = true;
    } else if (l.rfind("why\t", 0) == 0) {
      r.why = unescaped(l.substr(4));
    } else if (l.size() > 7 && l.rfind("test\t", 0) == 0 &&
               (l[5] == '0' || l[5] == '1') && l[6] == '\t') {
      r.launched[unescaped(l.substr(7))] = l[5] == '1';
    } else {
      return bad(line + 1, "unexpected line");
    }
  }
  if (!state_seen)
    return bad(line, "no state line");
  return r;
}

test_proof_outcome
check_test_proof(const std::map<std::string, test_kernels>& tests,
                 const test_run_evidence& run, const port_spec& spec,
                 const run_label& where, const reference_tests* ref) {
  test_proof_outcome out;
  auto tampered = [&](std::string detail, int count) {
    auto f = make_finding(msg::IntegrityRule::harness_tampered, where, "",
                          std::move(detail));
    f.count = count;
    out.findings.push_back(std::move(f));
  };
  if (!run.plugin_absent.empty()) {
    out.note = "proof per test did not run: " + run.plugin_absent;
    return out;
  }
  int summary_passed = run.counts ? run.counts->passed : 0;
  if (!run.report) {
    // pytest loads PYTEST_PLUGINS or stops: a pytest summary without the
    // report means the report was removed or the plugin's hook undone.
    if (summary_passed > 0)
      tampered(fmt::format("pytest's summary shows {} passed tests but kport's "
                           "pytest plugin wrote no report (KPORT_TEST_REPORT)",
                           summary_passed),
               summary_passed);
    else
      out.note = "proof per test did not run: the plugin wrote no report "
                 "and no test passed";
    return out;
  }
  std::set<std::string> listed;
  std::vector<std::string> passed;
  for (auto& t : run.report->tests) {
    listed.insert(t.id);
    if (t.outcome == "passed")
      passed.push_back(t.id);
  }
  if (static_cast<int>(passed.size()) != summary_passed)
    tampered(fmt::format("kport's pytest plugin reports {} passed tests, "
                         "pytest's summary {}",
                         passed.size(), summary_passed),
             summary_passed);
  std::vector<std::string> unlisted, unranged;
  bool any_range = false;
  for (auto& [id, k] : tests) {
    any_range = any_range || k.ranged;
    if (!listed.count(id))
      unlisted.push_back(id);
  }
  if (!unlisted.empty())
    tampered(fmt::format("the trace holds kport.test ranges of {} tests the "
                         "plugin's report does not list: {}",
                         unlisted.size(), first_ids(unlisted)),
             static_cast<int>(unlisted.size()));
  if (!run.report->ranges && run.plugin_started)
    tampered("kport's pytest plugin opened its kport.test: range when pytest "
             "started, yet its report says it had no NVTX to open the test "
             "ranges with",
             0);
  if (!run.report->ranges && !any_range && !run.plugin_started) {
    // The plugin opens the ranges through torch's NVTX: a suite without
    // torch has none, and no range is no evidence either way.
    out.note = "proof per test did not run: the pytest plugin had no NVTX "
               "(torch.cuda.nvtx) to open kport.test ranges with";
    return out;
  }
  if (run.dropped > 0) {
    out.blocked = fmt::format(
        "no proof per test: the test run's trace lost {} records, so a "
        "test's range or kernels may be among them",
        run.dropped);
    return out;
  }
  std::vector<std::string> nothing, library, unmatched;
  int allowed = 0, host_like = 0;
  bool by_reference = ref && ref->at == reference_tests::state::ranged;
  reference_index index;
  if (by_reference)
    index = reference_index{*ref};
  for (auto& id : passed) {
    // The reference's evidence first: a test it passed without its kernel
    // needs none of the port's (counted whether or not the port launched
    // one). A test it did not pass is judged as before (host_tests).
    std::optional<bool> ref_launched;
    if (by_reference) {
      ref_launched = index.launched(id);
      if (!ref_launched)
        unmatched.push_back(id);
      else if (!*ref_launched)
        ++host_like;
    }
    auto k = tests.find(id);
    if (k == tests.end() || !k->second.ranged) {
      unranged.push_back(id);
      continue;
    }
    if (!k->second.candidate.empty() || (ref_launched && !*ref_launched))
      continue;
    if (host_test(id, spec)) {
      ++allowed;
      continue;
    }
    (k->second.launches + k->second.memops ? library : nothing).push_back(id);
  }
  if (!unranged.empty())
    tampered(fmt::format("{} passed tests have no kport.test range in the "
                         "trace (the plugin opens one around every test): {}",
                         unranged.size(), first_ids(unranged)),
             static_cast<int>(unranged.size()));
  if (!library.empty() || !nothing.empty()) {
    auto& first = library.empty() ? nothing.front() : library.front();
    auto f = make_finding(
        msg::IntegrityRule::no_candidate_kernel, where, "",
        fmt::format(
            "passed without launching a candidate kernel: {} ({} passed "
            "tests launched only library kernels or copies{}, {} no device "
            "work at all{}); {}",
            first, library.size(),
            library.empty() ? "" : ", first `" + library.front() + "`",
            nothing.size(),
            nothing.empty() ? "" : ", first `" + nothing.front() + "`",
            by_reference
                ? "the reference's own run of the suite launched a reference "
                  "kernel in these tests (or did not pass them), so the port "
                  "must launch its own"
                : "a test that needs no kernel of the port (an argument "
                  "check) belongs in target.host_tests"));
    f.count = static_cast<int>(library.size() + nothing.size());
    out.findings.push_back(std::move(f));
  }
  out.note = fmt::format("proof per test: {} passed tests, each launched a "
                         "candidate kernel in its kport.test range, {} of "
                         "them excepted by target.host_tests",
                         passed.size(), allowed);
  if (by_reference) {
    out.note += fmt::format(
        "; the reference's run of the suite: {} of them host-like (passed "
        "there without a reference kernel: no candidate kernel required)",
        host_like);
    // Ids may differ for honest reasons: a suite parametrised over what the
    // implementation under test declares (its dtypes), or a skip that only
    // one side takes. The candidate gains nothing from it: an unmatched
    // test is judged by target.host_tests alone, as without the reference.
    if (!unmatched.empty())
      out.note += fmt::format(", {} not passed there (judged by "
                              "target.host_tests alone): {}",
                              unmatched.size(), first_ids(unmatched));
    auto missing = index.unseen(run.report->tests);
    if (!missing.empty())
      out.note += fmt::format(", {} passed there but not run here: {}",
                              missing.size(), first_ids(missing));
  } else if (ref) {
    out.note += "; no reference evidence per test (" + ref->why +
                "): target.host_tests alone says which tests need no "
                "candidate kernel";
  }
  // A glob that matches no test of the report is likely stale (a renamed
  // test): say so, as it would except a future test nobody meant.
  std::vector<std::string> unused;
  for (auto& p : spec.target.host_tests)
    if (std::none_of(run.report->tests.begin(), run.report->tests.end(),
                     [&](auto& t) {
                       return ::fnmatch(p.c_str(), t.id.c_str(), 0) == 0;
                     }))
      unused.push_back(p);
  if (!unused.empty())
    out.note +=
        "; target.host_tests patterns that matched no test: " + joined(unused);
  return out;
}

} // namespace kport::gates
