#pragma once

#include "kport/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kport::messages {

/// Names of the schemas compiled into kport: "task", "analyze", "verdict", ...
std::vector<std::string> schema_names();

/// The text of a schema, its includes inlined: what an agent must write.
result<std::string_view> schema_text(std::string_view name);

/// Parses an artifact's JSON strictly against its schema and returns the
/// FlatBuffers binary (with the schema's file identifier).
///
/// The one schema loader of kport. Strict means: unknown fields, wrong types,
/// missing required fields and unknown enum names are errors with the
/// parser's line:column; so is an enum given as a number, and an enum field
/// whose type has an `UNSET` literal that is absent or UNSET (verdicts).
result<std::string> artifact_from_json(std::string_view schema,
                                       std::string_view json,
                                       std::string_view source_name);

/// Renders a binary artifact as strict, indented JSON.
result<std::string> artifact_to_json(std::string_view schema,
                                     std::string_view binary);

/// The literals of the root table's `verdict` enum, UNSET left out.
result<std::vector<std::string>> verdict_literals(std::string_view schema);

/// Reads and validates a JSON artifact file; returns the binary.
result<std::string> load_artifact_file(std::string_view schema,
                                       const std::string& path);

} // namespace kport::messages
