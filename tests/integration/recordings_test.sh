#!/bin/sh
# Every recorded agent artifact of the example corpora (examples/*/recording
# and examples/gpu/cheats/*/recording) is valid against its stage's schema,
# so that a replayed job never ends in AGENT_ERROR because a recording was
# edited by hand. The GPU corpus cannot run here; its recordings can be
# checked. Usage: recordings_test.sh KPORT SOURCE_ROOT
set -u
kport=$1
root=$2
checked=0
failed=0
for f in $(find "$root/examples" -path '*/recording/*/*/result.json' | sort); do
  stage=$(basename "$(dirname "$(dirname "$f")")")
  if out=$("$kport" schema check "$stage" "$f" 2>&1); then
    checked=$((checked + 1))
  else
    echo "FAIL $f: $out"
    failed=$((failed + 1))
  fi
done
echo "$checked passed, $failed failed"
[ "$checked" -gt 0 ] && [ "$failed" -eq 0 ]
