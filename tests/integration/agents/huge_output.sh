#!/bin/sh
# An agent that prints about 40 MiB to stdout in analyze, then behaves as
# good.sh (writes a valid result): the job must go on and the attempt's log
# must stop at runtime.agent_log_limit_mib.
: "${KPORT_STAGE:?}" "${KPORT_ATTEMPT:?}"
if [ "$KPORT_STAGE" = analyze ]; then
  yes 'huge_output.sh: a line of agent chatter that nobody needs to keep...' |
    head -c 41943040
fi
exec "$(dirname "$0")/good.sh"
