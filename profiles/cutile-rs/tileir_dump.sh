#!/bin/sh
# The structure gate's `ir` command of the cutile-rs profile.
#   tileir_dump.sh reference|candidate KERNEL_GLOB -- COMMAND...
# Runs COMMAND once with the side's bytecode dump switched on, then writes
# the canonical MLIR of the bytecode files whose names match KERNEL_GLOB to
# $KPORT_IR_OUT:
#   reference: CUDA_TILE_DUMP_BYTECODE=<dir> (cuTile Python, Triton-TileIR)
#   candidate: CUTILE_DUMP=bytecode CUTILE_DUMP_DIR=<dir> (cuTile Rust)
#   both:      cuda-tile-translate --cudatilebc-to-mlir FILE
#              | cuda-tile-opt --canonicalize --cse
# Exit 1 when the run dumped no matching bytecode.
set -eu
side=$1
glob=$2
shift 2
[ "${1:-}" = "--" ] && shift
: "${KPORT_IR_OUT:?KPORT_IR_OUT is not set (kport sets it)}"
dump=$(mktemp -d)
trap 'rm -rf "$dump"' EXIT
case "$side" in
  reference) CUDA_TILE_DUMP_BYTECODE="$dump" "$@" ;;
  candidate) CUTILE_DUMP=bytecode CUTILE_DUMP_DIR="$dump" "$@" ;;
  *) echo "tileir_dump.sh: side must be reference or candidate" >&2; exit 2 ;;
esac
: > "$KPORT_IR_OUT"
found=0
for f in "$dump"/*; do
  [ -f "$f" ] || continue
  case "$(basename "$f")" in
    $glob) ;;
    *) continue ;;
  esac
  cuda-tile-translate --cudatilebc-to-mlir "$f" |
    cuda-tile-opt --canonicalize --cse >> "$KPORT_IR_OUT"
  found=$((found + 1))
done
if [ "$found" = 0 ]; then
  echo "tileir_dump.sh: no bytecode matching '$glob' in the $side run; it dumped: $(ls "$dump")" >&2
  exit 1
fi
