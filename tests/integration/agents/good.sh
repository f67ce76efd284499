#!/bin/sh
# A well-behaved agent for every agent stage of the default pipeline: writes a
# valid artifact at KPORT_RESULT (strict JSON, enums by name). translate copies
# the candidate named by KPORT_TEST_CANDIDATE (default "good") from the tiny
# project into KPORT_WORKSPACE. KPORT_TEST_DIAGNOSE_IR_VERDICT replaces
# diagnose_ir's FAIL_FIXABLE (e.g. PASS: a diagnosis that contradicts the gate).
# KPORT_TEST_LEAVE_CHILD names a file: each attempt leaves a background process
# behind and appends its pid there (kport must end it with the group).
set -eu
stage=${KPORT_STAGE:?}
attempt=${KPORT_ATTEMPT:?}
here=$(cd "$(dirname "$0")" && pwd)
project=$here/../project
candidate=${KPORT_TEST_CANDIDATE:-good}
echo "good.sh: $stage attempt $attempt in $(pwd)"
if [ -n "${KPORT_TEST_LEAVE_CHILD:-}" ]; then
  sleep 100000 &
  echo "$!" >> "$KPORT_TEST_LEAVE_CHILD"
fi
case "$stage" in
  analyze)
    cat > "$KPORT_RESULT" <<JSON
{
  "verdict": "PASS",
  "summary": "one kernel: add(a, b); configs small and large",
  "kernels": [{"name": "add_ref", "variants": ["int"]}],
  "configs": ["small", "large"]
}
JSON
    ;;
  translate)
    cp "$project/candidates/$candidate/kernel.sh" \
      "$project/candidates/$candidate/bench.conf" "$KPORT_WORKSPACE/"
    cat > "$KPORT_RESULT" <<JSON
{
  "verdict": "COMPILED",
  "summary": "candidate '$candidate' written to the workspace (attempt $attempt)",
  "files": ["kernel.sh", "bench.conf"]
}
JSON
    ;;
  integrate)
    cat > "$KPORT_RESULT" <<JSON
{"verdict": "INTEGRATED", "summary": "the tests call kernel.sh directly", "files": []}
JSON
    ;;
  diagnose_ir)
    cat > "$KPORT_RESULT" <<JSON
{
  "verdict": "${KPORT_TEST_DIAGNOSE_IR_VERDICT:-FAIL_FIXABLE}",
  "diagnosis": {"owner": "kernel", "failure_class": "kernel",
                "summary": "the sum is truncated; translate again"}
}
JSON
    ;;
  diagnose_perf)
    cat > "$KPORT_RESULT" <<JSON
{
  "verdict": "FIXABLE",
  "diagnosis": {"owner": "kernel", "summary": "the kernel waits too long"}
}
JSON
    ;;
  *)
    echo "good.sh: unknown stage $stage" >&2
    exit 64
    ;;
esac
