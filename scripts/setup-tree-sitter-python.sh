#!/usr/bin/env bash
# Installs the tree-sitter Python grammar (the generated parser.c and scanner.c)
# from the npm registry, pinned and checksum-checked, into a fixed folder that
# CMake compiles into the Python frontend (checks/python-frontend).
# Idempotent: a complete install of the pinned version is left alone.
#
# Why 0.23.6: Debian 12's libtree-sitter (0.20.7) loads grammar ABI 13-14;
# tree-sitter-python 0.23.6 is the last release generated with ABI 14 (0.25 is ABI 15).
#
#   DDPLINT_TS_PYTHON   install folder (default /opt/ddplint-tools/tree-sitter-python-0.23.6)
set -euo pipefail

PKG=tree-sitter-python
VERSION=0.23.6
# The registry's sha512 of the tarball: a re-published or tampered package fails here.
INTEGRITY=sha512-yIM9z0oxKIxT7bAtPOhgoVl6gTXlmlIhue7liFT4oBPF/lha7Ha4dQBS82Av6hMMRZoVnFJI8M6mL+SwWoLD3A==
DEST=${DDPLINT_TS_PYTHON:-/opt/ddplint-tools/tree-sitter-python-${VERSION}}

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

installed_ok() {
  [ -f "$DEST/src/parser.c" ] && [ -f "$DEST/src/scanner.c" ] &&
    [ -f "$DEST/src/tree_sitter/parser.h" ] &&
    [ "$(cat "$DEST/.installed" 2>/dev/null)" = "$PKG@$VERSION" ]
}

if installed_ok; then
  echo "setup-tree-sitter-python: $PKG@$VERSION is installed in $DEST"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=scripts/npm-pinned.sh
. "$(dirname "$0")/npm-pinned.sh"
npm_fetch_verified setup-tree-sitter-python "$PKG" "$VERSION" "$INTEGRITY" "$work"
src="$work/unpacked/package"
for f in src/parser.c src/scanner.c src/tree_sitter/parser.h LICENSE; do
  [ -f "$src/$f" ] || { echo "setup-tree-sitter-python: no $f in $PKG@$VERSION" >&2; exit 1; }
done
grep -q '#define LANGUAGE_VERSION 14' "$src/src/parser.c" ||
  { echo "setup-tree-sitter-python: $PKG@$VERSION is not grammar ABI 14" >&2; exit 1; }

# Replace the folder whole, so a half-finished earlier attempt leaves nothing behind.
$SUDO mkdir -p "$(dirname "$DEST")"
$SUDO rm -rf "$DEST.tmp"
$SUDO mkdir -p "$DEST.tmp"
$SUDO cp -a "$src/src" "$src/LICENSE" "$DEST.tmp/"
echo "$PKG@$VERSION" | $SUDO tee "$DEST.tmp/.installed" >/dev/null
$SUDO rm -rf "$DEST"
$SUDO mv "$DEST.tmp" "$DEST"
echo "setup-tree-sitter-python: installed $PKG@$VERSION in $DEST"
