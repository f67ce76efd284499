#include "daemon/orphans.hpp"

#include <cerrno>
#include <csignal>
#include <fstream>
#include <spdlog/spdlog.h>
#include <sstream>
#include <unistd.h>

namespace kport::daemon {

std::int64_t process_start_ticks(int pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  // The command name may hold spaces and parentheses: fields count from
  // the last ')'. starttime is field 22; field 3 follows the ')'.
  auto close = text.rfind(')');
  if (close == std::string::npos)
    return -1;
  std::istringstream rest{text.substr(close + 2)};
  std::string field;
  for (int i = 3; i <= 22 && (rest >> field); ++i)
    if (i == 22)
      return std::stoll(field);
  return -1;
}

int kill_orphaned_groups(evidence::journal& jr) {
  auto groups = jr.process_groups();
  if (!groups) {
    spdlog::error("{}", groups.err().message);
    return 0;
  }
  int killed = 0;
  for (auto& g : *groups) {
    if (g.owner == ::getpid())
      continue;
    auto ticks = process_start_ticks(g.pgid);
    // A live leader must be the one recorded; with the leader gone, Linux
    // keeps its pid from reuse while any member of the group lives.
    bool ours = ticks < 0 || ticks == g.start_ticks;
    if (ours && ::killpg(g.pgid, SIGKILL) == 0) {
      ++killed;
      spdlog::warn("killed process group {} left by kport pid {}", g.pgid,
                   g.owner);
    }
    (void)jr.process_group_ended(g.pgid);
  }
  return killed;
}

} // namespace kport::daemon
