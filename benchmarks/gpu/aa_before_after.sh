#!/usr/bin/env bash
# The measurement cost of the integrity checks (issue 20): the same A/A set
# through the performance gate with an older kport ("before", a bundle and
# its own benchmarks/ and sdk/ copies, e.g. .bundle-before/ made from the
# commit before the checks) and with this tree's build/bundle ("after"),
# alternating, on one GPU in one call. Each run's wall time (the gate's whole
# cost: start-ups, benches, trace reading, rules) and its A/A figures
# (aa_summary.py) go to stdout and $OUT/aa-before-after/.
#   benchmarks/gpu/aa_before_after.sh BEFORE [PAIRS] [SET]
#   (BEFORE: that folder, or build/bundle-before.tar.xz as
#   benchmarks/gpu/before_bundle.sh packs it; PAIRS: before/after pairs,
#   default 2; SET: aa_triton or aa_cuda)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
before=${1:?usage: aa_before_after.sh BEFORE_DIR_OR_TAR_XZ [PAIRS] [SET]}
if [[ -f $before && $before == *.tar.xz ]]; then
  # Inside the tree, not /tmp: the sandbox gives every bench a /tmp of its
  # own (7f0d584's too), where a reference folder under /tmp is not found
  # (the before side's bench failed at once on the H100, 2026-12-06).
  unpacked=$root/build/aa-before
  rm -rf "$unpacked" && mkdir -p "$unpacked"
  tar -C "$unpacked" -xJf "$before" || exit 1
  before=$unpacked/.bundle-before
fi
[[ -d $before ]] || {
  echo "aa_before_after: $before is neither a folder nor a .tar.xz (benchmarks/gpu/before_bundle.sh packs one)" >&2
  exit 2
}
before=$(cd "$before" && pwd)
pairs=${2:-2}
set_name=${3:-aa_triton}
out=${OUT:-/tmp}/aa-before-after
mkdir -p "$out"
runs=/tmp/kport-aa-ba
rm -rf "$runs"

# side NAME BUNDLE TREE: one A/A run of SET with that bundle and that
# tree's benchmarks/gpu and sdk/python (the bench helper must match the
# kport that reads its check files).
side() {
  local name=$1 bundle=$2 tree=$3 i=$4
  local dir=$runs/$name-$i
  local t0=$(date +%s%N)
  PYTHONPATH=$tree/sdk/python KPORT_INJECT=$bundle/lib/libkport_inject.so \
    timeout 200 "$bundle/bin/kport" run "$tree/benchmarks/gpu/$set_name.toml" \
    --config "$tree/benchmarks/gpu/gate_only.toml" --runs-dir "$dir" --json \
    > "$out/$name-$i.json" 2> "$out/$name-$i.log"
  local rc=$?
  local wall=$(( ($(date +%s%N) - t0) / 1000000 ))
  local summary
  # aa_summary prints indented JSON: one line of it here, the rest beside.
  python3 "$root/benchmarks/gpu/aa_summary.py" "$dir"/*/verdict.json > "$out/$name-$i.summary.json" 2>&1
  summary=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("geomean=%.4f p95_abs_dev=%.4f max_abs_dev=%.4f n=%d" % (d["geomean"], d["p95_abs_dev"], d["max_abs_dev"], d["n"]))' \
    "$out/$name-$i.summary.json" 2>&1 | tail -1)
  echo "$name run=$i rc=$rc wall_ms=$wall $summary" | tee -a "$out/summary.txt"
}

for ((i = 1; i <= pairs; i++)); do
  if ((i % 2)); then
    side before "$before/bundle" "$before" "$i"
    side after "$root/build/bundle" "$root" "$i"
  else
    side after "$root/build/bundle" "$root" "$i"
    side before "$before/bundle" "$before" "$i"
  fi
done
