// The trace rules of issue 20 on small traces built here: each fires on the
// cheat it is for and stays quiet on the honest trace of the same bench.
// The bench is kport_bench's shape: per config a warm-up range, then per
// timed call the helper's input generation and L2 flush outside the window,
// the call inside `kport:<config>`, and a digest after it.
#include "gates/integrity.hpp"
#include "tests/support/bench_trace.hpp"

#include <functional>
#include <gtest/gtest.h>

namespace kport::gates {
namespace {

using test_support::bench;
using test_support::bench_shape;
using test_support::builder;
using test_support::call_fn;
using test_support::launches;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

const run_label where{"bench candidate 1", "candidate", 1};

port_spec spec() {
  port_spec s;
  s.reference.kernels = {"ref_kernel*"};
  s.target.kernels = {"port_kernel*"};
  return s;
}

std::vector<integrity_finding> harness(const trace::trace& cand,
                                       const trace::trace& ref) {
  auto f = check_range_structure({cand}, {ref}, where);
  for (auto& x : check_outside_work({cand}, {ref}, spec(), where))
    f.push_back(x);
  order_findings(f);
  return f;
}

const trace::trace& reference() {
  static auto t = bench(launches("ref_kernel"));
  return t;
}

// ---- item 1: copies and memsets are device time ------------------------

TEST(trace_integrity, copies_and_memsets_in_the_window_count_as_device_time) {
  auto t = bench([](builder& b, const std::string&, int) {
    b.kernel("port_kernel", 100);
    b.copy(1 << 20, 300);
  });
  auto s = samples_from_traces({t}, time_source::kernel_sum);
  ASSERT_EQ(s.per_config["a"].size(), 3u);
  EXPECT_EQ(s.per_config["a"][0], 400.0);
  // The span holds the gap between them too.
  EXPECT_EQ(s.span["a"][0], 100.0 + 10 + 300);
  EXPECT_TRUE(contains(describe(s.kernels["a"][0]), "[memcpy DtoD] 1048576"))
      << describe(s.kernels["a"][0]);
}

// ---- item 2: every launch accounted for --------------------------------

TEST(trace_integrity, a_launch_without_its_record_is_trace_tampered) {
  auto honest = bench(launches("port_kernel"));
  EXPECT_TRUE(
      check_trace_tampering({honest}, launch_scope::bench, where).empty());
  // cupti_off: activity switched off around the real kernel, the launch
  // callback still saw it.
  auto cheat = bench([](builder& b, const std::string&, int i) {
    b.kernel("port_kernel", 5);
    b.kernel("port_kernel_real", 500, 1, /*record=*/i == 0);
  });
  auto f = check_trace_tampering({cheat}, launch_scope::bench, where);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::trace_tampered);
  EXPECT_EQ(f[0].count, 6);
  EXPECT_TRUE(contains(f[0].detail, "thread 100 (the main thread)"))
      << f[0].detail;
  EXPECT_TRUE(contains(f[0].detail, "range `kport:a`")) << f[0].detail;
}

TEST(trace_integrity,
     dropped_records_captures_and_failed_calls_are_no_tampering) {
  auto cheat = bench([](builder& b, const std::string&, int) {
    b.kernel("port_kernel", 500, 1, /*record=*/false);
  });
  auto dropped = cheat;
  dropped.dropped_by.cupti_records = 3;
  EXPECT_TRUE(
      check_trace_tampering({dropped}, launch_scope::bench, where).empty());
  auto captured = cheat;
  for (auto& l : captured.launches)
    l.captured = true;
  EXPECT_TRUE(
      check_trace_tampering({captured}, launch_scope::bench, where).empty());
  auto failed = cheat;
  for (auto& l : failed.launches)
    l.ok = false;
  EXPECT_TRUE(
      check_trace_tampering({failed}, launch_scope::bench, where).empty());
  auto host_func = cheat;
  for (auto& l : host_func.launches)
    l.api = "cuLaunchHostFunc";
  EXPECT_TRUE(
      check_trace_tampering({host_func}, launch_scope::bench, where).empty());
}

TEST(trace_integrity, a_gpu_process_without_a_cuda_trace_is_missing_evidence) {
  auto bench_trace = bench(launches("port_kernel")); // pid 100
  devices::gpu_process main{5100, 100, 5000, "python3 bench.py", true, 0x7f00};
  EXPECT_FALSE(untraced_gpu_process({main}, {bench_trace}, {}, "the bench"));
  // A helper process that dropped the injection variables: libcuda mapped
  // (at an address of its own), the GPU open, no trace.
  devices::gpu_process worker{5107, 107,   5100, "python3 -c serve()",
                              true, 0x7a00};
  auto why =
      untraced_gpu_process({main, worker}, {bench_trace}, {}, "the bench");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "process 107 of the bench (`python3 -c serve()`)"))
      << *why;
  // Its trace without CUDA is no better.
  auto nvtx_only = bench_trace;
  nvtx_only.pid = 107;
  nvtx_only.cuda_active = false;
  EXPECT_TRUE(untraced_gpu_process({main, worker}, {bench_trace, nvtx_only}, {},
                                   "the bench"));
  // A tool that inherited the device file but never loaded the driver.
  devices::gpu_process ptxas{5108, 108, 5100, "ptxas -arch=sm_90", false, 0};
  EXPECT_FALSE(
      untraced_gpu_process({main, ptxas}, {bench_trace}, {}, "the bench"));
}

