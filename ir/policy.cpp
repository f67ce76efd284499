#include "ir/policy.hpp"

#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace kport::ir {

namespace {

/// Policy files are a few kilobytes; anything near this is not a policy.
constexpr std::uintmax_t max_policy_bytes = 1u << 20;

std::string where(const std::string& source, const toml::node& n) {
  auto line = n.source().begin.line;
  return source + ":" + std::to_string(line);
}

kport::error policy_error(std::string msg) {
  return kport::fail(kport::error_code::config, std::move(msg));
}

kport::result<severity> read_severity(const std::string& source,
                                      const toml::node& n,
                                      const std::string& key) {
  auto s = n.value<std::string>();
  if (s) {
    if (*s == "critical")
      return severity::critical;
    if (*s == "tolerated")
      return severity::tolerated;
    if (*s == "info")
      return severity::info;
  }
  return policy_error(where(source, n) + ": key `" + key +
                      "` must be one of \"critical\", \"tolerated\", "
                      "\"info\"");
}

kport::result<std::vector<std::string>> read_strings(const std::string& source,
                                                     const toml::node& n,
                                                     const std::string& key) {
  const auto* arr = n.as_array();
  std::vector<std::string> out;
  if (arr) {
    for (const auto& e : *arr) {
      auto s = e.value<std::string>();
      if (!s)
        return policy_error(where(source, e) + ": key `" + key +
                            "` must be a list of strings");
      out.push_back(*s);
    }
    return out;
  }
  return policy_error(where(source, n) + ": key `" + key +
                      "` must be a list of strings");
}

kport::result<void> read_class(const std::string& source, const toml::table& t,
                               std::size_t index, op_class& c) {
  const std::string prefix = "class[" + std::to_string(index) + "].";
  bool has_name = false, has_ops = false;
  for (const auto& [k, v] : t) {
    std::string key(k.str());
    if (key == "name") {
      auto s = v.value<std::string>();
      if (!s || s->empty())
        return policy_error(where(source, v) + ": key `" + prefix +
                            "name` must be a non-empty string");
      c.name = *s;
      has_name = true;
    } else if (key == "severity") {
      auto s = read_severity(source, v, prefix + key);
      if (!s)
        return std::move(s).err();
      c.level = *s;
    } else if (key == "tolerance") {
      auto n = v.value<std::int64_t>();
      if (!n || *n < 0)
        return policy_error(where(source, v) + ": key `" + prefix +
                            "tolerance` must be a non-negative integer");
      c.tolerance = static_cast<std::size_t>(*n);
    } else if (key == "by_op") {
      auto b = v.value<bool>();
      if (!b)
        return policy_error(where(source, v) + ": key `" + prefix +
                            "by_op` must be true or false");
      c.by_op = *b;
    } else if (key == "presence") {
      auto b = v.is_boolean() ? v.value<bool>() : std::nullopt;
      if (!b)
        return policy_error(where(source, v) + ": key `" + prefix +
                            "presence` must be true or false");
      c.presence = *b;
    } else if (key == "ops") {
      auto ops = read_strings(source, v, prefix + key);
      if (!ops)
        return std::move(ops).err();
      c.ops = std::move(*ops);
      has_ops = true;
    } else {
      return policy_error(where(source, v) + ": unknown key `" + prefix + key +
                          "`; a class has name, severity, tolerance, by_op, "
                          "presence and ops");
    }
  }
  if (!has_name || !has_ops)
    return policy_error(where(source, t) + ": class " + std::to_string(index) +
                        " needs `name` and `ops`");
  return {};
}

kport::result<void> read_feature(const std::string& source,
                                 const toml::table& t, std::size_t index,
                                 feature& f) {
  const std::string prefix = "feature[" + std::to_string(index) + "].";
  bool has_name = false, has_ops = false;
  for (const auto& [k, v] : t) {
    std::string key(k.str());
    auto bad = [&](const char* what) {
      return policy_error(where(source, v) + ": key `" + prefix + key +
                          "` must be " + what);
    };
    if (key == "name" || key == "types" || key == "key") {
      auto s = v.value<std::string>();
      if (!s || (key != "types" && s->empty()))
        return bad("a non-empty string");
      if (key == "key" && *s != "count" && *s != "op" && *s != "shapes" &&
          *s != "acc_type" && !s->starts_with("attr:"))
        return bad("one of \"count\", \"op\", \"shapes\", "
                   "\"acc_type\", \"attr:GLOB\"");
      (key == "name" ? f.name : key == "types" ? f.types : f.key) = *s;
      has_name |= key == "name";
    } else if (key == "compare") {
      auto s = v.value<std::string>();
      if (!s || (*s != "set" && *s != "counts"))
        return bad("\"set\" (which keys occur) or \"counts\" (how often "
                   "each occurs)");
      f.set = *s == "set";
    } else if (key == "severity") {
      auto s = read_severity(source, v, prefix + key);
      if (!s)
        return std::move(s).err();
      f.level = *s;
    } else if (key == "tolerance") {
      auto n = v.value<std::int64_t>();
      if (!n || *n < 0)
        return bad("a non-negative integer");
      f.tolerance = static_cast<std::size_t>(*n);
    } else if (key == "ops") {
      auto ops = read_strings(source, v, prefix + key);
      if (!ops)
        return std::move(ops).err();
      f.ops = std::move(*ops);
      has_ops = true;
    } else {
      return policy_error(where(source, v) + ": unknown key `" + prefix + key +
                          "`; a feature has name, ops, types, key, compare, "
                          "severity and tolerance");
    }
  }
  if (!has_name || !has_ops)
    return policy_error(where(source, t) + ": feature " +
                        std::to_string(index) + " needs `name` and `ops`");
  return {};
}

kport::result<std::string> read_file(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec)
    return kport::fail(kport::error_code::io,
                       path + ": cannot read the policy file (" + ec.message() +
                           ")");
  if (size > max_policy_bytes)
    return kport::fail(kport::error_code::io,
                       path + ": " + std::to_string(size) +
                           " bytes is too large for a policy file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return kport::fail(kport::error_code::io,
                       path + ": cannot open the policy file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

const char* to_string(severity s) noexcept {
  switch (s) {
  case severity::critical:
    return "critical";
  case severity::tolerated:
    return "tolerated";
  case severity::info:
    return "info";
  }
  return "info";
}

const op_class* policy::classify(const norm_op& op) const {
  auto it = cache_.find(op.name);
  if (it != cache_.end())
    return it->second;
  bool attr_dependent = false;
  const op_class* hit = nullptr;
  for (const auto& c : classes) {
    for (const auto& pat : c.ops) {
      std::string_view p = pat;
      std::string_view need;
      if (!p.empty() && p.back() == ']') {
        auto lb = p.rfind('[');
        if (lb != std::string_view::npos) {
          need = p.substr(lb + 1, p.size() - lb - 2);
          p = p.substr(0, lb);
        }
      }
      if (!glob_match(p, op.name))
        continue;
      if (!need.empty()) {
        attr_dependent = true;
        bool present = false;
        for (const auto& a : op.attrs)
          if (a.name == need)
            present = true;
        if (!present)
          continue;
      }
      hit = &c;
      break;
    }
    if (hit)
      break;
  }
  // Classes that look at attributes cannot be cached by name alone.
  if (!attr_dependent)
    cache_.emplace(op.name, hit);
  return hit;
}

bool policy::must_match_attr(std::string_view attr) const {
  for (const auto& m : must_match)
    if (glob_match(m, attr))
      return true;
  return false;
}

kport::result<policy> parse_policy(std::string_view text,
                                   const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    return policy_error(source + ":" + std::to_string(e.source().begin.line) +
                        ":" + std::to_string(e.source().begin.column) + ": " +
                        std::string(e.description()));
  }
  policy p;
  p.source = source;
  std::vector<op_class> own;
  bool has_must_match = false;
  if (const auto* b = root.get("base")) {
    auto s = b->value<std::string>();
    auto base_text = s ? builtin_policy_text(*s) : std::string_view();
    if (base_text.empty())
      return policy_error(where(source, *b) +
                          ": key `base` must name a built-in policy (tileir, "
                          "triton, ptx)");
    auto base = parse_policy(base_text, "builtin:" + *s);
    if (!base)
      return std::move(base).err();
    p.classes = std::move(base->classes);
    p.must_match = std::move(base->must_match);
    p.features = std::move(base->features);
    p.unclassified = base->unclassified;
    p.name = base->name;
    p.description = base->description;
  }
  for (const auto& [k, v] : root) {
    std::string key(k.str());
    if (key == "base")
      continue; // read first, below the loop's start
    if (key == "name" || key == "description") {
      auto s = v.value<std::string>();
      if (!s)
        return policy_error(where(source, v) + ": key `" + key +
                            "` must be a string");
      (key == "name" ? p.name : p.description) = *s;
    } else if (key == "unclassified") {
      auto s = read_severity(source, v, key);
      if (!s)
        return std::move(s).err();
      p.unclassified = *s;
    } else if (key == "attributes") {
      const auto* t = v.as_table();
      if (!t)
        return policy_error(where(source, v) +
                            ": `attributes` must be a table");
      for (const auto& [ak, av] : *t) {
        std::string akey(ak.str());
        if (akey != "must_match")
          return policy_error(where(source, av) + ": unknown key `attributes." +
                              akey + "`; expected `must_match`");
        auto list = read_strings(source, av, "attributes.must_match");
        if (!list)
          return std::move(list).err();
        p.must_match = std::move(*list);
        has_must_match = true;
      }
    } else if (key == "class") {
      const auto* arr = v.as_array();
      if (!arr)
        return policy_error(where(source, v) +
                            ": `class` must be an array of tables ([[class]])");
      std::size_t index = 0;
      for (const auto& e : *arr) {
        const auto* t = e.as_table();
        if (!t)
          return policy_error(where(source, e) +
                              ": each `class` entry must be a table");
        op_class c;
        auto r = read_class(source, *t, index++, c);
        if (!r)
          return std::move(r).err();
        own.push_back(std::move(c));
      }
    } else if (key == "feature") {
      const auto* arr = v.as_array();
      if (!arr)
        return policy_error(where(source, v) + ": `feature` must be an array "
                                               "of tables ([[feature]])");
      std::size_t index = 0;
      for (const auto& e : *arr) {
        const auto* t = e.as_table();
        if (!t)
          return policy_error(where(source, e) +
                              ": each `feature` entry must be a table");
        feature f;
        auto r = read_feature(source, *t, index++, f);
        if (!r)
          return std::move(r).err();
        // A file's feature replaces the base's of the same name.
        std::erase_if(p.features,
                      [&](const feature& o) { return o.name == f.name; });
        p.features.push_back(std::move(f));
      }
    } else {
      return policy_error(where(source, v) + ": unknown key `" + key +
                          "`; a policy has name, description, base, "
                          "unclassified, [attributes], [[class]] and "
                          "[[feature]]");
    }
  }
  (void)has_must_match;
  // Own classes first (first match wins); base classes they rename drop out.
  for (const auto& c : p.classes) {
    bool replaced = false;
    for (const auto& o : own)
      if (o.name == c.name)
        replaced = true;
    if (!replaced)
      own.push_back(c);
  }
  p.classes = std::move(own);
  if (p.name.empty())
    p.name = source;
  return p;
}

kport::result<policy> load_policy(const std::string& name_or_path) {
  auto text = builtin_policy_text(name_or_path);
  if (!text.empty())
    return parse_policy(text, "builtin:" + name_or_path);
  std::error_code ec;
  if (!std::filesystem::exists(name_or_path, ec))
    return kport::fail(kport::error_code::config,
                       "policy `" + name_or_path +
                           "` is neither a built-in (tileir, triton, ptx) "
                           "nor an existing TOML file");
  auto file = read_file(name_or_path);
  if (!file)
    return std::move(file).err();
  return parse_policy(*file, name_or_path);
}

} // namespace kport::ir
