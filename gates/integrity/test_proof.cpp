#include "gates/integrity/test_proof.hpp"

#include "gates/proof.hpp"
#include "kport/nvtx_convention.hpp"

#include <fmt/format.h>
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
    for (auto& r : t.ranges)
      by_id[r.id] = &r;
    for (auto& k : t.kernels) {
      // The test's range may be an ancestor: a candidate's own range
      // inside a test does not take its launches out of the test. Bounded
      // by the number of ranges, whatever a damaged trace's parents say.
      std::string test;
      std::size_t steps = 0;
      for (auto at = k.range; at >= 0 && steps <= by_id.size(); ++steps) {
        auto r = by_id.find(at);
        if (r == by_id.end())
          break;
        if (auto id = nvtx::suffix(r->second->name, nvtx::test_prefix);
            !id.empty()) {
          test = std::string{id};
          break;
        }
        at = r->second->parent;
      }
      if (test.empty())
        continue;
      auto& shown = k.demangled.empty() ? k.name : k.demangled;
      ++out[test].launches;
      if (kernel_matches(k, spec.target.kernels))
        names[test].first.insert(shown);
      else if (kernel_matches(k, spec.reference.kernels))
        names[test].second.insert(shown);
    }
  }
  for (auto& [test, n] : names) {
    out[test].candidate.assign(n.first.begin(), n.first.end());
    out[test].reference.assign(n.second.begin(), n.second.end());
  }
  return out;
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

} // namespace kport::gates
