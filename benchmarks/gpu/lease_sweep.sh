#!/usr/bin/env bash
# Issue 8's benchmark in one device call, every figure side by side:
#  1. A/A fidelity (the Triton set through the full performance gate, 4
#     rounds) with the lease off, held at cuInit and held at first work;
#  2. the GPU example corpus (examples/gpu/*/port.toml, no cheats) through
#     scripts/gpu-demo with the lease on (hold HOLD, 8 processes starting side
#     by side), then off; lease_sweep.py's figures of both.
# Each step is bounded so that the call ends inside BUDGET seconds; a step cut
# short says so (its jobs are INCOMPLETE in the table).
#   OUT=dir [AA_MODES="off init work"] benchmarks/gpu/lease_sweep.sh [HOLD=work] [BUDGET=560] [SPEC...]
# SPEC...: the operators' port.toml files (default: examples/gpu/*/port.toml).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:?set OUT}
hold=${1:-work}
deadline=$(($(date +%s) + ${2:-560}))
if (($# >= 2)); then shift 2; else set --; fi
specs=("$@")
((${#specs[@]})) || specs=("$root"/examples/gpu/*/port.toml)
bin=$root/build/bundle/bin
export KPORT_INJECT=$root/build/bundle/lib/libkport_inject.so
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
runs=/tmp/kport-lease-sweep
rm -rf "$runs" && mkdir -p "$runs"
gpu=$root/benchmarks/gpu

# Seconds left before the deadline, at most $1.
left() {
  local l=$((deadline - $(date +%s)))
  ((l > $1)) && l=$1
  ((l < 1)) && l=1
  echo $l
}

hold_config() { # a config file for one lease mode
  case $1 in
    off) echo "$gpu/lease_off.toml" ;;
    work) echo "$gpu/lease_work.toml" ;;
    init) printf '[devices]\nlease_hold = "init"\n' > "$runs/lease_init.toml"; echo "$runs/lease_init.toml" ;;
  esac
}

for mode in ${AA_MODES-off init work}; do
  timeout "$(left 120)" "$bin/kport" run "$gpu/aa_triton.toml" \
    --config "$gpu/gate_only.toml" --config "$(hold_config $mode)" \
    --runs-dir "$runs/aa-$mode" --json > "$runs/aa-$mode.json" 2>&1
  python3 "$gpu/aa_summary.py" "$runs"/aa-$mode/*/verdict.json > "$runs/aa-$mode-summary.json" 2>&1
  echo "== aa_triton lease $mode"
  grep -E '"wall_s"|p95_abs_dev|max_abs_dev|"geomean"|round_spread_p95' \
    "$runs/aa-$mode-summary.json" "$runs/aa-$mode.json" | cut -c1-300
done
[[ -n ${AA_MODES-x} ]] && tar czf "$out/aa.tgz" -C "$runs" $(cd "$runs" && ls aa-*.json)

sweep() { # label, config files...
  local label=$1
  shift
  KPORT_DEMO_TIMEOUT=$(left 330) KPORT_DEMO_CONFIG="$*" \
    bash "$root/scripts/gpu-demo" "$runs/$label" "${specs[@]}" \
    > "$out/$label.txt" 2>&1
  echo "== sweep $label rc=$?"
  grep -E "^job|ACCEPTED|REJECTED|BLOCKED|INCOMPLETE|sweep|wall" "$out/$label.txt" | grep -v "reason:" | cut -c1-160
  python3 "$gpu/lease_sweep.py" "$label" "$runs/$label/kport.json" "$runs/$label/runs" \
    > "$runs/$label-figures.json" 2>&1
  cut -c1-900 "$runs/$label-figures.json"
}
sweep "sweep-on-$hold" "$gpu/lease_wide.toml" "$(hold_config "$hold")"
sweep sweep-off "$gpu/lease_off.toml"
cat "$runs"/sweep-*-figures.json > "$out/sweep-figures.json"
tar czf "$out/sweeps.tgz" --exclude='*.kpt' --exclude='workspace' -C "$runs" \
  $(cd "$runs" && ls -d sweep-*)
ls -la "$out"
