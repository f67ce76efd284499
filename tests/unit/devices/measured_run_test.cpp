// A measured run as the device prepares and runs it: on a GPU the runner
// watches, from outside, which of the run's processes open the GPU; what it
// saw reaches the result as plain data the gates judge.
#include "devices/measured_run.hpp"

#include "core/confinement.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace kport::devices {
namespace {

namespace fs = std::filesystem;

measured_run sh_run(const std::string& script, const fs::path& dir) {
  measured_run r;
  r.what = "bench candidate 1";
  r.process.argv = {"/bin/sh", "-c", script};
  r.process.timeout = std::chrono::seconds(20);
  r.process.box.limits.processes = 64; // a cgroup for the run
  r.trace_dir = (dir / "traces").string();
  return r;
}

TEST(measured_run, a_gpu_run_watches_who_opens_the_gpu_and_a_host_run_not) {
  device_options opts;
  opts.inject_path = "/opt/kport/lib/libkport_inject.so";
  auto dir = fs::temp_directory_path() / "kport-measured-prepare";
  auto gpu = prepare_run(sh_run("true", dir), {"cuda:0", "cuda", "GPU-1"}, opts,
                         "", 1, nullptr);
  EXPECT_EQ(gpu.spec.watch_files, std::vector<std::string>{"/dev/nvidia-uvm"});
  EXPECT_EQ(gpu.spec.watch_maps, std::vector<std::string>{"libcuda.so"});
  auto host = prepare_run(sh_run("true", dir), {"host:0", "host", ""}, opts, "",
                          1, nullptr);
  EXPECT_TRUE(host.spec.watch_files.empty());
}

TEST(measured_run, what_the_runner_saw_and_the_fork_markers_reach_the_result) {
  if (!core::probe_sandbox().cgroup_pids)
    GTEST_SKIP() << "no writable pids cgroup here";
  auto dir = fs::temp_directory_path() /
             fmt::format("kport-measured-run-{}", ::getpid());
  fs::create_directories(dir);
  auto held = dir / "device";
  std::ofstream{held} << "x\n";
  // The "device" is a file here; a fork marker as the injection library
  // writes it, from the run itself (its trace folder is made afresh).
  auto script = fmt::format("printf '1 cuda\\n' > '{0}/fork-4242.txt'; "
                            "exec 3<'{1}'; exec sleep 2",
                            (dir / "traces").string(), held.string());
  device_options opts;
  auto p = prepare_run(sh_run(script, dir), {"cuda:0", "cuda", "GPU-none"},
                       opts, "", 1, nullptr);
  p.spec.watch_files = {held.string()};
  p.spec.watch_maps = {"libcuda.so"};
  auto report = run_prepared(p, nullptr);
  ASSERT_TRUE(report.result) << report.error;
  auto& r = *report.result;
  EXPECT_TRUE(r.outcome.holders_watched);
  // One process: the shell, and the sleep it became if the runner looked
  // both before and after the exec (a changed command line is listed again;
  // in the middle of the exec it reads empty).
  ASSERT_GE(r.gpu_processes.size(), 1u);
  ASSERT_LE(r.gpu_processes.size(), 3u);
  for (auto& p : r.gpu_processes) {
    EXPECT_EQ(p.pid, r.gpu_processes[0].pid);
    EXPECT_TRUE(p.command.rfind("/bin/sh -c", 0) == 0 ||
                p.command == "sleep 2" || p.command.empty())
        << p.command;
    EXPECT_FALSE(p.maps_cuda); // no libcuda in sh or sleep
    EXPECT_EQ(p.cuda_at, 0u);
    EXPECT_GT(p.ppid, 0);
  }
  ASSERT_EQ(r.forks.size(), 1u);
  EXPECT_EQ(r.forks[0].pid, 4242u);
  EXPECT_EQ(r.forks[0].ppid, 1u);
  EXPECT_TRUE(r.forks[0].parent_cuda);
  fs::remove_all(dir);
}

} // namespace
} // namespace kport::devices
