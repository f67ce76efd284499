#!/bin/sh
# The CPU example corpus end to end: every spec of examples/cpu through the
# real `kport run`, checked against examples/cpu/expected.toml. Builds the
# examples (about a minute on the 2-core machines).
# usage: cpu_corpus_test.sh KPORT SOURCE_DIR
set -u
kport=${1:?usage: cpu_corpus_test.sh KPORT SOURCE_DIR}
src=${2:?usage: cpu_corpus_test.sh KPORT SOURCE_DIR}
runs=$(mktemp -d "${TMPDIR:-/tmp}/kport-cpu-corpus-XXXXXX") || exit 1
trap 'rm -rf "$runs"' EXIT
cd "$src/examples/cpu" || exit 1
# The glob is the corpus: every port*.toml of every example.
"$kport" run ./*/port*.toml --runs-dir "$runs" --expect expected.toml || exit 1
# Every job left its trace.json, and the run's report reads the bundle: a
# row a job.
for job in "$runs"/*/verdict.json; do
  [ -f "$(dirname "$job")/trace.json" ] || { echo "no trace.json beside $job"; exit 1; }
done
# Every bench helper got its round's secret seed (kport writes it on the
# bench's stdin, not in its environment): every check line of round i
# records its gate's i-th round seed, never 0.
python3 - "$runs" <<'PY' || exit 1
import glob, json, os, re, sys
checked = 0
for attempt in glob.glob(os.path.join(sys.argv[1], "*", "*-performance-*")):
    report = os.path.join(attempt, "report.json")
    if not os.path.exists(report):
        continue
    seeds = (json.load(open(report)).get("perf") or {}).get("round_seeds") or []
    for path in glob.glob(os.path.join(attempt, "checks", "*.jsonl")):
        round_ = int(re.search(r"-(\d+)\.jsonl$", path).group(1))
        for line in open(path):
            seed = json.loads(line).get("round_seed")
            if len(seeds) < round_ or seed != seeds[round_ - 1] or not seed:
                sys.exit(f"{path}: round_seed {seed}, the gate's seeds {seeds}")
            checked += 1
if checked == 0:
    sys.exit("no check line read: the seed check saw nothing")
print(f"round seeds: {checked} check lines carry their round's seed")
PY
page=$("$kport" report "$runs") || exit 1
rows=$(grep -o '<tr class="job-row"' "$page" | wc -l)
jobs=$(ls "$runs"/*/verdict.json | wc -l)
[ "$rows" -eq "$jobs" ] || { echo "report $page: $rows job rows for $jobs jobs"; exit 1; }
echo "report: $page ($rows jobs)"
