#!/bin/sh
# An agent that tries the network: a TCP connect to 127.0.0.1:KPORT_TEST_PORT,
# a listener of the test outside the sandbox. In a network namespace of its
# own even that loopback is not the host's, so the connect fails. It says
# which in its result's summary; analyze PASS, translate COMPILED.
set -u
if timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/${KPORT_TEST_PORT:?}" \
    2>/dev/null; then
  net=reachable
else
  net=unreachable
fi
echo "net_probe.sh: ${KPORT_STAGE:?}: network $net"
case "$KPORT_STAGE" in
  analyze)
    cat > "$KPORT_RESULT" <<JSON
{"verdict": "PASS", "summary": "network $net", "kernels": [], "configs": []}
JSON
    ;;
  *)
    cat > "$KPORT_RESULT" <<JSON
{"verdict": "COMPILED", "summary": "network $net", "files": []}
JSON
    ;;
esac