TEST(trace_integrity, a_fork_copy_of_a_cuda_process_is_no_missing_evidence) {
  auto bench_trace = bench(launches("port_kernel")); // pid 100
  devices::gpu_process main{5100, 100, 5000, "python3 bench.py", true, 0x7f00};
  // multiprocessing's fork worker after CUDA: the parent's files and
  // address space, ends with _exit.
  devices::gpu_process copy{5109, 109, 5100, "python3 bench.py", true, 0x7f00};
  trace::fork_marker marker{109, 100, true};
  EXPECT_FALSE(
      untraced_gpu_process({main, copy}, {bench_trace}, {marker}, "the bench"));
  // Without its marker, or forked before its parent had CUDA (the child may
  // have started its own): not excused.
  EXPECT_TRUE(
      untraced_gpu_process({main, copy}, {bench_trace}, {}, "the bench"));
  auto before_cuda = marker;
  before_cuda.parent_cuda = false;
  EXPECT_TRUE(untraced_gpu_process({main, copy}, {bench_trace}, {before_cuda},
                                   "the bench"));
  // Forked, then exec'd a program (libcuda mapped afresh elsewhere): a
  // process of its own, whatever marker the candidate wrote for it.
  auto execed = copy;
  execed.cuda_at = 0x7b00;
  EXPECT_TRUE(untraced_gpu_process({main, execed}, {bench_trace}, {marker},
                                   "the bench"));
  // A parent that is not a traced CUDA process of the run.
  auto orphan = copy;
  orphan.ppid = 4000;
  EXPECT_TRUE(untraced_gpu_process({main, orphan}, {bench_trace}, {marker},
                                   "the bench"));
}

TEST(trace_integrity, an_unguarded_process_is_a_note_once_per_reason) {
  auto guarded = bench(launches("port_kernel"));
  EXPECT_TRUE(unguarded_notes({guarded}, "the test run").empty());
  auto unguarded = guarded;
  unguarded.guard_error = "the guard patches x86-64 code only";
  auto other = unguarded;
  other.pid = 101;
  auto notes = unguarded_notes({unguarded, other, guarded}, "the test run");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(contains(notes[0], "not guarded in the test run (process 100): "
                                 "the guard patches x86-64 code only"))
      << notes[0];
  // No CUPTI, no guard to speak of: missing_evidence says why.
  unguarded.cupti_active = false;
  EXPECT_TRUE(unguarded_notes({unguarded}, "the test run").empty());
}

TEST(trace_integrity, a_copy_or_memset_without_a_record_is_no_tampering) {
  // An honest empty-tensor path: cudaMemsetAsync(p, 0, 0) succeeds and the
  // device does nothing, so CUPTI writes no record; the callbacks do not
  // see the size.
  auto empty = bench([](builder& b, const std::string&, int) {
    b.kernel("port_kernel", 100);
    b.t.launches.push_back({b.corr++, "cudaMemsetAsync", false, 100, b.top(),
                            b.clock, 0, true, false});
    b.t.launches.push_back({b.corr++, "cuMemcpyDtoDAsync_v2", true, 100,
                            b.top(), b.clock, 0, true, false});
  });
  EXPECT_TRUE(
      check_trace_tampering({empty}, launch_scope::bench, where).empty());
  EXPECT_FALSE(leaves_activity("cudaMemsetAsync"));
  EXPECT_FALSE(leaves_activity("cuMemcpyHtoD_v2"));
  EXPECT_TRUE(leaves_activity("cuLaunchKernelEx"));
  EXPECT_TRUE(leaves_activity("cudaGraphLaunch"));
}

