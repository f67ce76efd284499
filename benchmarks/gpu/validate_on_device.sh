#!/bin/bash
# Runs the GPU examples and benchmark programs once on a CUDA machine,
# without kport: the softmax suite on both sides (the recorded port copied
# into a temp workspace), every bench once per --impl, do_bench_aa.py,
# inject_overhead.py (no library) and the port-vs-Triton timing.
#   bash benchmarks/gpu/validate_on_device.sh <out dir>
# Writes <out>/summary.log (also on stdout), <out>/logs.tgz (every log), and
# the JSON of do_bench_aa, inject_overhead and compare_timing.
set -u -o pipefail
OUT=$1
R=$(pwd)
L=/tmp/kport-validate
W=/tmp/kport-softmax-ws
rm -rf "$L" "$W" && mkdir -p "$L" "$W"
export PYTHONUNBUFFERED=1 PYTHONPATH=$R/sdk/python
REC=$R/examples/gpu/softmax/recording
cp "$REC"/translate/1/files/* "$REC"/integrate/1/files/* "$W"/
SOFTMAX=$R/examples/gpu/softmax/reference
G=$R/benchmarks/gpu

# step NAME TIMEOUT CMD...: runs CMD with its log in $L/NAME.log, prints rc,
# wall time and the log's tail.
step() {
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s.%N)
  timeout "$limit" "$@" >"$L/$name.log" 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  echo "== $name rc=$rc wall=$(python3 -c "print(f'{$t1-$t0:.1f}')")s"
  tail -n "${TAILN:-6}" "$L/$name.log"
  tar czf "$OUT/logs.tgz" -C "$L" .  # after each step: a later timeout loses nothing
}

echo "== machine $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
python3 -c "import torch, triton, cupy; print('torch', torch.__version__, 'triton', triton.__version__, 'cupy', cupy.__version__)"

# Correctness first, both suites at once (timings come later, alone).
( cd "$W" && KPORT_SIDE=candidate KPORT_WORKSPACE=$W timeout 75 \
    python3 -m pytest -q "$SOFTMAX/tests/test_softmax.py" >"$L/pytest_candidate.log" 2>&1
  echo "pytest_candidate rc=$?" >>"$L/pytest_candidate.log" ) &
P1=$!
( cd "$SOFTMAX" && KPORT_IMPL=reference timeout 75 \
    python3 -m pytest -q tests/test_softmax.py >"$L/pytest_reference.log" 2>&1
  echo "pytest_reference rc=$?" >>"$L/pytest_reference.log" ) &
P2=$!
wait $P1 $P2
echo "== pytest candidate"; tail -n 8 "$L/pytest_candidate.log"
echo "== pytest reference"; tail -n 8 "$L/pytest_reference.log"
tar czf "$OUT/logs.tgz" -C "$L" .

# Benches, one at a time, as kport would start them (cwd and --impl).
TAILN=4 step bench_softmax_reference 25 bash -c "cd $SOFTMAX && KPORT_CHECK=$L/check_ref.jsonl python3 bench/softmax_bench.py --impl reference"
cat "$L/bench_softmax_reference.log" | grep '^softmax'
TAILN=4 step bench_softmax_candidate 25 bash -c "cd $W && KPORT_WORKSPACE=$W KPORT_CHECK=$L/check.jsonl python3 $SOFTMAX/bench/softmax_bench.py --impl candidate"
grep '^softmax' "$L/bench_softmax_candidate.log"
# The two sides' KPORT_CHECK digests: same inputs, so sums and samples agree.
python3 - "$L/check_ref.jsonl" "$L/check.jsonl" <<'PY'
import json, sys
ref, cand = ([json.loads(l) for l in open(p)] for p in sys.argv[1:3])
worst = 0.0
for a, b in zip(ref, cand):
    assert a["config"] == b["config"] and a["seed"] == b["seed"]
    da, db = a["outputs"][0], b["outputs"][0]
    assert da["shape"] == db["shape"] and da["sample_index"] == db["sample_index"]
    worst = max([worst, abs(da["sum"] - db["sum"]) / da["sum"]]
                + [abs(x - y) for x, y in zip(da["sample"], db["sample"])])
print(f"KPORT_CHECK digests: {len(ref)} ref, {len(cand)} cand, worst difference {worst:.3g}")
PY
TAILN=3 step bench_aa_triton 30 python3 "$G/aa_triton_bench.py" --impl triton --verify
grep -c '^verify.* ok' "$L/bench_aa_triton.log"; grep 'FAILED' "$L/bench_aa_triton.log"
TAILN=3 step bench_aa_cuda 30 python3 "$G/aa_cuda_bench.py" --impl cuda --verify
grep -c '^verify.* ok' "$L/bench_aa_cuda.log"; grep 'FAILED' "$L/bench_aa_cuda.log"

TAILN=18 step compare_timing 30 bash -c "python3 $R/examples/gpu/softmax/tools/compare_timing.py --workspace $W --kernel-names >$OUT/compare_timing.json"
python3 -c "import json; print(json.load(open('$OUT/compare_timing.json')).get('kernel_names'))"
TAILN=2 step inject_overhead 20 bash -c "python3 $G/inject_overhead.py >$OUT/inject_overhead.json"
TAILN=2 step do_bench_aa 55 bash -c "python3 $G/do_bench_aa.py >$OUT/do_bench_aa.json"
python3 -c "import json; d=json.load(open('$OUT/do_bench_aa.json')); print(json.dumps(d['summary']), d['wall_s'])"
head -n 1 "$L/check.jsonl" | cut -c1-600
tar czf "$OUT/logs.tgz" -C "$L" .
echo "== done $(date -u +%H:%M:%S)"
