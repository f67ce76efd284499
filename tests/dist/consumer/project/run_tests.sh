#!/bin/sh
# The tiny project's real test suite: runs the kernel under test ($1) on fixed
# cases, compares with the expected sums and prints the plain summary kport
# reads (`N passed, N failed` alone on a line). Exits 1 when a case fails.
kernel=${1:?usage: run_tests.sh KERNEL}
passed=0
failed=0
check() {
  got=$(sh "$kernel" "$1" "$2" 2>&1)
  if [ "$got" = "$3" ]; then
    passed=$((passed + 1))
    echo "ok   add($1, $2) = $got"
  else
    failed=$((failed + 1))
    echo "FAIL add($1, $2): got '$got', want $3"
  fi
}
check 1 2 3
check 0 0 0
check -5 5 0
check 100 100 200
check 1000 24 1024
check 123456 654321 777777
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