TEST(trace_integrity, a_runtime_launch_is_accounted_for_by_its_driver_call) {
  builder b;
  b.push("kport:a");
  // cudaLaunchKernel (runtime, 7) made cuLaunchKernel (driver, 8): the
  // record carries the driver's id.
  b.t.launches.push_back(
      {7, "cudaLaunchKernel_v7000", false, 100, 0, b.clock, 0, true, false});
  b.t.launches.push_back(
      {8, "cuLaunchKernel", true, 100, 0, b.clock, 7, true, false});
  trace::trace_kernel k;
  k.name = "port_kernel";
  k.correlation = 8;
  k.range = 0;
  b.t.kernels.push_back(k);
  b.pop();
  EXPECT_TRUE(check_trace_tampering({b.t}, launch_scope::bench, where).empty());
  b.t.kernels.clear();
  EXPECT_EQ(check_trace_tampering({b.t}, launch_scope::bench, where).size(),
            1u);
}

TEST(trace_integrity,
     cupti_switched_off_before_the_last_window_is_trace_tampered) {
  auto t = bench(launches("port_kernel"));
  t.tampers.push_back({"cuptiActivityDisable", 10, 100, 1500});
  auto f = check_trace_tampering({t}, launch_scope::bench, where);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].detail, "cuptiActivityDisable x1")) << f[0].detail;
  // At exit, after the bench: a library tearing CUPTI down.
  t.tampers[0].time_ns = t.ranges.back().end_ns + 1000;
  EXPECT_TRUE(check_trace_tampering({t}, launch_scope::bench, where).empty());
}

TEST(trace_integrity, the_caller_is_named_and_the_profilers_own_calls_pass) {
  auto t = bench(launches("port_kernel"));
  t.tampers.push_back({"cuptiActivityDisable", 10, 100, 1500,
                       "/usr/lib/x86_64-linux-gnu/libffi.so.8"});
  auto f = check_trace_tampering({t}, launch_scope::test, where);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].detail, "code in /usr/lib/x86_64-linux-gnu/libffi"))
      << f[0].detail;
  // torch.profiler in a suite: kineto inside torch's installed libraries,
  // and CUPTI's own teardown.
  for (const char* tool :
       {"/usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so",
        "/opt/venv/lib/python3.12/site-packages/torch/lib/libkineto.so",
        "/usr/local/cuda-13.0/lib/libcupti.so.13"}) {
    t.tampers[0].caller = tool;
    EXPECT_TRUE(check_trace_tampering({t}, launch_scope::test, where).empty())
        << tool;
  }
  // A port's own library by torch's name is still the port's.
  t.tampers[0].caller = "/tmp/ws/build/libtorch_fast.so";
  EXPECT_EQ(check_trace_tampering({t}, launch_scope::test, where).size(), 1u);
  EXPECT_FALSE(profiler_machinery(""));
  EXPECT_FALSE(profiler_machinery("libtorch_cuda.so"));
}

// ---- item 12: missing evidence is BLOCKED -------------------------------

TEST(trace_integrity,
     no_trace_or_no_cuda_under_the_library_is_missing_evidence) {
  auto none = missing_evidence({}, "the test run");
  ASSERT_TRUE(none);
  EXPECT_TRUE(contains(*none, "the injection library did not load")) << *none;
  trace::trace nvtx_only;
  nvtx_only.nvtx_active = true;
  EXPECT_TRUE(missing_evidence({nvtx_only}, "the test run"));
  auto no_cupti = reference();
  no_cupti.cupti_active = false;
  no_cupti.cupti_error = "cuptiSubscribe: busy";
  auto why = missing_evidence({no_cupti}, "the test run");
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "cuptiSubscribe: busy")) << *why;
  EXPECT_FALSE(missing_evidence({reference()}, "the test run"));
}

// ---- item 3: the harness's shape ----------------------------------------

TEST(trace_integrity, the_honest_bench_has_the_reference_shape) {
  EXPECT_TRUE(harness(bench(launches("port_kernel")), reference()).empty());
}

