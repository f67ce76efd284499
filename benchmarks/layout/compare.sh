#!/usr/bin/env bash
# Runs the CPU corpus (what scripts/demo runs: every examples/cpu/*/port*.toml
# with the replay agent, checked against examples/cpu/expected.toml) with the
# `kport` of two checkouts, alternating before/after, N times each, each run
# into a fresh runs folder. Each checkout runs its own examples/cpu, as its
# scripts/demo does.
# CPU time is read from a fresh cgroup (v1 cpuacct) per run: /usr/bin/time
# only counts children that their parents wait for, and the after build runs
# each bench inside bwrap --unshare-pid, whose namespace's processes the
# kernel reaps when its init exits, so their CPU never reaches time's rusage.
# Usage: compare.sh BEFORE_SRC AFTER_SRC N OUT_DIR
#   KPORT_LAYOUT_AFTER_ARGS: extra `kport run` arguments for the after side
#   only (e.g. --config FILE, to compare one build with itself).
#   writes OUT_DIR/run-<side>-<i>.log (kport's output), .time (time -v),
#   .cpuacct (the cgroup's user and system ns), .states (per job: final state
#   and the attempt folders in order), and keeps the runs folders under
#   $KPORT_LAYOUT_RUNS/<side>-<i> (default /tmp/kport-layout-runs, outside
#   the repository: not committed).
set -uo pipefail
before=$(cd "$1" && pwd)
after=$(cd "$2" && pwd)
n=$3
out=$(mkdir -p "$4" && cd "$4" && pwd)
cgroot=/sys/fs/cgroup/cpuacct
for i in $(seq 1 "$n"); do
  for side in before after; do
    src=$before
    extra=
    [[ $side == after ]] && src=$after && extra=${KPORT_LAYOUT_AFTER_ARGS:-}
    runs=${KPORT_LAYOUT_RUNS:-/tmp/kport-layout-runs}/$side-$i
    rm -rf "$runs"
    cg=$cgroot/kport-layout-$side-$i
    [[ -d $cg ]] && rmdir "$cg"
    mkdir "$cg"
    (cd "$src/examples/cpu" &&
      echo $BASHPID >"$cg/cgroup.procs" &&
      exec /usr/bin/time -v -o "$out/run-$side-$i.time" "$src/build/kport" \
        run ./*/port*.toml --runs-dir "$runs" --expect expected.toml \
        ${extra:+$extra} \
        >"$out/run-$side-$i.log" 2>&1)
    status=$?
    echo "user_ns $(cat "$cg/cpuacct.usage_user")" >"$out/run-$side-$i.cpuacct"
    echo "sys_ns $(cat "$cg/cpuacct.usage_sys")" >>"$out/run-$side-$i.cpuacct"
    rmdir "$cg"
    # Final state from the summary table; the path from the attempt folders.
    for job in "$runs"/*/; do
      name=$(basename "$job")
      [[ $name == schemas ]] && continue
      state=$(awk -v j="$name" '$1 == j && NF >= 4 && $3 ~ /^[A-Z_]+$/ {print $3}' \
        "$out/run-$side-$i.log" | tail -1)
      echo "$name $state $(ls "$job" | grep -E '^[0-9]+-' | tr '\n' ' ')"
    done >"$out/run-$side-$i.states"
    echo "$side $i exit $status" | tee -a "$out/exits.txt"
  done
done
