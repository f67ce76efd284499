#pragma once

#include "gates/gate_context.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kport::gates {

/// Which side of a port a command belongs to.
enum class side { reference, candidate };

const char* to_string(side s) noexcept;

/// Replaces {reference}, {workspace}, {out} and {job} in every argument.
std::vector<std::string> substitute(const std::vector<std::string>& argv,
                                    const gate_context& ctx);

/// A process for one of the spec's commands: cwd, the KPORT_* environment,
/// its log and its timeout.
core::process_spec side_process(const gate_context& ctx, side s,
                                const std::vector<std::string>& argv,
                                const std::string& log_path,
                                std::chrono::seconds timeout);

/// Where the reference's evidence of this attempt's gate `gate` is written
/// while the candidate's processes run: a fresh folder in the reference's
/// cache folder, which the candidate's sandbox hides (the attempt folder
/// is theirs to write). Empty without a job folder (nothing is hidden then).
std::string reference_private_dir(const gate_context& ctx,
                                  std::string_view gate);

/// Builds the reference once per job (a marker in {out} remembers it).
result<void> ensure_reference_built(const gate_context& ctx);

/// Runs the target's build command in the workspace, if the spec has one.
/// Returns the outcome, or nothing when there is no build command.
result<core::process_outcome> build_target(const gate_context& ctx,
                                           const std::string& log_path);

} // namespace kport::gates
