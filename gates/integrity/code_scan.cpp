#include "gates/integrity/code_scan.hpp"

#include "config/toml_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fnmatch.h>
#include <map>
#include <memory>
#include <re2/re2.h>
#include <set>

namespace kport::config {
extern const char* const code_rules_toml;
}

namespace kport::gates {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view ref_key = "{reference_modules}";
constexpr std::string_view ops_key = "{fallback_ops}";

std::string alternation(const std::vector<std::string>& names) {
  std::string out = "(?:";
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i ? "|" : "") + RE2::QuoteMeta(names[i]);
  return out + ")";
}

void replace_all(std::string& s, std::string_view key, const std::string& by) {
  for (auto at = s.find(key); at != std::string::npos;
       at = s.find(key, at + by.size()))
    s.replace(at, key.size(), by);
}

/// The pattern with its placeholders expanded; nothing when a placeholder's
/// list is empty (the rule has nothing to look for in this job).
std::optional<std::string> expand(std::string pattern, const scan_inputs& in) {
  for (auto [key, list] : {std::pair{ref_key, &in.reference_modules},
                           std::pair{ops_key, &in.fallback_ops}}) {
    if (pattern.find(key) == std::string::npos)
      continue;
    if (list->empty())
      return std::nullopt;
    replace_all(pattern, key, alternation(*list));
  }
  return pattern;
}

RE2::Options re2_options() {
  RE2::Options o;
  o.set_log_errors(false);
  return o;
}

bool glob_matches(const std::string& glob, const std::string& path) {
  if (fnmatch(glob.c_str(), path.c_str(), 0) == 0)
    return true;
  auto slash = path.rfind('/');
  return slash != std::string::npos &&
         fnmatch(glob.c_str(), path.c_str() + slash + 1, 0) == 0;
}

code_rule_table decode(const toml::table& t, const std::string& name) {
  using config::toml_reader;
  code_rule_table out;
  toml_reader top{t, name, ""};
  std::map<std::string, std::vector<std::string>, std::less<>> languages;
  if (auto* langs = top.table("languages")) {
    auto lr = top.sub("languages", *langs);
    for (auto& k : lr.keys()) {
      languages[k] = lr.strings(k);
      if (languages[k].empty())
        lr.fail_at(k, "must list at least one glob");
    }
  }
  auto* node = t.get("rule");
  if (!node || !node->is_array_of_tables())
    throw config::config_exception{
        fail(error_code::config,
             fmt::format("{}: needs [[rule]] tables (none found)", name))};
  std::set<std::string> ids;
  for (auto& item : *node->as_array()) {
    auto& tbl = *item.as_table();
    toml_reader r{tbl, name, "rule"};
    code_rule rule;
    rule.line = static_cast<int>(tbl.source().begin.line);
    rule.id = r.required_string("id");
    if (!ids.insert(rule.id).second)
      r.fail_at("id", fmt::format("`{}` is used by an earlier rule", rule.id));
    rule.family = r.required_string("family");
    auto tier = r.required_string("tier");
    if (tier != "hard" && tier != "support")
      r.fail_at("tier", fmt::format("is `{}`: use hard or support", tier));
    rule.tier = tier == "hard" ? code_tier::hard : code_tier::support;
    auto langs = r.strings("languages");
    if (langs.empty())
      r.fail_at("languages", "is required: names of [languages]");
    for (auto& l : langs) {
      auto i = languages.find(l);
      if (i == languages.end())
        r.fail_at(
            "languages",
            fmt::format("names `{}`, which [languages] does not define", l));
      rule.globs.insert(rule.globs.end(), i->second.begin(), i->second.end());
    }
    rule.exclude = r.strings("exclude");
    rule.pattern = r.required_string("pattern");
    rule.message = r.required_string("message");
    r.finish();
    scan_inputs sample{{"sample_module"}, {"sample.op"}};
    RE2 re{*expand(rule.pattern, sample), re2_options()};
    if (!re.ok())
      r.fail_at("pattern",
                fmt::format("is not a valid RE2 pattern: {}", re.error()));
    out.rules.push_back(std::move(rule));
  }
  // `rule` is read above through the raw table; the reader still refuses
  // any other top-level key.
  toml::table rest;
  for (auto& [k, v] : t)
    if (k.str() != "rule" && k.str() != "languages")
      rest.insert(k, v);
  toml_reader{rest, name, ""}.finish();
  return out;
}

} // namespace

result<code_rule_table> parse_code_rules(std::string_view text,
                                         const std::string& name) {
  try {
    return decode(config::parse_toml(text, name), name);
  } catch (config::config_exception& e) {
    return std::move(e.err);
  }
}

