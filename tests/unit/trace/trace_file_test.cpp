// The trace reader: what it accepts, what it refuses and how it says so.

#include "messages/trace_generated.h"
#include "trace/trace_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using kport::error_code;
using kport::trace::module_hash;
using kport::trace::read_trace;
using kport::trace::read_trace_dir;

namespace {

std::vector<std::uint8_t> small_trace(std::uint32_t pid) {
  flatbuffers::FlatBufferBuilder fbb;
  kport::msg::TraceT t;
  t.pid = pid;
  t.clock = kport::msg::TraceClock::cupti;
  t.cuda_active = true;
  t.cupti_active = true;
  auto r = std::make_unique<kport::msg::TraceRangeT>();
  r->id = 0;
  r->name = "kport:cfg";
  r->start_ns = 10;
  r->end_ns = 20;
  r->closed = true;
  t.ranges.push_back(std::move(r));
  auto k = std::make_unique<kport::msg::TraceKernelT>();
  k->name = "_Z6kernelPf";
  k->range = 0;
  k->grid = std::make_unique<kport::msg::Dim3>(4, 2, 1);
  t.kernels.push_back(std::move(k));
  t.dropped = std::make_unique<kport::msg::TraceDroppedT>();
  t.dropped->cupti_records = 2;
  t.dropped->range_underflow = 1;
  kport::msg::FinishTraceBuffer(fbb, kport::msg::Trace::Pack(fbb, &t));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

void write(const fs::path& p, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

class trace_file : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("kport-trace-file-" +
         std::string(
             ::testing::UnitTest::GetInstance()->current_test_info()->name()) +
         "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

} // namespace

TEST_F(trace_file, reads_what_the_schema_holds) {
  write(dir_ / "trace-7.kpt", small_trace(7));
  auto t = read_trace((dir_ / "trace-7.kpt").string());
  ASSERT_TRUE(t) << t.err().message;
  EXPECT_EQ(t->pid, 7u);
  EXPECT_EQ(t->clock, "cupti");
  EXPECT_EQ(t->trigger, "exit");
  ASSERT_EQ(t->ranges.size(), 1u);
  EXPECT_EQ(t->ranges[0].name, "kport:cfg");
  EXPECT_EQ(t->ranges[0].parent, -1); // schema default
  ASSERT_EQ(t->kernels.size(), 1u);
  EXPECT_EQ(t->kernels[0].range, 0);
  EXPECT_EQ(t->kernels[0].grid, (std::array<std::uint32_t, 3>{4, 2, 1}));
  EXPECT_EQ(t->kernels[0].block, (std::array<std::uint32_t, 3>{0, 0, 0}));
  EXPECT_EQ(t->dropped, 3u);
  EXPECT_EQ(t->dropped_by.cupti_records, 2u);
}

TEST_F(trace_file, truncated_file_is_a_parse_error_naming_the_file) {
  auto bytes = small_trace(7);
  bytes.resize(bytes.size() / 2);
  auto path = (dir_ / "trace-7.kpt").string();
  write(path, bytes);
  auto t = read_trace(path);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.err().code, error_code::parse);
  EXPECT_EQ(t.err().message.rfind(path + ": ", 0), 0u) << t.err().message;
  EXPECT_NE(t.err().message.find("truncated"), std::string::npos)
      << t.err().message;
}

TEST_F(trace_file, foreign_file_is_refused_by_identifier) {
  auto path = (dir_ / "trace-8.kpt").string();
  std::ofstream(path) << "{\"pid\": 8, \"this\": \"is json, not a trace\"}";
  auto t = read_trace(path);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.err().code, error_code::parse);
  EXPECT_NE(t.err().message.find("KTRC"), std::string::npos) << t.err().message;

  auto tiny = (dir_ / "trace-9.kpt").string();
  std::ofstream(tiny) << "KT";
  auto u = read_trace(tiny);
  ASSERT_FALSE(u);
  EXPECT_NE(u.err().message.find("too short"), std::string::npos);
}

TEST_F(trace_file, missing_file_is_an_io_error) {
  auto t = read_trace((dir_ / "trace-1.kpt").string());
  ASSERT_FALSE(t);
  EXPECT_EQ(t.err().code, error_code::io);
}

TEST_F(trace_file, folder_reads_every_trace_sorted_by_pid) {
  write(dir_ / "trace-300.kpt", small_trace(300));
  write(dir_ / "trace-21.kpt", small_trace(21));
  write(dir_ / "trace-4000.kpt", small_trace(4000));
  // A writer's temp file and unrelated files are not traces.
  write(dir_ / ".trace-5.kpt.tmp", {1, 2, 3});
  std::ofstream(dir_ / "notes.txt") << "x";
  auto ts = read_trace_dir(dir_.string());
  ASSERT_TRUE(ts) << ts.err().message;
  ASSERT_EQ(ts->size(), 3u);
  EXPECT_EQ((*ts)[0].pid, 21u);
  EXPECT_EQ((*ts)[1].pid, 300u);
  EXPECT_EQ((*ts)[2].pid, 4000u);
}

TEST_F(trace_file, folder_with_a_bad_trace_fails_with_its_name) {
  write(dir_ / "trace-1.kpt", small_trace(1));
  write(dir_ / "trace-2.kpt", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto ts = read_trace_dir(dir_.string());
  ASSERT_FALSE(ts);
  EXPECT_NE(ts.err().message.find("trace-2.kpt"), std::string::npos)
      << ts.err().message;
}

TEST_F(trace_file, missing_folder_is_an_io_error) {
  auto ts = read_trace_dir((dir_ / "nope").string());
  ASSERT_FALSE(ts);
  EXPECT_EQ(ts.err().code, error_code::io);
}

TEST(module_hash, is_xxh3_128_canonical_hex) {
  // XXH3-128 of empty input, seed 0 (xxHash's own sanity vector), high half
  // first as XXH128_canonical_t spells it.
  EXPECT_EQ(module_hash("", 0), "99aa06d3014798d86001c324468d497f");
  EXPECT_EQ(module_hash("kport", 5).size(), 32u);
  EXPECT_NE(module_hash("kport", 5), module_hash("kporu", 5));
}
