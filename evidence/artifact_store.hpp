#pragma once

#include "kport/error.hpp"

#include <string>
#include <string_view>

namespace kport::evidence {

/// Stores an artifact twice, atomically: `<base>.json` (what people and
/// agents read) and `<base>.bin` (FlatBuffers with the file identifier).
result<void> store_artifact(const std::string& base, std::string_view schema,
                            const std::string& binary);

} // namespace kport::evidence
