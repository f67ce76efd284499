#!/bin/sh
# The Debian package: cpack -G DEB builds it from this build tree; it holds
# the install under /usr, depends on the Debian packages of the libraries it
# links, and its kport runs from where dpkg -x unpacked it.
# Usage: deb_package_test.sh CPACK BUILD_DIR VERSION
set -u
cpack=$1
build=$2
version=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kport-deb-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
unset KPORT_INJECT

fail() {
  echo "FAIL: $*"
  exit 1
}

"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" > "$tmp/cpack.log" 2>&1 || {
  cat "$tmp/cpack.log"
  fail "cpack -G DEB"
}
deb=$(ls "$tmp"/pkg/kport_*.deb 2>/dev/null)
[ -f "$deb" ] || fail "cpack made no kport_*.deb: $(ls "$tmp/pkg")"
dpkg-deb -f "$deb" Package Version Maintainer Depends
[ "$(dpkg-deb -f "$deb" Package)" = kport ] || fail "package name"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "package version"
[ -n "$(dpkg-deb -f "$deb" Maintainer)" ] || fail "no Maintainer"
depends=$(dpkg-deb -f "$deb" Depends)
for p in libc6 libstdc++6 libcaf-core0.17 libspdlog1.10 libflatbuffers2 libsqlite3-0; do
  echo "$depends" | grep -q "$p" || fail "Depends lacks $p: $depends"
done

dpkg -x "$deb" "$tmp/root" || fail "dpkg -x"
for f in usr/bin/kport usr/bin/kport_trace_dump usr/lib/libkport_inject.so \
  usr/lib/libkport.so usr/include/kport/engine.hpp \
  usr/lib/cmake/kport/kportConfig.cmake \
  usr/share/kport/python/kport_bench/__init__.py; do
  [ -e "$tmp/root/$f" ] || fail "the package has no /$f"
done
out=$("$tmp/root/usr/bin/kport" --version) || fail "kport --version"
[ "$out" = "kport $version" ] || fail "kport --version printed '$out'"
out=$("$tmp/root/usr/bin/kport" schema list) || fail "kport schema list"
for s in analyze translate integrate diagnose_ir diagnose_perf; do
  echo "$out" | grep -qx "$s" || fail "kport schema list lacks $s: $out"
done
echo "kport $version from the package: --version and schema list as expected"
