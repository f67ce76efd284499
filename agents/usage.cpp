#include "agents/usage.hpp"

#include "core/atomic_file.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <regex>

namespace kport::agents {

namespace fs = std::filesystem;

namespace {

/// "2.1k" -> 2100, "1.5M" -> 1500000, "345" -> 345; NaN-free.
double number_of(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end && (*end == 'k' || *end == 'K'))
    v *= 1e3;
  else if (end && *end == 'M')
    v *= 1e6;
  return v;
}

std::string figure(bool has, double v) {
  return has ? fmt::format("{}", v) : std::string{"null"};
}

/// The number after `"key": ` in our own usage.json, or nothing (null).
std::optional<double> field_of(const std::string& text, const char* key) {
  std::regex re{fmt::format("\"{}\"\\s*:\\s*([0-9.eE+-]+)", key)};
  std::smatch m;
  if (!std::regex_search(text, m, re))
    return std::nullopt;
  return number_of(m[1].str());
}

} // namespace

agent_usage parse_usage(std::string_view log,
                        const std::vector<usage_pattern>& patterns) {
  agent_usage u;
  std::string text{log};
  for (auto& p : patterns) {
    std::regex re;
    try {
      re = std::regex{p.pattern};
    } catch (const std::regex_error&) {
      continue; // checked when the adapter was loaded
    }
    double value = 0;
    bool seen = false;
    for (auto it = std::sregex_iterator{text.begin(), text.end(), re};
         it != std::sregex_iterator{}; ++it) {
      double v = number_of((*it)[1].str());
      value = p.sum ? value + v : v;
      seen = true;
    }
    if (!seen)
      continue;
    if (p.field == "input_tokens")
      u.input_tokens = value, u.has_tokens = true;
    else if (p.field == "output_tokens")
      u.output_tokens = value, u.has_tokens = true;
    else if (p.field == "cost_usd")
      u.cost_usd = value, u.has_cost = true;
  }
  return u;
}

std::string usage_json(const agent_usage& u, std::string_view adapter) {
  return fmt::format("{{\"adapter\": \"{}\", \"input_tokens\": {}, "
                     "\"output_tokens\": {}, \"cost_usd\": {}}}\n",
                     adapter, figure(u.has_tokens, u.input_tokens),
                     figure(u.has_tokens, u.output_tokens),
                     figure(u.has_cost, u.cost_usd));
}

result<void> write_usage(const std::string& attempt_dir, const agent_usage& u,
                         std::string_view adapter) {
  return core::write_file_atomic(
      (fs::path{attempt_dir} / "usage.json").string(), usage_json(u, adapter));
}

std::vector<std::pair<std::string, agent_usage>>
attempt_usages(const std::string& job_dir) {
  std::vector<std::pair<std::string, agent_usage>> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator{job_dir, ec}) {
    auto file = e.path() / "usage.json";
    if (!e.is_directory() || !fs::exists(file))
      continue;
    auto text = core::read_file(file.string(), 1u << 16);
    if (!text)
      continue;
    agent_usage u;
    u.attempts = 1;
    if (auto v = field_of(*text, "input_tokens"))
      u.input_tokens = *v, u.has_tokens = true;
    if (auto v = field_of(*text, "output_tokens"))
      u.output_tokens = *v, u.has_tokens = true;
    if (auto v = field_of(*text, "cost_usd"))
      u.cost_usd = *v, u.has_cost = true;
    out.emplace_back(e.path().filename().string(), u);
  }
  std::sort(out.begin(), out.end(),
            [](auto& a, auto& b) { return a.first < b.first; });
  return out;
}

agent_usage job_usage(const std::string& job_dir) {
  agent_usage total;
  for (auto& [dir, u] : attempt_usages(job_dir)) {
    total.attempts += 1;
    total.input_tokens += u.input_tokens;
    total.output_tokens += u.output_tokens;
    total.cost_usd += u.cost_usd;
    total.has_tokens |= u.has_tokens;
    total.has_cost |= u.has_cost;
  }
  return total;
}

std::optional<std::string> over_budget(const agent_usage& total,
                                       double max_cost_usd,
                                       long long max_tokens) {
  if (max_cost_usd > 0 && total.cost_usd > max_cost_usd)
    return fmt::format("budget: the agents reported ${:.4f}, over the job's "
                       "max_cost_usd of ${:.4f} ({} attempts)",
                       total.cost_usd, max_cost_usd, total.attempts);
  auto tokens = total.input_tokens + total.output_tokens;
  if (max_tokens > 0 && tokens > static_cast<double>(max_tokens))
    return fmt::format("budget: the agents reported {:.0f} tokens ({:.0f} in, "
                       "{:.0f} out), over the job's max_tokens of {} ({} "
                       "attempts)",
                       tokens, total.input_tokens, total.output_tokens,
                       max_tokens, total.attempts);
  return std::nullopt;
}

} // namespace kport::agents
