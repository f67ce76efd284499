#include "config/profiles.hpp"

#include "config/toml_reader.hpp"
#include "core/atomic_file.hpp"

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <regex>
#include <set>

namespace kport::config {

extern const embedded_file embedded_profiles[];

namespace fs = std::filesystem;

namespace {

/// The user's profiles folder, or "" for the built-in tree.
std::string override_dir() {
  const char* d = std::getenv("KPORT_PROFILES");
  return d && *d ? std::string{d} : std::string{};
}

} // namespace

std::string profiles_source() {
  auto d = override_dir();
  return d.empty() ? std::string{"built in"} : d;
}

result<std::string> profile_file(std::string_view rel) {
  if (rel.find("..") != std::string_view::npos)
    return fail(error_code::config,
                fmt::format("profile path `{}` leaves the profiles tree", rel));
  if (auto d = override_dir(); !d.empty())
    return core::read_file((fs::path{d} / rel).string(), 1u << 20);
  for (auto* f = embedded_profiles; f->path; ++f)
    if (rel == f->path)
      return std::string{f->text};
  return fail(error_code::config,
              fmt::format("no file `{}` in the built-in profiles", rel));
}

std::vector<std::string> profile_files(std::string_view prefix) {
  std::vector<std::string> out;
  if (auto d = override_dir(); !d.empty()) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator{d, ec};
         !ec && it != fs::recursive_directory_iterator{}; it.increment(ec))
      if (it->is_regular_file()) {
        auto rel = fs::relative(it->path(), d).generic_string();
        if (rel.starts_with(prefix))
          out.push_back(rel);
      }
  } else {
    for (auto* f = embedded_profiles; f->path; ++f)
      if (std::string_view{f->path}.starts_with(prefix))
        out.emplace_back(f->path);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> profile_names() {
  std::set<std::string> names;
  for (auto& rel : profile_files(""))
    if (auto slash = rel.find('/');
        slash != std::string::npos && rel.substr(slash) == "/profile.toml")
      names.insert(rel.substr(0, slash));
  return {names.begin(), names.end()};
}

result<profile> load_profile(std::string_view name) {
  auto rel = fmt::format("{}/profile.toml", name);
  auto text = profile_file(rel);
  if (!text) {
    std::string all;
    for (auto& n : profile_names())
      all += (all.empty() ? "" : ", ") + n;
    return fail(error_code::config,
                fmt::format("no profile `{}` ({}); profiles: {}", name,
                            profiles_source(), all));
  }
  try {
    auto t = parse_toml(*text, rel);
    toml_reader r{t, rel, ""};
    profile p;
    p.name = r.required_string("name");
    p.description = r.string("description", "");
    p.source = r.string("source", "");
    p.target = r.string("target", "");
    p.fill_in = r.strings("fill_in");
    p.files = r.strings("files");
    r.finish();
    auto spec = profile_file(fmt::format("{}/spec.toml", name));
    if (!spec)
      return std::move(spec).err();
    p.spec_template = std::move(*spec);
    return p;
  } catch (config_exception& e) {
    return std::move(e.err);
  }
}

result<std::string> stage_contract(std::string_view profile,
                                   std::string_view stage) {
  if (!profile.empty())
    if (auto own =
            profile_file(fmt::format("{}/contracts/{}.md", profile, stage)))
      return own;
  return profile_file(fmt::format("contracts/{}.md", stage));
}

std::vector<std::string> adapter_names() {
  std::vector<std::string> out;
  for (auto& rel : profile_files("adapters/"))
    if (rel.ends_with(".toml"))
      out.push_back(rel.substr(9, rel.size() - 9 - 5));
  return out;
}

result<agent_adapter> load_adapter(std::string_view name) {
  auto rel = fmt::format("adapters/{}.toml", name);
  auto text = profile_file(rel);
  if (!text) {
    std::string all;
    for (auto& n : adapter_names())
      all += (all.empty() ? "" : ", ") + n;
    return fail(error_code::config,
                fmt::format("no agent adapter `{}`; adapters: {}", name, all));
  }
  try {
    auto t = parse_toml(*text, rel);
    // [[usage]] is read below, entry by entry; the reader sees the rest.
    toml::table plain = t;
    plain.erase("usage");
    toml_reader r{plain, rel, ""};
    agent_adapter a;
    a.name = r.required_string("name");
    a.description = r.string("description", "");
    a.docs = r.string("docs", "");
    a.command = r.strings("command");
    if (a.command.empty())
      r.fail_at("command", "is required: the CLI's argv");
    if (auto* env = r.table("env")) {
      auto er = r.sub("env", *env);
      for (auto& k : er.keys())
        a.env.emplace_back(k, er.string(k, ""));
    }
    if (auto* arr = t.get_as<toml::array>("usage")) {
      for (std::size_t i = 0; i < arr->size(); ++i) {
        auto* u = arr->get_as<toml::table>(i);
        if (!u)
          r.fail_at("usage", "must be an array of tables ([[usage]])");
        auto ur = r.sub(fmt::format("usage[{}]", i), *u);
        usage_pattern p;
        p.field = ur.required_string("field");
        if (p.field != "input_tokens" && p.field != "output_tokens" &&
            p.field != "cost_usd")
          ur.fail_at("field", "must be input_tokens, output_tokens or "
                              "cost_usd");
        p.pattern = ur.required_string("pattern");
        try {
          std::regex re{p.pattern};
          if (re.mark_count() < 1)
            ur.fail_at("pattern", "needs a capture group: the number");
        } catch (const std::regex_error& e) {
          ur.fail_at("pattern",
                     fmt::format("is not a valid regex: {}", e.what()));
        }
        auto agg = ur.string("aggregate", "last");
        if (agg != "last" && agg != "sum")
          ur.fail_at("aggregate", "must be \"last\" or \"sum\"");
        p.sum = agg == "sum";
        ur.finish();
        a.usage.push_back(std::move(p));
      }
    }
    r.finish();
    return a;
  } catch (config_exception& e) {
    return std::move(e.err);
  }
}

} // namespace kport::config
