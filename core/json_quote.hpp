#pragma once

#include <string>
#include <string_view>

namespace kport::core {

/// A JSON string literal, quotes included, with control characters escaped:
/// the one JSON string writer of kport (CLI output, IR reports).
std::string json_quote(std::string_view s);

} // namespace kport::core
