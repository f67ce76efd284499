#!/bin/sh
# good.sh after a pause of KPORT_TEST_SLEEP seconds (default 0.1). It leaves
# a long-lived second member in its process group: kport kills the group
# when the agent ends, and a kport killed meanwhile leaves it behind for the
# next daemon to find and kill.
sleep 100000 &
sleep "${KPORT_TEST_SLEEP:-0.1}"
exec "$(dirname "$0")/good.sh"
