#!/bin/sh
# good.sh after a pause of KPORT_TEST_SLEEP seconds (default 0.1), spent in a
# second member of the process group: a kport killed meanwhile leaves both
# behind, for the next daemon to find and kill.
sleep "${KPORT_TEST_SLEEP:-0.1}" &
wait $!
exec "$(dirname "$0")/good.sh"
