#!/bin/sh
# The `tileiras` that tileir_dump.sh hands to cuTile Rust through
# CUTILE_TILEIRAS_PATH, so the structure gate gets the very bytecode the JIT
# compiles: cuTile Rust writes each module to $TMPDIR/<uuid>.bc, runs
# `tileiras --gpu-name SM --opt-level 3 -o X.cubin X.bc` and deletes both;
# it has no dump-folder variable (CUTILE_DUMP prints decoded text to stderr).
#   KPORT_TILEIRAS_CAPTURE  the folder the .bc files are copied to
#   KPORT_TILEIRAS_REAL     the tileiras the JIT would have run without us
# This runs the real tileiras with the same arguments, so the candidate's
# program works unchanged (its output, exit status or signal pass through),
# and when it succeeded copies the last `*.bc` argument to
# $KPORT_TILEIRAS_CAPTURE/NNNN.bc (in the order compiled): what it rejected
# (the JIT's probe of a bytecode version too new for it) was never compiled,
# and the tile tools of the same release may not read it either.
set -eu
: "${KPORT_TILEIRAS_REAL:?tileiras_capture.sh: KPORT_TILEIRAS_REAL is not set (tileir_dump.sh sets it)}"
: "${KPORT_TILEIRAS_CAPTURE:?tileiras_capture.sh: KPORT_TILEIRAS_CAPTURE is not set (tileir_dump.sh sets it)}"

if [ "$#" = 1 ] && [ "$1" = "--version" ]; then
  # cuTile Rust keys its optional disk cache of cubins by this output: a
  # line of our own makes every capture run miss it, so tileiras really runs
  # (and the .bc is seen) even when an earlier run cached the kernel.
  "$KPORT_TILEIRAS_REAL" --version
  echo "kport tileiras capture into $KPORT_TILEIRAS_CAPTURE"
  exit 0
fi

bc=
for a in "$@"; do
  case "$a" in
    *.bc) bc=$a ;;
  esac
done
# The JIT deletes the .bc only after tileiras returns, so it is still there.
"$KPORT_TILEIRAS_REAL" "$@" && rc=0 || rc=$?
if [ "$rc" = 0 ] && [ -n "$bc" ] && [ -f "$bc" ]; then
  # The JIT may compile from several threads: noclobber makes claiming a
  # number atomic, so two copies never share a name.
  n=$(ls "$KPORT_TILEIRAS_CAPTURE" | wc -l)
  while :; do
    n=$((n + 1))
    name=$(printf '%s/%04d.bc' "$KPORT_TILEIRAS_CAPTURE" "$n")
    if (set -C; : > "$name") 2> /dev/null; then
      break
    fi
  done
  cp "$bc" "$name"
fi
# cuTile Rust tells a crashed tileiras (a signal) from one that rejected its
# input (an exit status): die of the same signal.
if [ "$rc" -gt 128 ]; then
  kill -$((rc - 128)) $$
fi
exit "$rc"
