#!/bin/sh
# The C++ helper reads the round seed kport writes on stdin before the
# program's own static initialisers run (seed_first_probe.cpp).
# usage: seed_first_test.sh PROBE
out=$(printf '42\n' | KPORT_SEED_FD=0 "$1") || exit 1
[ "$out" = "port read 0 bytes, helper seed 42" ] || { echo "got: $out"; exit 1; }
echo "$out"
