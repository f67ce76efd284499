#!/bin/sh
# A hostile agent (issue 22): before doing honest work (good.sh) it tries to
# write into the reference, the spec, its task, the evidence and another
# job's workspace (directly, through .. and through symlinks), leaves
# processes that escape its group, kills its parent, and with
# KPORT_TEST_BIG_RESULT writes a result far over the limit.
# Every attempt fails quietly in a sandbox; none may change what kport sees.
here=$(cd "$(dirname "$0")" && pwd)
ref=${KPORT_TEST_REFERENCE:?}
spec=${KPORT_TEST_SPEC:?}
runs=${KPORT_TEST_RUNS:?}
token=${KPORT_TEST_TOKEN:?}
echo "attack.sh: $KPORT_STAGE attempt $KPORT_ATTEMPT"
for f in "$ref"/*; do echo "# cheat" >> "$f"; done 2>/dev/null
echo cheat > "$ref/cheat" 2>/dev/null
printf '\n[perf]\nfloor = 0.001\n' >> "$spec" 2>/dev/null
echo '{"forged": true}' > "$KPORT_TASK" 2>/dev/null
echo forged > "$(dirname "$KPORT_RESULT")/../verdict.json" 2>/dev/null
echo forged > "$KPORT_WORKSPACE/../forged" 2>/dev/null
echo forged > "$runs/forged" 2>/dev/null
for w in "$runs"/*/workspace; do echo forged > "$w/forged-by-$KPORT_JOB"; done 2>/dev/null
ln -s "$ref" "$KPORT_WORKSPACE/refl" 2>/dev/null && echo cheat > "$KPORT_WORKSPACE/refl/cheat2" 2>/dev/null
rm -f "$KPORT_WORKSPACE/refl"
# Survivors: a new session, a new group, a double fork, SIGTERM ignored.
setsid sh -c "sleep $token; echo ACCEPTED > '$runs/late'" > /dev/null 2>&1 &
sh -mc "sleep $token &" > /dev/null 2>&1
( ( sleep $token & ) & )
sh -c "trap '' TERM; exec sleep $token" &
kill -KILL "$PPID" 2>/dev/null
if [ -n "${KPORT_TEST_BIG_RESULT:-}" ] && [ "$KPORT_STAGE" = analyze ]; then
  head -c 104857600 /dev/zero | tr '\0' ' ' > "$KPORT_RESULT"
  exit 0
fi
exec "$here/good.sh"
