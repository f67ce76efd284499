#pragma once

#include <string>
#include <string_view>

namespace kport::cli {

/// A JSON string literal, quotes included, with control characters escaped.
std::string json_quote(std::string_view s);

} // namespace kport::cli