const code_rule_table& default_code_rules() {
  static const code_rule_table table = [] {
    auto t = parse_code_rules(config::code_rules_toml,
                              "gates/integrity/code_rules.toml");
    // Embedded at build time and pinned by a unit test: a broken table is
    // a bug in kport, never a user's error.
    if (!t)
      throw std::logic_error(t.err().message);
    return std::move(*t);
  }();
  return table;
}

std::string code_finding::describe() const {
  return fmt::format("{}:{}: [{}] {}: `{}`", path, line, rule, message, text);
}

std::vector<code_finding> scan_code(const code_rule_table& rules,
                                    const scan_inputs& inputs,
                                    const std::vector<source_file>& files) {
  struct compiled {
    const code_rule* rule;
    std::unique_ptr<RE2> re;
  };
  std::vector<compiled> res;
  for (auto& r : rules.rules)
    if (auto p = expand(r.pattern, inputs)) {
      auto re = std::make_unique<RE2>(*p, re2_options());
      if (re->ok())
        res.push_back({&r, std::move(re)});
    }
  std::vector<code_finding> out;
  for (auto& f : files) {
    // Line starts, to turn a match's offset into its line.
    std::vector<std::size_t> starts{0};
    for (std::size_t i = 0; i < f.text.size(); ++i)
      if (f.text[i] == '\n')
        starts.push_back(i + 1);
    std::vector<code_finding> here;
    for (auto& c : res) {
      auto matches = [&](auto& g) { return glob_matches(g, f.path); };
      if (std::none_of(c.rule->globs.begin(), c.rule->globs.end(), matches) ||
          std::any_of(c.rule->exclude.begin(), c.rule->exclude.end(), matches))
        continue;
      std::set<int> lines;
      re2::StringPiece text{f.text};
      re2::StringPiece m;
      std::size_t pos = 0;
      while (pos <= f.text.size() &&
             c.re->Match(text, pos, f.text.size(), RE2::UNANCHORED, &m, 1)) {
        auto at = static_cast<std::size_t>(m.data() - f.text.data());
        pos = at + std::max<std::size_t>(m.size(), 1);
        // A match may begin on the newline before its first character.
        auto first = at;
        while (first < at + m.size() &&
               (f.text[first] == '\n' || f.text[first] == ' ' ||
                f.text[first] == '\t'))
          ++first;
        auto line = static_cast<int>(
            std::upper_bound(starts.begin(), starts.end(), first) -
            starts.begin());
        if (!lines.insert(line).second)
          continue;
        std::string matched{m.data(), m.size()};
        if (auto nl = matched.find('\n', first - at); nl != std::string::npos)
          matched.resize(nl);
        matched = matched.substr(std::min(first - at, matched.size()));
        if (matched.size() > 160)
          matched = matched.substr(0, 157) + "...";
        code_finding cf;
        cf.rule = c.rule->id;
        cf.family = c.rule->family;
        cf.tier = c.rule->tier;
        cf.path = f.path;
        cf.line = line;
        cf.text = std::move(matched);
        cf.message = c.rule->message;
        here.push_back(std::move(cf));
      }
    }
    std::stable_sort(here.begin(), here.end(),
                     [](auto& a, auto& b) { return a.line < b.line; });
    out.insert(out.end(), here.begin(), here.end());
  }
  return out;
}

std::vector<std::string> apply_allows(std::vector<code_finding>& findings,
                                      const std::vector<scan_allow>& allows) {
  std::vector<std::string> notes;
  for (auto& a : allows) {
    bool used = false;
    for (auto& f : findings)
      if (f.rule == a.rule && glob_matches(a.path, f.path)) {
        used = true;
        if (f.allowed.empty())
          f.allowed = a.reason;
      }
    if (!used)
      notes.push_back(fmt::format(
          "scan: the spec's allow of `{}` at `{}` covered no finding", a.rule,
          a.path));
  }
  return notes;
}

std::vector<std::string> python_modules(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it{
      dir, fs::directory_options::skip_permission_denied, ec};
  for (; !ec && it != fs::recursive_directory_iterator{}; it.increment(ec)) {
    auto& p = it->path();
    if (p.filename() == "__pycache__") {
      it.disable_recursion_pending();
      continue;
    }
    if (p.extension() == ".py" && p.stem() != "__init__" &&
        p.stem() != "conftest")
      out.insert(p.stem().string());
    else if (it->is_directory(ec) && fs::exists(p / "__init__.py"))
      out.insert(p.filename().string());
  }
  return {out.begin(), out.end()};
}

} // namespace kport::gates
