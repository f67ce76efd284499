#include "core/json_quote.hpp"

#include <gtest/gtest.h>

namespace kport::core {
namespace {

TEST(json_quote, quotes_and_escapes_control_characters) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("a\"b\\c\nd\te"), "\"a\\\"b\\\\c\\nd\\te\"");
  EXPECT_EQ(json_quote(std::string{"\x01", 1}), "\"\\u0001\"");
}

} // namespace
} // namespace kport::core
