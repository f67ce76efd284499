#pragma once

#include "kport/error.hpp"

#include <chrono>
#include <set>
#include <string>
#include <toml++/toml.h>
#include <vector>

namespace kport::config {

/// Thrown inside config decoding only; the public loaders turn it into a
/// kport::error at their boundary, so callers never see an exception.
struct config_exception {
  error err;
};

/// Reads one TOML table strictly: typed getters with file:line in every
/// message, and `finish()` refuses keys nobody asked for (typos).
class toml_reader {
public:
  toml_reader(const toml::table& table, std::string file, std::string prefix);

  bool has(std::string_view key) const;
  std::string string(std::string_view key, std::string fallback);
  std::string required_string(std::string_view key);
  double number(std::string_view key, double fallback);
  std::int64_t integer(std::string_view key, std::int64_t fallback);
  bool boolean(std::string_view key, bool fallback);
  std::vector<std::string> strings(std::string_view key,
                                   std::vector<std::string> fallback = {});
  /// A sub-table, or nullptr when absent; wrong types are errors.
  const toml::table* table(std::string_view key);
  toml_reader sub(std::string_view key, const toml::table& t);

  /// Every key of the table; marks them known.
  std::vector<std::string> keys();

  /// Marks a key as read by somebody else (so finish() accepts it).
  void mark_known(std::string_view key) { known_.emplace(key); }

  /// Refuses keys that were not read.
  void finish() const;

  /// From now on a key asked for and absent is an error, whatever fallback
  /// the getter names; sub-readers inherit it. For tables whose every key
  /// has its default in config/kport.default.toml.
  void require_every_key(bool on = true) { every_key_ = on; }

  [[noreturn]] void fail_at(std::string_view key,
                            const std::string& what) const;

  const std::string& file() const { return file_; }

  /// "prefix.key", as users write it in messages.
  std::string qualified(std::string_view key) const;

private:
  const toml::node* get(std::string_view key);
  std::string where(const toml::node* n) const;

  const toml::table& table_;
  std::string file_;
  std::string prefix_;
  std::set<std::string, std::less<>> known_;
  bool every_key_ = false;
};

/// Parses TOML text; a syntax error names file, line and column.
toml::table parse_toml(std::string_view text, const std::string& file);

/// Merges `over` into `base`, table by table; `over` wins on leaves.
void merge_tables(toml::table& base, toml::table&& over);

} // namespace kport::config
