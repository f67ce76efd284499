#!/bin/sh
# The structure gate's `ir` command of the cutile-rs profile.
#   tileir_dump.sh reference|candidate KERNEL_GLOB -- COMMAND...
# Runs COMMAND once with the side's bytecode capture switched on, then writes
# the canonical MLIR of the captured bytecode of the kernels KERNEL_GLOB names
# to $KPORT_IR_OUT:
#   reference: CUDA_TILE_DUMP_BYTECODE=<dir> (cuTile Python, Triton-TileIR);
#              KERNEL_GLOB matches the dumped files' names.
#   candidate: cuTile Rust has no dump folder: CUTILE_TILEIRAS_PATH is set to
#              tileiras_capture.sh (beside this script), which copies each
#              .bc the JIT compiles and runs the real tileiras, found the way
#              cuTile Rust finds it (below). KERNEL_GLOB matches the module's
#              or an entry's name (`<kernel>_entry`); the JIT's own version
#              probe (module __cutile_probe) and repeated identical bytecode
#              are left out.
#   both:      cuda-tile-translate --cudatilebc-to-mlir FILE
#              | cuda-tile-opt --canonicalize --cse
# Exit 1 when the run compiled no matching bytecode, 2 when a tool is missing.
set -eu
side=$1
glob=$2
shift 2
[ "${1:-}" = "--" ] && shift
: "${KPORT_IR_OUT:?KPORT_IR_OUT is not set (kport sets it)}"

say() { echo "tileir_dump.sh: $*" >&2; }

# Both sides need the tile tools; without them the reference's bytecode cannot
# be read, so there is nothing to compare the candidate's IR with (cuTile
# Rust's CUTILE_DUMP=ir text is no substitute): stop before the run.
for tool in cuda-tile-translate cuda-tile-opt; do
  if ! command -v "$tool" > /dev/null 2>&1; then
    say "$tool is not on PATH: the cutile-rs profile needs the CUDA 13.3 tile" \
      "compiler tools (cuda-tile-translate, cuda-tile-opt) to read Tile IR" \
      "bytecode; put their bin folder on PATH"
    exit 2
  fi
done

# The tileiras cuTile Rust's JIT would run (cutile-compiler,
# cuda_tile_runtime_utils.rs, tileiras_binary()): CUTILE_TILEIRAS_PATH; else
# bin/tileiras of the first non-empty of CUDA_TOOLKIT_PATH and CUDA_HOME;
# else of the first default toolkit with cuda.h's CUDA_VERSION >= 13020
# (KPORT_TILEIRAS_TOOLKITS replaces that list, for tests); else PATH.
toolkit_version() {
  for h in "$1/include/cuda.h" "$1/targets/x86_64-linux/include/cuda.h" \
    "$1/targets/sbsa-linux/include/cuda.h" \
    "$1/targets/aarch64-linux/include/cuda.h"; do
    if [ -f "$h" ]; then
      sed -n 's/^#define[[:space:]]*CUDA_VERSION[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$h" | head -n 1
      return 0
    fi
  done
}

