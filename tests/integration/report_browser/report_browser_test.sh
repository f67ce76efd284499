#!/bin/sh
# The report in a real browser: writes the report of the recorded CPU demo
# run and of recorded H200 bundles, opens each in headless Chromium through
# playwright-core, checks the plots rendered with a point per round, the
# verdict text, that a click on a job opens its details, and screenshots
# each page into OUT.
# usage: report_browser_test.sh KPORT SOURCE_DIR NODE_DIR OUT
set -eu
kport=${1:?usage: report_browser_test.sh KPORT SOURCE_DIR NODE_DIR OUT}
src=${2:?}
node_dir=${3:?}
out=${4:?}
chromium=${KPORT_CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || { echo "report_browser_test: no chromium at $chromium (scripts/setup installs it)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-report-browser-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
for bundle in cpu-demo h200-2026-12-03; do
  "$kport" report "$src/tests/fixtures/report/$bundle" -o "$tmp/$bundle" >/dev/null
  "$kport" report "$src/tests/fixtures/report/$bundle" --json -o "$tmp/$bundle" >/dev/null
done
NODE_PATH="$node_dir/node_modules" node "$src/tests/integration/report_browser/report_browser_test.js" \
  "$chromium" "$out" "$tmp/cpu-demo" prefix_sum-0001 \
  "$tmp/h200-2026-12-03" softmax-0008 "$tmp/h200-2026-12-03" softmax-0017
