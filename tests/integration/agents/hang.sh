#!/bin/sh
# An agent that never answers. When KPORT_TEST_PIDS names a file or FIFO it
# appends "<stage> <attempt> <pid> <child pid>" to it first (a FIFO blocks until
# the test reads it: the test then knows the agent runs). The child is a second
# member of the process group: the group kill must end it too. With
# KPORT_TEST_HANG_STAGE set, only that stage hangs; the others act as good.sh.
# With KPORT_TEST_IGNORE_TERM=1 the blocking process ignores SIGTERM (an
# ignored signal stays ignored across exec): only SIGKILL ends it.
: "${KPORT_STAGE:?}" "${KPORT_ATTEMPT:?}"
if [ -n "${KPORT_TEST_HANG_STAGE:-}" ] && [ "$KPORT_STAGE" != "$KPORT_TEST_HANG_STAGE" ]; then
  exec "$(dirname "$0")/good.sh"
fi
sleep 100000 &
if [ -n "${KPORT_TEST_PIDS:-}" ]; then
  echo "$KPORT_STAGE $KPORT_ATTEMPT $$ $!" >> "$KPORT_TEST_PIDS"
fi
if [ "${KPORT_TEST_IGNORE_TERM:-0}" = 1 ]; then
  trap '' TERM
fi
# exec: the process kport started is the one that blocks, so only the process
# group kill can end it.
exec sleep 100000
