// Defaults only in config/kport.default.toml: what load_config gives without
// user files is what that file says (read here from the file itself, not
// copied into the test), every key of the file is read by the loader, and a
// key the loader asks for must be in the file.

#include "config/toml_reader.hpp"
#include "core/atomic_file.hpp"
#include "kport/config.hpp"

#include <gtest/gtest.h>

namespace kport::config {
namespace {

const std::string default_file =
    std::string{KPORT_SOURCE_DIR} + "/config/kport.default.toml";

toml::table file_defaults() {
  auto text = core::read_file(default_file, 1u << 20);
  EXPECT_TRUE(text) << text.err().message;
  return toml::parse(text ? *text : std::string{});
}

TEST(config_defaults, the_embedded_default_is_the_file) {
  auto text = core::read_file(default_file, 1u << 20);
  ASSERT_TRUE(text) << text.err().message;
  EXPECT_EQ(std::string{default_config_text()}, *text);
}

TEST(config_defaults, loaded_fields_are_the_values_of_the_toml_file) {
  auto t = file_defaults();
  auto cfg = load_config({});
  ASSERT_TRUE(cfg) << cfg.err().message;
  auto num = [&](const char* path) {
    auto v = t.at_path(path).value<double>();
    EXPECT_TRUE(v) << path << " is not in " << default_file;
    return v.value_or(-1);
  };
  auto str = [&](const char* path) {
    return t.at_path(path).value<std::string>().value_or("<missing>");
  };
  auto flag = [&](const char* path) {
    auto v = t.at_path(path).value<bool>();
    EXPECT_TRUE(v) << path << " is not in " << default_file;
    return v.value_or(false);
  };
  EXPECT_EQ(cfg->runtime.runs_dir, str("runtime.runs_dir"));
  EXPECT_EQ(cfg->runtime.max_jobs, num("runtime.max_jobs"));
  EXPECT_EQ(cfg->runtime.queue_limit, num("runtime.queue_limit"));
  EXPECT_EQ(cfg->runtime.agent_log_limit,
            static_cast<std::size_t>(num("runtime.agent_log_limit_mib")) << 20);
  EXPECT_EQ(cfg->runtime.fsync, flag("runtime.fsync"));
  EXPECT_EQ(cfg->devices.backend, str("devices.backend"));
  EXPECT_EQ(cfg->devices.lease_settle_ms, num("devices.lease_settle_ms"));
  EXPECT_EQ(cfg->devices.lease_hold, str("devices.lease_hold"));
  EXPECT_EQ(cfg->devices.lease_quiet, flag("devices.lease_quiet"));
  EXPECT_EQ(cfg->gates.test_timeout.count(), num("gates.test_timeout_s"));
  EXPECT_EQ(cfg->gates.build_timeout.count(), num("gates.build_timeout_s"));
  EXPECT_DOUBLE_EQ(cfg->perf.floor, num("perf.floor"));
  EXPECT_EQ(cfg->perf.rounds, num("perf.rounds"));
  EXPECT_DOUBLE_EQ(cfg->perf.foreign_share, num("perf.foreign_share"));
  EXPECT_EQ(cfg->agents.driver, str("agents.driver"));
  EXPECT_DOUBLE_EQ(cfg->agents.timeout_s, num("agents.timeout_s"));
  EXPECT_EQ(cfg->daemon.grace_s, num("daemon.grace_s"));
  EXPECT_EQ(cfg->daemon.max_watchers, num("daemon.max_watchers"));
  EXPECT_EQ(cfg->sandbox.mode, str("sandbox.mode"));
  EXPECT_EQ(cfg->sandbox.memory_bytes,
            static_cast<std::uint64_t>(num("sandbox.memory_mib")) << 20);
  EXPECT_EQ(cfg->sandbox.open_files, num("sandbox.open_files"));
}

TEST(config_defaults, every_key_of_the_toml_file_is_read_by_the_loader) {
  // The loader refuses keys it did not read (toml_reader::finish), so the
  // defaults loading at all means it read each key of the file; and each
  // table of the file is checked so: an extra key there is refused.
  ASSERT_TRUE(load_config({}));
  auto t = file_defaults();
  int tables = 0;
  for (auto& [name, node] : t) {
    if (!node.is_table() || name.str() == "pipeline")
      continue;
    ++tables;
    auto user = "[" + std::string{name.str()} + "]\nno_such_key = 1\n";
    auto cfg = load_config_text(user, "user.toml");
    ASSERT_FALSE(cfg) << name.str() << ": an unread key was accepted";
    EXPECT_NE(cfg.err().message.find(std::string{name.str()} + ".no_such_key"),
              std::string::npos)
        << cfg.err().message;
  }
  EXPECT_GE(tables, 7); // runtime devices gates perf agents daemon sandbox
}

TEST(config_defaults, a_key_the_loader_asks_for_must_be_in_the_defaults) {
  // What keeps a field from silently taking its C++ value-initialised value
  // when somebody adds it to the loader but not to kport.default.toml.
  auto t = toml::parse("[perf]\nfloor = 0.9\n");
  toml_reader top{t, "kport.default.toml", ""};
  top.require_every_key();
  auto* perf = top.table("perf");
  ASSERT_NE(perf, nullptr);
  auto r = top.sub("perf", *perf);
  EXPECT_DOUBLE_EQ(r.number("floor", 0), 0.9);
  try {
    (void)r.integer("rounds", 0);
    ADD_FAILURE() << "a missing key was given its fallback";
  } catch (config_exception& e) {
    EXPECT_NE(e.err.message.find("perf.rounds"), std::string::npos)
        << e.err.message;
    EXPECT_NE(e.err.message.find("missing"), std::string::npos)
        << e.err.message;
  }
  try {
    (void)top.table("runtime");
    ADD_FAILURE() << "a missing table was taken as absent";
  } catch (config_exception&) {
  }
}

} // namespace
} // namespace kport::config
