#pragma once

#include "kport/error.hpp"
#include "messages/protocol_generated.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kport::daemon {

/// The largest request frame the daemon reads (an inline spec fits easily).
inline constexpr std::size_t max_request_bytes = 1u << 20;

/// The request a frame holds, after flatbuffers::Verifier and the size
/// limit; an error says what was wrong with it (for the error reply).
result<const msg::Request*> read_request(const void* data, std::size_t size,
                                         std::size_t limit = max_request_bytes);

/// The request's id when the frame verifies (an error reply then names the
/// request it answers), else 0.
std::uint64_t request_id_of(const void* data, std::size_t size);

/// The request kind's name ("Submit", ...), for logs and metrics.
std::string_view kind_name(msg::RequestBody kind);

} // namespace kport::daemon
