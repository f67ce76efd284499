#!/bin/sh
# translate attempt 1 writes a candidate whose tests fail; every later attempt
# (and every other stage) behaves as good.sh.
: "${KPORT_STAGE:?}" "${KPORT_ATTEMPT:?}"
if [ "$KPORT_STAGE" = translate ] && [ "$KPORT_ATTEMPT" -eq 1 ]; then
  KPORT_TEST_CANDIDATE=broken
else
  KPORT_TEST_CANDIDATE=good
fi
export KPORT_TEST_CANDIDATE
exec "$(dirname "$0")/good.sh"