TEST(trace_integrity,
     warm_up_outside_any_range_the_same_on_both_sides_is_honest) {
  bench_shape user;
  user.warmup_in_range = false;
  auto ref = bench(launches("ref_kernel"), user);
  auto cand = bench(launches("port_kernel"), user);
  EXPECT_TRUE(harness(cand, ref).empty()) << harness(cand, ref)[0].reason();
  // Three warm-up calls where the reference's bench makes one: two too many.
  auto more = bench(
      [](builder& b, const std::string&, int i) {
        b.kernel("port_kernel");
        if (i == 0) {
          b.kernel("port_kernel");
          b.kernel("port_kernel");
        }
      },
      user);
  auto f = harness(more, ref);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::work_outside_window);
}

TEST(trace_integrity, work_after_the_window_whatever_its_name_is_outside) {
  // range_forge / lazy output: the window closes, then the real work runs
  // in torch kernels on the main thread.
  auto cheat = bench([](builder& b, const std::string& c, int i) {
    b.kernel("port_kernel", 5);
    if (i == 0)
      return;
    b.pop();
    b.kernel("elementwise_kernel", 400, 32);
    b.push("kport.digest:" + c);
  });
  // The helper's digest range above is forged: pop it so the shape holds.
  auto f = check_outside_work({cheat}, {reference()}, spec(), where);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::work_outside_window);
  EXPECT_TRUE(contains(f[0].detail, "elementwise_kernel")) << f[0].detail;
  EXPECT_TRUE(contains(f[0].detail, "thread 100 (the main thread)"))
      << f[0].detail;
  EXPECT_EQ(f[0].count, 6);
}

TEST(trace_integrity, a_missing_l2_flush_is_harness_tampered) {
  bench_shape no_flush;
  no_flush.flush = false;
  auto f = harness(bench(launches("port_kernel"), no_flush), reference());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::harness_tampered);
  EXPECT_TRUE(contains(f[0].detail, "fill_kernel")) << f[0].detail;
  EXPECT_EQ(f[0].count, 6);
}

TEST(trace_integrity, forged_timed_ranges_are_harness_tampered) {
  // An extra timed range per call: the real work in a second window that
  // splits the call (or a range re-pushed after an early pop).
  auto extra = bench([](builder& b, const std::string& c, int i) {
    b.kernel("port_kernel");
    if (i == 0)
      return;
    b.pop();
    b.push("kport:" + c);
  });
  auto f = check_range_structure({extra}, {reference()}, where);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::harness_tampered);
  EXPECT_TRUE(contains(f[0].detail, "3 timed")) << f[0].detail;
  // A timed range opened inside another.
  auto nested = bench([](builder& b, const std::string& c, int i) {
    if (i > 0) {
      b.push("kport:" + c);
      b.kernel("port_kernel");
      b.pop();
    }
  });
  f = check_range_structure({nested}, {reference()}, where);
  ASSERT_FALSE(f.empty());
  EXPECT_TRUE(contains(f[0].detail, "inside")) << f[0].detail;
  // The real range closed early and one of its own pushed for the bench
  // to close.
  auto renamed = bench([](builder& b, const std::string&, int i) {
    if (i == 0)
      return b.kernel("port_kernel");
    b.pop();
    b.kernel("port_kernel");
    b.push("kport:forged");
  });
  f = check_range_structure({renamed}, {reference()}, where);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].config, "forged");
  // A warm-up range opened inside the timed one hides the call from it.
  auto warm = bench([](builder& b, const std::string& c, int i) {
    if (i > 0)
      b.push("kport.warmup:" + c);
    b.kernel("port_kernel");
    if (i > 0)
      b.pop();
  });
  f = check_range_structure({warm}, {reference()}, where);
  ASSERT_FALSE(f.empty());
  EXPECT_TRUE(contains(f[0].detail, "opened inside `kport:a`")) << f[0].detail;
  // A range closed that the bench never opened.
  auto underflow = bench(launches("port_kernel"));
  underflow.dropped_by.range_underflow = 2;
  EXPECT_EQ(check_range_structure({underflow}, {reference()}, where).size(),
            1u);
}

// ---- item 4: the same launches on every call ----------------------------

