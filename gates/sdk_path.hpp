#pragma once

// Where the Python bench helper (kport_bench) comes from in the processes
// kport runs: its folder goes first on PYTHONPATH, so that a module of the
// same name in the candidate's workspace (or anywhere else) cannot stand in
// for it.

#include <string>
#include <string_view>

namespace kport::gates {

/// The folder holding kport_bench: KPORT_SDK_PYTHON if set, else
/// <prefix>/share/kport/python beside the injection library's <prefix>/lib,
/// else the source tree's sdk/python (a build tree); "" if none exists.
std::string sdk_python_dir(const std::string& inject_path);

/// PYTHONPATH with `sdk` first, then what the process would inherit.
std::string python_path_with_sdk(std::string_view sdk,
                                 std::string_view inherited);

} // namespace kport::gates
