#!/bin/sh
# A test suite that hangs: writes "<pid> <child pid>" to the file or FIFO
# named by $1 (so a test knows it started and can check it is gone), then
# blocks until killed with its process group.
sleep 100000 &
echo "$$ $!" >> "${1:?usage: run_tests_hang.sh PID_FILE}"
exec sleep 100000
