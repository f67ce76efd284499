#include "gpu/cpu_split.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sched.h>

namespace kport::gpu {

namespace fs = std::filesystem;

std::optional<cpu_split> split_cpus(const std::vector<int>& allowed,
                                    int holder_cpus, int devices) {
  if (holder_cpus <= 0 || devices <= 0)
    return std::nullopt;
  auto reserved = static_cast<std::size_t>(holder_cpus) * devices;
  if (reserved >= allowed.size())
    return std::nullopt;
  cpu_split out;
  auto end = allowed.end();
  for (int d = 0; d < devices; ++d) {
    out.holder.emplace_back(end - holder_cpus, end);
    end -= holder_cpus;
  }
  out.others.assign(allowed.begin(), end);
  return out;
}

std::vector<int> allowed_cpus() {
  auto cpus = thread_cpus(0);
  return cpus ? std::move(*cpus) : std::vector<int>{};
}

result<int> set_process_cpus(int pid, const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    CPU_SET(c, &set);
  std::error_code ec;
  fs::directory_iterator tasks{fs::path{"/proc"} / std::to_string(pid) / "task",
                               ec};
  if (ec)
    return fail(error_code::process,
                fmt::format("process {} is gone ({})", pid, ec.message()));
  int moved = 0;
  for (auto& task : tasks) {
    int tid = std::atoi(task.path().filename().c_str());
    if (tid <= 0)
      continue;
    if (::sched_setaffinity(tid, sizeof(set), &set) == 0)
      ++moved;
    else if (errno != ESRCH) // ended meanwhile: nothing to move
      return fail(
          error_code::process,
          fmt::format("cannot move thread {} of process {} onto CPUs {}: {}",
                      tid, pid, fmt::join(cpus, ","), std::strerror(errno)));
  }
  return moved;
}

result<std::vector<int>> thread_cpus(int tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(tid, sizeof(set), &set) != 0)
    return fail(error_code::process,
                fmt::format("cannot read the CPUs of thread {}: {}", tid,
                            std::strerror(errno)));
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set))
      out.push_back(c);
  return out;
}

} // namespace kport::gpu