TEST(trace_integrity, a_call_with_another_grid_changes_the_launch_set) {
  auto t = bench([](builder& b, const std::string&, int i) {
    b.kernel("port_kernel", 100, i == 2 ? 1 : 64);
  });
  auto runs = std::vector{samples_from_traces({t}, time_source::kernel_sum)};
  auto f = check_kernel_sets(runs, "candidate");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::kernel_set_changed);
  EXPECT_TRUE(contains(f[0].detail, "port_kernel<<<1x1x1")) << f[0].detail;
  // An operator whose launches depend on its data compares names only.
  EXPECT_TRUE(check_kernel_sets(runs, "candidate", true).empty());
  auto copies = bench([](builder& b, const std::string&, int i) {
    b.kernel("port_kernel");
    if (i == 3)
      b.copy(4096, 50);
  });
  EXPECT_EQ(
      check_kernel_sets(
          {samples_from_traces({copies}, time_source::kernel_sum)}, "candidate")
          .size(),
      2u);
}

// ---- item 8: foreign_work ------------------------------------------------

TEST(trace_integrity, a_token_kernel_beside_a_library_call_is_foreign_work) {
  auto s = spec();
  s.perf_foreign_share = 0.5;
  auto honest = bench([](builder& b, const std::string&, int) {
    b.kernel("port_kernel", 300);
    b.kernel("fill_kernel", 50); // a torch.zeros of the port: small
  });
  EXPECT_TRUE(check_foreign_work({honest}, s, where).empty());
  auto token = bench([](builder& b, const std::string&, int) {
    b.kernel("cunn_SoftMaxForward", 900);
    b.kernel("port_kernel", 3);
  });
  auto f = check_foreign_work({token}, s, where);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::foreign_work);
  EXPECT_TRUE(contains(f[0].detail, "cunn_SoftMaxForward")) << f[0].detail;
  s.target.allowed_kernels = {"cunn_*"};
  EXPECT_TRUE(check_foreign_work({token}, s, where).empty());
}

TEST(trace_integrity, copies_are_time_in_the_window_not_foreign_kernels) {
  auto copies = bench([](builder& b, const std::string&, int) {
    b.kernel("port_kernel", 10);
    b.copy(1 << 20, 900, 2);
  });
  EXPECT_TRUE(check_foreign_work({copies}, spec(), where).empty());
}

// ---- grids launched from the device ---------------------------------------

TEST(trace_integrity, a_kernel_of_a_module_that_launches_from_the_device) {
  builder b;
  b.push("kport:a");
  b.kernel("_Z11tail_parentPf");
  b.pop();
  trace::trace_module m;
  m.hash = "00112233445566778899aabbccddeeff";
  m.device_launch = true;
  m.entries = {"_Z11tail_parentPf", "_Z12child_kernelPf"};
  b.t.modules.push_back(m);
  auto why = unrecorded_device_launches({b.t}, "the candidate bench");
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(contains(*why, "the candidate bench (pid 100) ran "
                             "_Z11tail_parentPf"))
      << *why;
  EXPECT_TRUE(contains(*why, "module 001122334455")) << *why;
  // A kernel with internal linkage: the cubin's symbol has a prefix.
  b.t.kernels[0].name = "_ZN12_GLOBAL__N_14spinEv";
  b.t.modules[0].entries = {
      "__nv_static_21__a1b2_x_cu__ZN12_GLOBAL__N_14spinEv"};
  EXPECT_TRUE(unrecorded_device_launches({b.t}, "x").has_value());
  // Loaded, but none of its kernels ran (a library's module): nothing.
  b.t.modules[0].entries = {"_Z9other_onePf"};
  EXPECT_FALSE(unrecorded_device_launches({b.t}, "x").has_value());
  // A module that launches nothing from the device: nothing.
  b.t.modules[0].entries = {"_Z11tail_parentPf"};
  b.t.modules[0].device_launch = false;
  EXPECT_FALSE(unrecorded_device_launches({b.t}, "x").has_value());
}

// ---- work that runs into a window it was not launched in -----------------

