#!/bin/sh
# Every agent stage of the consumer's port, for the installed kport command
# line (exec driver): what main.cpp's builtin agent answers, as a script.
set -eu
project=$(cd "$(dirname "$0")" && pwd)/project
case "$KPORT_STAGE" in
  analyze)
    echo '{"verdict": "PASS", "summary": "one kernel: add(a, b)"}' > "$KPORT_RESULT"
    ;;
  translate)
    cp "$project/candidate/kernel.sh" "$KPORT_WORKSPACE/"
    echo '{"verdict": "COMPILED", "summary": "kernel.sh written", "files": ["kernel.sh"]}' > "$KPORT_RESULT"
    ;;
  integrate)
    echo '{"verdict": "INTEGRATED", "summary": "the tests call kernel.sh", "files": []}' > "$KPORT_RESULT"
    ;;
  *)
    echo "agent.sh: no answer for stage $KPORT_STAGE" >&2
    exit 64
    ;;
esac
