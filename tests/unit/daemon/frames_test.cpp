#include "daemon/frames.hpp"

#include <gtest/gtest.h>
#include <string>

namespace kport::daemon {
namespace {

std::string request_bytes(std::uint64_t id) {
  flatbuffers::FlatBufferBuilder b;
  auto body = msg::CreateCancelRequestDirect(b, "job-1").Union();
  msg::FinishRequestBuffer(
      b, msg::CreateRequest(b, id, msg::RequestBody::CancelRequest, body));
  return {reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()};
}

TEST(frames, a_valid_request_is_read_with_its_id_and_kind) {
  auto bytes = request_bytes(42);
  auto r = read_request(bytes.data(), bytes.size());
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ((*r)->id(), 42u);
  EXPECT_EQ(kind_name((*r)->body_type()), "Cancel");
  EXPECT_EQ((*r)->body_as_CancelRequest()->job()->str(), "job-1");
  EXPECT_EQ(request_id_of(bytes.data(), bytes.size()), 42u);
}

TEST(frames, a_request_cut_into_its_data_is_refused_not_read) {
  auto bytes = request_bytes(7);
  // The last bytes may be alignment padding (up to 3 here) that nothing
  // reads; every cut beyond them loses data the verifier must miss.
  for (std::size_t n = 0; n + 3 < bytes.size(); ++n) {
    auto r = read_request(bytes.data(), n);
    EXPECT_FALSE(r) << "a frame cut to " << n << " bytes was accepted";
  }
}

TEST(frames, a_frame_over_the_limit_is_refused_by_its_size) {
  auto bytes = request_bytes(7);
  auto r = read_request(bytes.data(), bytes.size(), bytes.size() - 1);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("over the limit"), std::string::npos);
}

TEST(frames, another_table_without_the_identifier_is_not_a_request) {
  flatbuffers::FlatBufferBuilder b;
  b.Finish(msg::CreateEventDirect(b, 1, "x", "y"));
  auto r = read_request(b.GetBufferPointer(), b.GetSize());
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("KPRQ"), std::string::npos);
  EXPECT_EQ(request_id_of(b.GetBufferPointer(), b.GetSize()), 0u);
}

TEST(frames, an_unknown_kind_and_a_missing_body_are_named) {
  flatbuffers::FlatBufferBuilder b;
  auto body = msg::CreateShutdownRequest(b).Union();
  msg::FinishRequestBuffer(
      b, msg::CreateRequest(b, 3, static_cast<msg::RequestBody>(99), body));
  auto r = read_request(b.GetBufferPointer(), b.GetSize());
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("unknown request kind 99"), std::string::npos);
  EXPECT_EQ(request_id_of(b.GetBufferPointer(), b.GetSize()), 3u);

  flatbuffers::FlatBufferBuilder e;
  msg::FinishRequestBuffer(e, msg::CreateRequest(e, 4));
  auto none = read_request(e.GetBufferPointer(), e.GetSize());
  ASSERT_FALSE(none);
  EXPECT_NE(none.err().message.find("no body"), std::string::npos);
}

} // namespace
} // namespace kport::daemon
