#!/bin/sh
# The reference "kernel" of the tiny project: prints the sum of its two
# integer arguments. Candidates implement the same contract.
echo $(($1 + $2))
