#!/bin/sh
# Rewrites its task file, then works honestly (good.sh): kport restores its
# own copy and does not trust the attempt.
echo '{"forged": true}' > "${KPORT_TASK:?}"
exec "$(cd "$(dirname "$0")" && pwd)/good.sh"
