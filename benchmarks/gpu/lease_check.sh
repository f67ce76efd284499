#!/usr/bin/env bash
# One device call for issues 5, 7 and 8 when device time is short: the gpu
# tests, the Triton A/A through the full gate with the lease off and held at
# each of AA_MODES, side by side, then the whole corpus with its cheats
# through scripts/gpu-demo (lease on, hold HOLD, 8 processes starting at
# once), with the lease figures of that sweep. Everything lands in $OUT (at
# most 8 files).
#   OUT=dir [AA_MODES="work init"] [HOLD=work] benchmarks/gpu/lease_check.sh [DEMO_SECONDS]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:?set OUT}
bin=$root/build/bundle/bin
export KPORT_INJECT=$root/build/bundle/lib/libkport_inject.so
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
runs=/tmp/kport-lease-check
rm -rf "$runs" && mkdir -p "$runs"
OUT=$runs/tests bash "$root/scripts/gpu-check" tests > "$out/tests.txt" 2>&1
grep -E "^== |PASSED|FAILED" "$out/tests.txt"
hold_config() { # a config file that sets one lease mode
  printf '[devices]\n%s\n' "$([[ $1 == off ]] && echo 'lease = false' || echo "lease_hold = \"$1\"")" \
    > "$runs/lease-$1.toml"
  echo "$runs/lease-$1.toml"
}
for mode in off ${AA_MODES:-work init}; do
  cfg=(--config "$(hold_config "$mode")")
  timeout 100 "$bin/kport" run "$root/benchmarks/gpu/aa_triton.toml" \
    --config "$root/benchmarks/gpu/gate_only.toml" "${cfg[@]}" \
    --runs-dir "$runs/aa-$mode" --json > "$runs/aa-$mode.json" 2>&1
  python3 "$root/benchmarks/gpu/aa_summary.py" "$runs"/aa-$mode/*/verdict.json \
    > "$runs/aa-$mode-summary.json" 2>&1
  echo "== aa_triton lease $mode"
  grep -E '"wall_s"|p95_abs_dev|max_abs_dev|"geomean"|round_spread_p95' "$runs/aa-$mode-summary.json" "$runs/aa-$mode.json" | cut -c1-300
done
tar czf "$out/aa.tgz" -C "$runs" $(cd "$runs" && ls aa-*.json)
KPORT_DEMO_TIMEOUT=${1:-380} \
  KPORT_DEMO_CONFIG="$root/benchmarks/gpu/lease_wide.toml $(hold_config "${HOLD:-work}")" \
  bash "$root/scripts/gpu-demo" "$runs/demo" > "$out/demo.txt" 2>&1
echo "== demo rc=$?"
tail -40 "$out/demo.txt"
python3 "$root/benchmarks/gpu/lease_sweep.py" lease-wide "$runs/demo/kport.json" "$runs/demo/runs" \
  > "$out/sweep-wide.json" 2>&1
cut -c1-800 "$out/sweep-wide.json"
cp "$runs/demo/summary.html" "$runs/demo/summary.json" "$out/" 2>/dev/null
tar czf "$out/demo.tgz" --exclude='*.kpt' -C "$runs" demo
ls -la "$out"
