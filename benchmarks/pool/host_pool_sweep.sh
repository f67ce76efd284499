#!/usr/bin/env bash
# The CPU corpus on 1 and on 2 host-backend devices, in one go: wall time,
# speed-up, per-device bench busy time, and that no pair was split.
#   benchmarks/pool/host_pool_sweep.sh [build dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
tmp=$(mktemp -d)
cd "$root/examples/cpu"
for slots in 1 2; do
  printf '[devices]\nbackend = "host"\nhost_slots = %s\n' "$slots" > "$tmp/slots$slots.toml"
  start=$(date +%s%N)
  "$build/kport" run ./*/port*.toml --config "$tmp/slots$slots.toml" \
    --runs-dir "$tmp/runs$slots" --expect expected.toml > "$tmp/out$slots.txt"
  end=$(date +%s%N)
  echo "slots=$slots wall_ms=$(( (end - start) / 1000000 ))"
  python3 "$root/benchmarks/pool/pair_devices.py" "$tmp/runs$slots"
done
rm -rf "$tmp"
