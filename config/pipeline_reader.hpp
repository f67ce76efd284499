#pragma once

#include "pipeline/pipeline_table.hpp"

namespace kport::config {

class toml_reader;

/// Decodes and validates `[pipeline]`: unknown stages in routes, verdict
/// keys that are not literals of the stage, caps below 1 are errors.
pipeline::pipeline_table read_pipeline_table(toml_reader& pipeline);

} // namespace kport::config