/// A bench of 5 us calls, `iterations` windows of config a, after a warm-up;
/// returns the trace and leaves the builder's clock after the last window.
trace::trace windows_of(builder& b, int iterations = 3) {
  b.push("kport.warmup:a");
  b.kernel("port_kernel", 5'000);
  b.pop();
  for (int i = 0; i < iterations; ++i) {
    b.kernel("fill_kernel", 80, 4096);
    b.push("kport:a");
    b.kernel("port_kernel", 5'000);
    b.pop();
  }
  return b.t;
}

TEST(trace_integrity, a_kernel_left_running_from_the_warm_up_is_uncounted) {
  // The warm-up starts a kernel in a CUDA context of its own (the helper's
  // synchronize waits for its own context only) that does the timed calls'
  // work while each call launches a token.
  builder b;
  b.push("kport.warmup:a");
  b.kernel("persistent_kernel", 10);
  auto spin = b.t.kernels.size() - 1;
  b.t.kernels[spin].context = 2;
  b.pop();
  for (int i = 0; i < 3; ++i) {
    b.push("kport:a");
    b.kernel("port_kernel", 5'000);
    b.pop();
  }
  b.t.kernels[spin].end_ns = b.clock;
  auto f = check_window_overlap({b.t}, nullptr, where);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::work_outside_window);
  EXPECT_EQ(f[0].config, "a");
  EXPECT_TRUE(contains(f[0].detail, "persistent_kernel")) << f[0].detail;
  EXPECT_TRUE(contains(f[0].detail, "warm-up of config a")) << f[0].detail;
  EXPECT_TRUE(contains(f[0].detail, "CUDA context 2")) << f[0].detail;
  // All three windows' time, not one's.
  EXPECT_TRUE(contains(f[0].detail, "(15.0 us of window time in all"))
      << f[0].detail;
  // As the gate runs its rules: the same finding, first.
  std::vector<run_samples> rounds{
      samples_from_traces({b.t}, time_source::kernel_sum)};
  bench_checks none;
  candidate_bench_evidence e{{b.t}, rounds, none, none, true};
  auto all = check_candidate_bench(e, spec(), where);
  ASSERT_FALSE(all.empty());
  EXPECT_TRUE(contains(all[0].detail, "persistent_kernel")) << all[0].detail;
}

TEST(trace_integrity, another_process_working_during_the_windows_is_seen) {
  builder b;
  auto bench_start = b.clock;
  auto timed = windows_of(b);
  // A helper process the candidate started, traced (it kept the injection
  // variables) but opening no range of its own.
  builder helper;
  helper.t.pid = 200;
  helper.t.command = "python worker.py";
  helper.clock = bench_start;
  helper.kernel("matmul_kernel", b.clock - bench_start);
  auto f = check_window_overlap({timed, helper.t}, nullptr, where);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].detail, "matmul_kernel")) << f[0].detail;
  EXPECT_TRUE(contains(f[0].detail, "process 200 (python worker.py)"))
      << f[0].detail;
  // Each process alone is clean.
  EXPECT_TRUE(check_window_overlap({timed}, nullptr, where).empty());
  EXPECT_TRUE(check_window_overlap({helper.t}, nullptr, where).empty());
}

TEST(trace_integrity, clock_jitter_at_a_windows_edge_is_no_overlap) {
  auto with_flush_into_window = [](std::uint64_t into) {
    builder b;
    auto t = windows_of(b, 2);
    // The flush before the second window ends `into` ns after it opened.
    auto& second = t.ranges[2];
    for (auto& k : t.kernels)
      if (k.name == "fill_kernel" && k.end_ns < second.start_ns &&
          k.end_ns > t.ranges[1].end_ns)
        k.end_ns = second.start_ns + into;
    return t;
  };
  auto edge = with_flush_into_window(window_overlap_tolerance_ns - 500);
  EXPECT_TRUE(check_window_overlap({edge}, nullptr, where).empty());
  auto into = with_flush_into_window(window_overlap_tolerance_ns + 500);
  auto f = check_window_overlap({into}, nullptr, where);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].detail, "fill_kernel")) << f[0].detail;
  EXPECT_TRUE(contains(f[0].detail, "outside every bench range") ||
              contains(f[0].detail, "no range open"))
      << f[0].detail;
  // Work split into short kernels, each a little into a window: in all.
  builder split;
  auto many = windows_of(split, 10);
  std::size_t n = 0;
  for (std::size_t i = 0; i < many.ranges.size(); ++i)
    if (many.ranges[i].name == "kport:a")
      for (auto& k : many.kernels)
        if (k.name == "fill_kernel" && k.end_ns < many.ranges[i].start_ns &&
            k.end_ns + 200 > many.ranges[i].start_ns) {
          k.end_ns = many.ranges[i].start_ns + 1'000;
          ++n;
        }
  ASSERT_EQ(n, 10u);
  auto f_split = check_window_overlap({many}, nullptr, where);
  ASSERT_EQ(f_split.size(), 1u);
  EXPECT_EQ(f_split[0].count, 10);
  // A user's bench that does not synchronize before its windows: the same
  // overlap on the reference's side is the bench's, not the candidate's.
  std::vector<trace::trace> ref{into};
  EXPECT_TRUE(check_window_overlap({into}, &ref, where).empty());
}

