#pragma once

#include "kport/error.hpp"

#include <string>
#include <string_view>

namespace kport::evidence {

/// An artifact in both of its forms: the FlatBuffers binary (with the file
/// identifier) and its JSON. Rendered once, so what the journal hashes is
/// byte for byte what is written.
struct artifact_pair {
  std::string binary;
  std::string json;
};

/// The JSON of `binary` read against `schema`, beside the binary.
result<artifact_pair> render_artifact(std::string_view schema,
                                      std::string binary);

/// Stores an artifact twice, atomically: `<base>.json` (what people and
/// agents read) and `<base>.bin` (what kport validated).
result<void> store_artifact(const std::string& base, const artifact_pair& a);

/// render_artifact, then store_artifact.
result<void> store_artifact(const std::string& base, std::string_view schema,
                            const std::string& binary);

} // namespace kport::evidence
