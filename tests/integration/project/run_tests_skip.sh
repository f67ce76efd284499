#!/bin/sh
# A test suite that only skips (the cheat kport must catch): exits 0 and
# prints a summary with no executed test.
for name in small_sums large_sums negative_sums; do
  echo "skip add.$name: backend not available"
done
echo "0 passed, 0 failed, 3 skipped"
