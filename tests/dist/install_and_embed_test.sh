#!/bin/sh
# kport as another project uses it: installs this build into a temporary
# prefix (cmake --install), builds consumer/ against that prefix alone
# (find_package(kport), kport::kport, kport::bench) and runs its port twice,
# through the engine the consumer embeds (a builtin agent serves every
# stage) and through the installed kport command line (agent.sh). Both
# jobs must end ACCEPTED, which takes the performance gate, and so the
# injection library of the prefix, found without KPORT_INJECT. libkport.so
# must export the API of include/kport and nothing else.
# Usage: install_and_embed_test.sh CMAKE BUILD_DIR SOURCE_ROOT GENERATOR CXX CUDA_ROOT
set -u
cmake=$1
build=$2
root=$3
generator=$4
cxx=$5
cuda=$6
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-dist-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
tmp=$(cd "$tmp" && pwd -P)
prefix=$tmp/prefix
consumer=$tmp/consumer
unset KPORT_INJECT

fail() {
  echo "FAIL: $*"
  exit 1
}

# run LOG CMD...: runs CMD with its output in LOG, shown when it fails.
run() {
  log=$1
  shift
  "$@" > "$log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || {
    cat "$log"
    fail "$* (exit $rc)"
  }
}

run "$tmp/install.log" "$cmake" --install "$build" --prefix "$prefix"
for f in bin/kport bin/kport_trace_dump lib/libkport_inject.so lib/libkport.so \
  include/kport/engine.hpp include/kport/bench.hpp \
  include/kport/check_record.hpp lib/cmake/kport/kportConfig.cmake \
  lib/cmake/kport/kportConfigVersion.cmake \
  share/kport/python/kport_bench/__init__.py; do
  [ -e "$prefix/$f" ] || fail "the install has no $f"
done

python=$prefix/share/kport/python
out=$(cd "$tmp" && PYTHONPATH=$python python3 -c 'import kport_bench; print(kport_bench.__file__)') ||
  fail "kport_bench does not import from $python"
[ "$out" = "$python/kport_bench/__init__.py" ] || fail "kport_bench imported from $out"

exported=$(nm -DC --defined-only "$prefix/lib/libkport.so" | cut -d' ' -f3- |
  grep -Ev '^kport::([a-z_]+(\[abi:cxx11\])?\(|operator<<\(|(engine|port_spec)::)')
[ -z "$exported" ] || fail "libkport.so exports more than include/kport:
$(echo "$exported" | head -n 20)"

run "$tmp/configure.log" "$cmake" -S "$root/tests/dist/consumer" -B "$consumer" \
  -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCUDA_ROOT="$cuda" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
grep -qx "kport_DIR:PATH=$prefix/lib/cmake/kport" "$consumer/CMakeCache.txt" ||
  fail "find_package(kport) did not find the install: $(grep kport_DIR "$consumer/CMakeCache.txt")"
run "$tmp/build.log" "$cmake" --build "$consumer"
grep -q -- "-isystem $prefix/include" "$consumer/compile_commands.json" ||
  fail "the consumer does not compile against $prefix/include"
if grep -Fq -e "$root/include" -e "$root/sdk" -e "$build" "$consumer/compile_commands.json"; then
  fail "the consumer compiles against the source or build tree:
$(cat "$consumer/compile_commands.json")"
fi

run "$tmp/consumer.log" "$consumer/consumer" "$root/tests/dist/consumer/kport.toml" \
  "$consumer/port.toml" "$tmp/runs"
cat "$tmp/consumer.log"
grep -qx "injection library: $prefix/lib/libkport_inject.so" "$tmp/consumer.log" ||
  fail "the embedded engine did not take the prefix's injection library"

run "$tmp/cli.log" "$prefix/bin/kport" run "$consumer/port-cli.toml" \
  --config "$root/tests/dist/consumer/kport.toml" --runs-dir "$tmp/cli-runs" --json
grep -q '"state": "ACCEPTED"' "$tmp/cli.log" || fail "installed kport: $(cat "$tmp/cli.log")"
echo "installed kport: tiny_add ACCEPTED"
