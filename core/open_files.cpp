#include "core/open_files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kport::core {

namespace fs = std::filesystem;

namespace {

/// The innermost pid of `NSpid:` in /proc/<pid>/status (the pid the
/// process itself sees), or `pid` where the kernel does not say.
int innermost_pid(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("NSpid:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      int last = pid;
      for (int v; fields >> v;)
        last = v;
      return last;
    }
  return pid;
}

std::string command_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline",
                   std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), {});
  while (!raw.empty() && raw.back() == '\0')
    raw.pop_back();
  for (auto& c : raw)
    if (c == '\0')
      c = ' ';
  return raw;
}

std::vector<std::string> mapped_names(int pid,
                                      const std::vector<std::string>& names) {
  std::vector<std::string> out;
  if (names.empty())
    return out;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line) && out.size() < names.size();)
    for (auto& n : names)
      if (!n.empty() && line.find(n) != std::string::npos &&
          std::find(out.begin(), out.end(), n) == out.end())
        out.push_back(n);
  return out;
}

} // namespace

std::optional<file_holder>
holder_of(int pid, const std::vector<std::string>& prefixes,
          const std::vector<std::string>& map_names) {
  std::error_code ec;
  fs::directory_iterator fds{"/proc/" + std::to_string(pid) + "/fd", ec};
  if (ec)
    return std::nullopt;
  for (auto& e : fds) {
    auto target = fs::read_symlink(e.path(), ec);
    if (ec)
      continue;
    auto path = target.string();
    for (auto& p : prefixes)
      if (!p.empty() && path.rfind(p, 0) == 0)
        return file_holder{pid, innermost_pid(pid), path, command_of(pid),
                           mapped_names(pid, map_names)};
  }
  return std::nullopt;
}

} // namespace kport::core