// ---- all together, as the gate calls them --------------------------------

TEST(trace_integrity, the_candidate_bench_rules_see_the_reference_side) {
  bench_shape user;
  user.warmup_in_range = false;
  auto ref = std::vector{bench(launches("ref_kernel"), user)};
  auto cand = std::vector{bench(launches("port_kernel"), user)};
  std::vector<run_samples> rounds{
      samples_from_traces(cand, time_source::kernel_sum)};
  bench_checks none;
  // Without the reference's traces the old rule flags the warm-up calls
  // (the false positive of issue 20); with them nothing fires.
  candidate_bench_evidence alone{cand, rounds, none, none, true};
  auto f = check_candidate_bench(alone, spec(), where);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::work_outside_window);
  candidate_bench_evidence paired{cand, rounds, none, none, true, &ref};
  EXPECT_TRUE(check_candidate_bench(paired, spec(), where).empty());
}

TEST(trace_integrity, work_outside_names_the_launching_thread) {
  // A launch from the main thread with no range open (a user's bench):
  // the detail says so instead of guessing at a background thread.
  builder b;
  b.push("kport:a");
  b.kernel("port_kernel");
  b.pop();
  b.kernel("port_kernel");
  auto f = check_outside_window({b.t}, spec().target.kernels, where);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].detail, "thread 100, the main thread"))
      << f[0].detail;
  EXPECT_FALSE(contains(f[0].detail, "background")) << f[0].detail;
}

// ---- inputs made ahead of the timed calls -----------------------------

/// `n` launches of the helper's generator kernel at set-up, before any
/// bench range.
void generate_at_set_up(trace::trace& t, int n) {
  builder s;
  for (int k = 0; k < n; ++k)
    s.kernel("randn_kernel", 50, 64);
  for (auto& k : s.t.kernels)
    t.kernels.push_back(k); // range -1
}

/// A port that knows the round's seed (taken from the helper's process):
/// `regen` more launches of the helper's input generation where `when`
/// says (the warm-up call of each config, or set-up before the first
/// range), the outputs computed there, and each timed call a copy of the
/// stored output beside a token of its kernel.
trace::trace ahead(int regen, bool at_setup, int camouflage = 0) {
  bench_shape shape;
  shape.iterations = 10;
  auto t = bench(
      [&](builder& b, const std::string&, int i) {
        if (i == 0 && !at_setup)
          for (int k = 0; k < regen; ++k) {
            b.kernel("randn_kernel", 50, 64);
            b.kernel("port_kernel", 400);
          }
        if (i > 0) {
          for (int k = 0; k < camouflage; ++k)
            b.kernel("randn_kernel", 50, 64);
          b.copy(1 << 20, 20);
        }
        b.kernel("port_kernel", 5, 1);
      },
      shape);
  if (at_setup)
    generate_at_set_up(t, regen);
  return t;
}

const trace::trace& reference10() {
  bench_shape shape;
  shape.iterations = 10;
  static auto t = bench(launches("ref_kernel"), shape);
  return t;
}

TEST(trace_integrity, the_honest_bench_makes_its_inputs_where_the_helper_does) {
  bench_shape shape;
  shape.iterations = 10;
  auto honest = bench(launches("port_kernel"), shape);
  EXPECT_TRUE(
      check_input_regeneration({honest}, {reference10()}, where).empty());
  // A port that casts a tensor of an input's shape in every call launches
  // what the input generation launches, in the windows and the warm-up
  // calls alike; and two launches at set-up (a self-test) are its own.
  auto casts = bench(
      [](builder& b, const std::string&, int) {
        b.kernel("randn_kernel", 50, 64);
        b.kernel("port_kernel");
      },
      shape);
  casts.kernels.push_back(casts.kernels.front());
  casts.kernels.back().range = -1;
  EXPECT_TRUE(
      check_input_regeneration({casts}, {reference10()}, where).empty());
}

TEST(trace_integrity, inputs_made_in_a_warm_up_call_are_harness_tampered) {
  auto f = check_input_regeneration({ahead(10, false)}, {reference10()}, where);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::harness_tampered);
  EXPECT_TRUE(contains(f[0].detail, "randn_kernel")) << f[0].detail;
  EXPECT_TRUE(contains(f[0].detail, "made ahead")) << f[0].detail;
  // 20 more than the reference's 2 (two configs, ten calls each).
  EXPECT_EQ(f[0].count, 20);
  // Through the whole table too, first among the rules that fire.
  auto timed = samples_from_traces({ahead(10, false)}, time_source::kernel_sum);
  std::vector<run_samples> rounds{timed};
  bench_checks none;
  std::vector<trace::trace> cand{ahead(10, false)}, ref{reference10()};
  candidate_bench_evidence e{cand, rounds, none, none, true, &ref, 0};
  auto all = check_candidate_bench(e, spec(), where);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all[0].rule, msg::IntegrityRule::harness_tampered);
}

