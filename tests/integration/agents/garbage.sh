#!/bin/sh
# An agent whose result is not JSON at all.
echo "garbage.sh: $KPORT_STAGE attempt $KPORT_ATTEMPT"
printf 'not json {' > "$KPORT_RESULT"
