#!/usr/bin/env bash
# How long after a CUDA process exits the driver reports its device memory
# freed: the question behind devices.lease_settle_ms. Polls nvidia-smi every
# 10 ms while processes of several sizes (torch, and a Triton kernel so a
# module is loaded) allocate, launch and exit; prints one line per process:
# its size, and the ms from its exit until memory.used is back within
# 64 MiB of the level before it started. Needs torch and one CUDA device.
#   benchmarks/gpu/memory_release_probe.sh [GIB...]   (default: 0.25 4 32)
set -uo pipefail
sizes=("$@")
((${#sizes[@]})) || sizes=(0.25 4 32)
poll=$(mktemp)
nvidia-smi -i 0 --query-gpu=timestamp,memory.used --format=csv,noheader,nounits -lms 10 > "$poll" &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
# Triton's @jit reads the kernel's source, so the program must be a file.
cat > "$poll.py" <<'PY'
import sys, torch, triton, triton.language as tl
@triton.jit
def add(x, y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + i, tl.load(x + i, mask=i < n) + 1, mask=i < n)
n = int(float(sys.argv[1]) * (1 << 30)) // 4 // 2
x = torch.ones(n, device="cuda")
y = torch.empty_like(x)
# One kernel over the first 16M elements: int32 offsets, and the point is
# the allocation, not the kernel.
k = min(n, 1 << 24)
add[(triton.cdiv(k, 1024),)](x, y, k, BLOCK=1024)
torch.cuda.synchronize()
PY
sleep 1
for gib in "${sizes[@]}"; do
  for rep in 1 2 3; do
    t0=$(date +%s.%N)
    python3 "$poll.py" "$gib"
    t1=$(date +%s.%N)
    sleep 3
    echo "$gib $rep $t0 $t1"
  done
done > "$poll.runs"
kill $pid 2>/dev/null
# The raw samples travel back with the figures when run under the device tool.
if [[ -n ${OUT:-} ]]; then cp "$poll" "$OUT/memory_release_poll.csv"; cp "$poll.runs" "$OUT/memory_release_runs.txt"; fi
python3 - "$poll" "$poll.runs" <<'PY'
import sys, datetime
samples = []
for line in open(sys.argv[1]):
    try:
        ts, used = [s.strip() for s in line.split(",")]
        t = datetime.datetime.strptime(ts, "%Y/%m/%d %H:%M:%S.%f")
        samples.append((t.replace(tzinfo=datetime.timezone.utc).timestamp(), int(used)))
    except ValueError:
        pass
if not samples:
    sys.exit("memory_release_probe: nvidia-smi gave no samples")
# nvidia-smi prints local time; here it is UTC (the GPU machine's clock).
print(f"samples {len(samples)} over {samples[-1][0] - samples[0][0]:.1f} s")
for line in open(sys.argv[2]):
    gib, rep, t0, t1 = line.split()
    t0, t1 = float(t0), float(t1)
    base = [u for t, u in samples if t0 - 0.5 <= t < t0]
    if not base:
        print(f"{gib} GiB rep {rep}: no samples before start"); continue
    base = min(base)
    peak = max((u for t, u in samples if t0 <= t <= t1), default=base)
    above = [t for t, u in samples if t0 <= t <= t1 + 3 and u > base + 64]
    back = next((t for t, u in samples if above and t > above[-1]), None)
    freed = f"{(back - t1) * 1000:+.0f} ms" if back else "not within 3 s"
    print(f"{gib:>3} GiB rep {rep}: base {base} MiB, peak {peak} MiB, process {t1 - t0:.2f} s, "
          f"back to base {freed} after exit")
PY
