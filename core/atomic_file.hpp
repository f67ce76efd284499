#pragma once

#include "kport/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace kport::core {

/// Writes a whole file so that readers see the old content or the new, never
/// a part: temp file in the same folder, fsync, rename, fsync of the folder.
///
/// The one artifact writer of kport; creates missing parent folders. The
/// fsyncs cost about 0.7 ms a write on the build machines' disks: see
/// set_durable_writes.
result<void> write_file_atomic(const std::string& path, std::string_view bytes);

/// Whether write_file_atomic also fsyncs (durable across power loss) or
/// only renames (atomic for readers, durable across process crashes).
/// Process-wide: it is an I/O policy of the whole runtime (runtime.fsync).
void set_durable_writes(bool durable) noexcept;

/// Reads a whole file; refuses files larger than `limit` bytes.
result<std::string> read_file(const std::string& path,
                              std::size_t limit = 256u << 20);

} // namespace kport::core
