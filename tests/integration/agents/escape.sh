#!/bin/sh
# An agent that makes KPORT_RESULT a symlink to a valid artifact outside its
# attempt folder (the file named by KPORT_TEST_OUTSIDE).
: "${KPORT_STAGE:?}" "${KPORT_ATTEMPT:?}"
outside=${KPORT_TEST_OUTSIDE:?}
mkdir -p "$(dirname "$outside")"
printf '{"verdict": "PASS", "summary": "written outside"}\n' > "$outside"
ln -sf "$outside" "$KPORT_RESULT"
