#!/bin/sh
# An agent that gives up with exit status 3 (after writing a valid result:
# the exit status alone must fail the attempt).
printf '{"verdict": "PASS", "summary": "exit3.sh %s %s"}\n' \
  "$KPORT_STAGE" "$KPORT_ATTEMPT" > "$KPORT_RESULT"
echo "exit3.sh: giving up" >&2
exit 3
