#include "core/open_files.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

namespace kport::core {

namespace fs = std::filesystem;

namespace {

/// From /proc/<pid>/status: the innermost pid of `NSpid:` (the pid the
/// process itself sees; `pid` where the kernel does not say) and `PPid:`.
std::pair<int, int> pids_of(int pid) {
  std::pair<int, int> out{pid, 0};
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("NSpid:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      for (int v; fields >> v;)
        out.first = v;
    } else if (line.rfind("PPid:", 0) == 0) {
      out.second = std::atoi(line.c_str() + 5);
    }
  return out;
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

void find_mapped(int pid, const std::vector<std::string>& names,
                 file_holder& h) {
  if (names.empty())
    return;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  auto found = [&](const std::string& n) {
    return std::any_of(h.mapped.begin(), h.mapped.end(),
                       [&](auto& m) { return m.name == n; });
  };
  for (std::string line;
       std::getline(maps, line) && h.mapped.size() < names.size();)
    for (auto& n : names)
      if (!n.empty() && line.find(n) != std::string::npos && !found(n))
        h.mapped.push_back({n, std::strtoull(line.c_str(), nullptr, 16)});
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
      if (!p.empty() && path.rfind(p, 0) == 0) {
        file_holder h;
        h.pid = pid;
        std::tie(h.ns_pid, h.ppid) = pids_of(pid);
        h.file = path;
        h.command = command_of(pid);
        find_mapped(pid, map_names, h);
        return h;
      }
  }
  return std::nullopt;
}

} // namespace kport::core
