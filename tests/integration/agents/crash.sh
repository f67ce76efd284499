#!/bin/sh
# An agent that dies of SIGSEGV before it writes a result.
echo "crash.sh: $KPORT_STAGE attempt $KPORT_ATTEMPT"
kill -SEGV $$
