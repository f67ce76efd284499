#include "config/toml_reader.hpp"

#include <fmt/format.h>

namespace kport::config {

toml_reader::toml_reader(const toml::table& table, std::string file,
                         std::string prefix)
    : table_(table)
    , file_(std::move(file))
    , prefix_(std::move(prefix)) {}

std::string toml_reader::qualified(std::string_view key) const {
  return prefix_.empty() ? std::string{key}
                         : fmt::format("{}.{}", prefix_, key);
}

std::string toml_reader::where(const toml::node* n) const {
  // A merged table holds nodes from several files; each node knows its own.
  if (n && n->source().begin.line > 0)
    return fmt::format("{}:{}", n->source().path ? *n->source().path : file_,
                       n->source().begin.line);
  if (table_.source().begin.line > 0)
    return fmt::format("{}:{}", file_, table_.source().begin.line);
  return file_;
}

void toml_reader::fail_at(std::string_view key, const std::string& what) const {
  throw config_exception{fail(
      error_code::config, fmt::format("{}: key `{}` {}", where(table_.get(key)),
                                      qualified(key), what))};
}

const toml::node* toml_reader::get(std::string_view key) {
  known_.emplace(key);
  auto* n = table_.get(key);
  if (!n && every_key_)
    fail_at(key, "is missing: config/kport.default.toml must give every key "
                 "its default");
  return n;
}

bool toml_reader::has(std::string_view key) const {
  return table_.contains(key);
}

std::string toml_reader::string(std::string_view key, std::string fallback) {
  auto* n = get(key);
  if (!n)
    return fallback;
  if (auto* s = n->as_string())
    return s->get();
  fail_at(key, "must be a string");
}

std::string toml_reader::required_string(std::string_view key) {
  if (!has(key))
    throw config_exception{fail(
        error_code::config, fmt::format("{}: key `{}` is required (a string)",
                                        where(nullptr), qualified(key)))};
  auto s = string(key, {});
  if (s.empty())
    fail_at(key, "must not be empty");
  return s;
}

double toml_reader::number(std::string_view key, double fallback) {
  auto* n = get(key);
  if (!n)
    return fallback;
  if (auto* f = n->as_floating_point())
    return f->get();
  if (auto* i = n->as_integer())
    return static_cast<double>(i->get());
  fail_at(key, "must be a number");
}

std::int64_t toml_reader::integer(std::string_view key, std::int64_t fallback) {
  auto* n = get(key);
  if (!n)
    return fallback;
  if (auto* i = n->as_integer())
    return i->get();
  fail_at(key, "must be an integer");
}

bool toml_reader::boolean(std::string_view key, bool fallback) {
  auto* n = get(key);
  if (!n)
    return fallback;
  if (auto* b = n->as_boolean())
    return b->get();
  fail_at(key, "must be true or false");
}

std::vector<std::string>
toml_reader::strings(std::string_view key, std::vector<std::string> fallback) {
  auto* n = get(key);
  if (!n)
    return fallback;
  auto* arr = n->as_array();
  if (!arr)
    fail_at(key, "must be a list of strings");
  std::vector<std::string> out;
  for (auto& item : *arr) {
    auto* s = item.as_string();
    if (!s)
      fail_at(key, "must be a list of strings");
    out.push_back(s->get());
  }
  return out;
}

const toml::table* toml_reader::table(std::string_view key) {
  auto* n = get(key);
  if (!n)
    return nullptr;
  if (auto* t = n->as_table())
    return t;
  fail_at(key, "must be a table");
}

toml_reader toml_reader::sub(std::string_view key, const toml::table& t) {
  toml_reader r{t, file_, qualified(key)};
  r.every_key_ = every_key_;
  return r;
}

std::vector<std::string> toml_reader::keys() {
  std::vector<std::string> out;
  for (auto& [k, v] : table_) {
    known_.emplace(k.str());
    out.emplace_back(k.str());
  }
  return out;
}

void toml_reader::finish() const {
  for (auto& [k, v] : table_)
    if (!known_.count(k.str()))
      throw config_exception{
          fail(error_code::config,
               fmt::format("{}: unknown key `{}` (check the spelling; `kport "
                           "config` prints every known key)",
                           where(&v), qualified(k.str())))};
}

toml::table parse_toml(std::string_view text, const std::string& file) {
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    throw config_exception{
        fail(error_code::config,
             fmt::format("{}:{}:{}: {}", file, e.source().begin.line,
                         e.source().begin.column, e.description()))};
  }
}

void merge_tables(toml::table& base, toml::table&& over) {
  // Moved, not copied: toml++ copies drop the source region, and error
  // messages need the file and line each value came from.
  for (auto&& [k, v] : over) {
    auto* mine = base.get(k);
    if (mine && mine->is_table() && v.is_table())
      merge_tables(*mine->as_table(), std::move(*v.as_table()));
    else
      base.insert_or_assign(k, std::move(v));
  }
}

} // namespace kport::config