TEST(trace_integrity, inputs_made_at_set_up_or_beside_the_calls_are_seen) {
  auto setup =
      check_input_regeneration({ahead(20, true)}, {reference10()}, where);
  ASSERT_EQ(setup.size(), 1u);
  EXPECT_EQ(setup[0].count, 20);
  // One launch of the generator in every timed window as cover buys one
  // launch in each warm-up call and two at set-up, not twenty calls.
  auto cover =
      check_input_regeneration({ahead(10, false, 1)}, {reference10()}, where);
  ASSERT_EQ(cover.size(), 1u);
  // In another process of the run (no ranges at all).
  bench_shape shape;
  shape.iterations = 10;
  builder other;
  for (int k = 0; k < 20; ++k)
    other.kernel("randn_kernel", 50, 64);
  other.t.pid = 200;
  auto elsewhere = check_input_regeneration(
      {bench(launches("port_kernel"), shape), other.t}, {reference10()}, where);
  ASSERT_EQ(elsewhere.size(), 1u);
}

/// An honest bench with `extra` more launches of the generator's kernel at
/// set-up (a cache of constants built with the same launch at import).
trace::trace honest_with_setup(int extra) {
  bench_shape shape;
  shape.iterations = 10;
  auto t = bench(launches("port_kernel"), shape);
  generate_at_set_up(t, extra);
  return t;
}

/// Precomputes `calls` of config `a`'s ten timed calls in its warm-up call.
trace::trace ahead_in_a(int calls) {
  bench_shape shape;
  shape.iterations = 10;
  return bench(
      [&](builder& b, const std::string& config, int i) {
        if (i == 0 && config == "a")
          for (int k = 0; k < calls; ++k)
            b.kernel("randn_kernel", 50, 64);
        b.kernel("port_kernel", i > 0 && i <= calls && config == "a" ? 5 : 400);
      },
      shape);
}

TEST(trace_integrity, what_cannot_move_a_median_is_not_made_ahead) {
  // Four launches of the generator at set-up beyond the reference's: the
  // inputs of four of a config's ten timed calls at most, which leaves
  // its median where the port's own calls put it.
  EXPECT_TRUE(
      check_input_regeneration({honest_with_setup(4)}, {reference10()}, where)
          .empty());
  EXPECT_TRUE(check_input_regeneration({ahead_in_a(4)}, {reference10()}, where)
                  .empty());
  // Half of them moves it: the first count that is a finding, wherever the
  // launches ran.
  auto setup =
      check_input_regeneration({honest_with_setup(5)}, {reference10()}, where);
  ASSERT_EQ(setup.size(), 1u);
  EXPECT_EQ(setup[0].rule, msg::IntegrityRule::harness_tampered);
  EXPECT_EQ(setup[0].count, 5);
  auto warm = check_input_regeneration({ahead_in_a(5)}, {reference10()}, where);
  ASSERT_EQ(warm.size(), 1u);
  EXPECT_EQ(warm[0].config, "a");
  EXPECT_EQ(warm[0].count, 5);
  EXPECT_TRUE(contains(warm[0].detail, "half its 10 timed calls"))
      << warm[0].detail;
}

TEST(trace_integrity, copies_of_an_inputs_bytes_make_no_inputs) {
  // The reference's inputs pass through a device copy; a port whose
  // autotuner restores its arguments copies those bytes a hundred times in a
  // warm-up call. No random input comes from a copy.
  bench_shape shape;
  shape.iterations = 10;
  shape.input_copy = true;
  auto ref = bench(launches("ref_kernel"), shape);
  auto tuned = bench(
      [](builder& b, const std::string&, int i) {
        if (i == 0)
          for (int k = 0; k < 100; ++k)
            b.copy(1 << 20, 20);
        b.kernel("port_kernel");
      },
      shape);
  EXPECT_TRUE(check_input_regeneration({tuned}, {ref}, where).empty());
}

} // namespace
} // namespace kport::gates