real_tileiras() {
  if [ -n "${CUTILE_TILEIRAS_PATH:-}" ]; then
    t=$CUTILE_TILEIRAS_PATH
    # A bare name is looked up on PATH, as the JIT does; a relative path is
    # made absolute, since the program may change folder before it compiles.
    case "$t" in
      /*) ;;
      */*) t="$PWD/$t" ;;
      *) t=$(command -v "$t" 2> /dev/null) || t=$CUTILE_TILEIRAS_PATH ;;
    esac
    if [ ! -f "$t" ] || [ ! -x "$t" ]; then
      say "CUTILE_TILEIRAS_PATH=$CUTILE_TILEIRAS_PATH is not an executable file"
      return 1
    fi
    echo "$t"
    return 0
  fi
  root=${CUDA_TOOLKIT_PATH:-${CUDA_HOME:-}}
  if [ -n "$root" ] && [ -f "$root/bin/tileiras" ]; then
    echo "$root/bin/tileiras"
    return 0
  fi
  for root in ${KPORT_TILEIRAS_TOOLKITS-/usr/local/cuda-13.4 /usr/local/cuda-13.3 /usr/local/cuda-13.2 /usr/local/cuda-13 /usr/local/cuda /opt/cuda}; do
    [ -d "$root" ] && [ -f "$root/bin/tileiras" ] || continue
    v=$(toolkit_version "$root")
    if [ -n "$v" ] && [ "$v" -ge 13020 ]; then
      echo "$root/bin/tileiras"
      return 0
    fi
  done
  if t=$(command -v tileiras 2> /dev/null); then
    echo "$t"
    return 0
  fi
  say "no tileiras for cuTile Rust: CUTILE_TILEIRAS_PATH, CUDA_TOOLKIT_PATH," \
    "CUDA_HOME, the default CUDA 13.2+ toolkits" \
    "(${KPORT_TILEIRAS_TOOLKITS-/usr/local/cuda-13.4 ... /opt/cuda}) and PATH" \
    "have none; install the CUDA 13.3 tile compiler or set" \
    "CUTILE_TILEIRAS_PATH to its tileiras"
  return 1
}

# The names of a translated module: its own and its entries'.
names_of() {
  sed -n -e 's/^[[:space:]]*cuda_tile\.module[[:space:]]*@\([^[:space:]{]*\).*/\1/p' \
    -e 's/^[[:space:]]*entry[[:space:]]*@\([^[:space:](]*\).*/\1/p' "$1"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dump="$work/bytecode"
mkdir "$dump"
ran() {
  rc=$?
  say "the $side's command exited $rc (it must launch the kernel and succeed): $*"
  exit "$rc"
}
case "$side" in
  reference) CUDA_TILE_DUMP_BYTECODE="$dump" "$@" || ran "$@" ;;
  candidate)
    real=$(real_tileiras) || exit 2
    # A copy of our own, made executable here: the JIT executes
    # CUTILE_TILEIRAS_PATH directly, whatever mode the profile was installed with.
    cp "$(dirname "$0")/tileiras_capture.sh" "$work/tileiras"
    chmod +x "$work/tileiras"
    CUTILE_TILEIRAS_PATH="$work/tileiras" KPORT_TILEIRAS_REAL="$real" \
      KPORT_TILEIRAS_CAPTURE="$dump" "$@" || ran "$@"
    ;;
  *) say "side must be reference or candidate"; exit 2 ;;
esac
: > "$KPORT_IR_OUT"
found=0
kept=
for f in "$dump"/*; do
  [ -f "$f" ] || continue
  mlir="$work/module.mlir"
  case "$side" in
    reference)
      case "$(basename "$f")" in
        $glob) ;;
        *) continue ;;
      esac
      cuda-tile-translate --cudatilebc-to-mlir "$f" > "$mlir"
      ;;
    candidate)
      dup=0
      for k in $kept; do
        if cmp -s "$f" "$dump/$k"; then dup=1; break; fi
      done
      [ "$dup" = 0 ] || continue
      cuda-tile-translate --cudatilebc-to-mlir "$f" > "$mlir"
      match=0
      for n in $(names_of "$mlir"); do
        case "$n" in
          __cutile_probe) match=0; break ;;
          $glob) match=1 ;;
        esac
      done
      [ "$match" = 1 ] || continue
      kept="$kept $(basename "$f")"
      ;;
  esac
  cuda-tile-opt --canonicalize --cse < "$mlir" >> "$KPORT_IR_OUT"
  found=$((found + 1))
done
if [ "$found" = 0 ]; then
  if [ "$side" = candidate ]; then
    say "no bytecode of a module or entry matching '$glob' in the candidate" \
      "run: tileiras compiled $(ls "$dump" | wc -l) module(s). cuTile Rust" \
      "runs tileiras only when the run launches a kernel, and only through" \
      "CUTILE_TILEIRAS_PATH if the program does not set it itself"
  else
    say "no bytecode matching '$glob' in the $side run; it dumped:" \
      "$(ls "$dump")"
  fi
  exit 1
fi
