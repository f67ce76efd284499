#!/bin/sh
# Installs playwright-core (the browser driver of the report's browser test)
# from the npm registry into DIR/node_modules, unless it is there already.
# Never committed: DIR is in the build tree. Debian's chromium is the
# browser (scripts/setup installs it); playwright downloads none.
# usage: install_playwright.sh DIR
set -eu
dir=${1:?usage: install_playwright.sh DIR}
version=1.65.2
if [ -f "$dir/node_modules/playwright-core/package.json" ] &&
   grep -q "\"version\": \"$version\"" "$dir/node_modules/playwright-core/package.json"; then
  exit 0
fi
command -v npm >/dev/null || { echo "install_playwright: npm is missing (scripts/setup installs it)" >&2; exit 1; }
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error \
  "playwright-core@$version"
echo "install_playwright: playwright-core $version in $dir"
