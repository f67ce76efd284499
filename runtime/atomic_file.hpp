#pragma once

#include "runtime/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace kport::runtime {

/// Writes a whole file so that readers see the old content or the new, never
/// a part: temp file in the same folder, fsync, rename, fsync of the folder.
///
/// The one artifact writer of kport; creates missing parent folders.
result<void> write_file_atomic(const std::string& path, std::string_view bytes);

/// Reads a whole file; refuses files larger than `limit` bytes.
result<std::string> read_file(const std::string& path,
                              std::size_t limit = 256u << 20);

} // namespace kport::runtime
