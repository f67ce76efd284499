#!/usr/bin/env bash
# Packs an older kport for aa_before_after.sh: builds COMMIT in a worktree
# of its own (scripts/device-bundle there), keeps kport and its libraries
# (not the GPU test programs) with that commit's benchmarks/gpu and
# sdk/python (the bench helper must match the kport that reads its check
# files), and writes build/bundle-before.tar.xz (~6 MB): carry it beside
# build/bundle and pass it to aa_before_after.sh as it is.
#   benchmarks/gpu/before_bundle.sh [COMMIT]   (default 7f0d584: main before
#                                               the checks of issue 20)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
commit=${1:-7f0d584}
work=$(mktemp -d /tmp/kport-before.XXXXXX)
tree=$work/tree
trap 'git -C "$root" worktree remove --force "$tree" 2>/dev/null || true; rm -rf "$work"' EXIT
git -C "$root" worktree add --detach "$tree" "$commit" > /dev/null
KPORT_BUILD_DIR=$tree/build "$tree/scripts/device-bundle" > "$work/build.log" 2>&1 || {
  tail -20 "$work/build.log" >&2
  echo "before_bundle: building $commit failed (log above)" >&2
  exit 1
}
pack=$work/pack/.bundle-before
mkdir -p "$pack/benchmarks" "$pack/sdk"
cp -a "$tree/build/bundle" "$pack/"
# Only kport and what it loads: the GPU test programs are this tree's job.
for t in "$tree"/build/tests/gpu/*; do
  rm -f "$pack/bundle/bin/$(basename "$t")"
done
cp -a "$tree/benchmarks/gpu" "$pack/benchmarks/"
cp -a "$tree/sdk/python" "$pack/sdk/"
find "$pack" -name __pycache__ -prune -exec rm -rf {} +
mkdir -p "$root/build"
tar -C "$work/pack" -cJf "$root/build/bundle-before.tar.xz" .bundle-before
echo "before_bundle: $(du -h "$root/build/bundle-before.tar.xz" | cut -f1) build/bundle-before.tar.xz ($commit); carry it beside build/bundle"
