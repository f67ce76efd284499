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
page=$("$kport" report "$runs") || exit 1
rows=$(grep -o '<tr class="job-row"' "$page" | wc -l)
jobs=$(ls "$runs"/*/verdict.json | wc -l)
[ "$rows" -eq "$jobs" ] || { echo "report $page: $rows job rows for $jobs jobs"; exit 1; }
echo "report: $page ($rows jobs)"
