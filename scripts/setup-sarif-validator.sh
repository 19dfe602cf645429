#!/usr/bin/env bash
# Installs Microsoft's SARIF validator (Sarif.Multitool, a self-contained native
# binary) and the SARIF 2.1.0 JSON schema it ships, from the npm registry, pinned,
# into a fixed folder that tests/report/validate_sarif.py looks in.
# Idempotent: a complete install of the pinned version is left alone.
#
#   DDPLINT_SARIF_TOOLS   install folder (default /opt/ddplint-tools/sarif-multitool-5.7.0)
set -euo pipefail

PKG=@microsoft/sarif-multitool-linux
VERSION=5.7.0
# The registry's sha512 of the tarball: a re-published or tampered package fails here.
INTEGRITY=sha512-NxUbpq6ISCWoTQ/NfOYEwEDKq1Heka/rMoJ5R5LMydcAZQX/X7g5mWHcgxDub+0M07LC96tZ5LZHvF1Qy3gjTA==
DEST=${DDPLINT_SARIF_TOOLS:-/opt/ddplint-tools/sarif-multitool-${VERSION}}

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

installed_ok() {
  [ -x "$DEST/Sarif.Multitool" ] && [ -f "$DEST/sarif-2.1.0.json" ] &&
    [ "$(cat "$DEST/.installed" 2>/dev/null)" = "$PKG@$VERSION" ]
}

if installed_ok; then
  echo "setup-sarif-validator: $PKG@$VERSION is installed in $DEST"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=scripts/npm-pinned.sh
. "$(dirname "$0")/npm-pinned.sh"
npm_fetch_verified setup-sarif-validator "$PKG" "$VERSION" "$INTEGRITY" "$work"
src="$work/unpacked/package"
[ -f "$src/Sarif.Multitool" ] || { echo "setup-sarif-validator: no Sarif.Multitool in $PKG@$VERSION" >&2; exit 1; }
[ -f "$src/sarif-2.1.0.json" ] || { echo "setup-sarif-validator: no sarif-2.1.0.json in $PKG@$VERSION" >&2; exit 1; }
chmod +x "$src/Sarif.Multitool"

# Replace the folder whole, so a half-finished earlier attempt leaves nothing behind.
$SUDO mkdir -p "$(dirname "$DEST")"
$SUDO rm -rf "$DEST.tmp"
$SUDO cp -a "$src" "$DEST.tmp"
echo "$PKG@$VERSION" | $SUDO tee "$DEST.tmp/.installed" >/dev/null
$SUDO rm -rf "$DEST"
$SUDO mv "$DEST.tmp" "$DEST"

# A .NET single-file binary fails at start-up without ICU unless told to run
# invariant; check it runs here rather than at the first test.
if ! DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 "$DEST/Sarif.Multitool" --version >/dev/null 2>&1; then
  echo "setup-sarif-validator: $DEST/Sarif.Multitool does not run on this machine" >&2
  exit 1
fi
echo "setup-sarif-validator: installed $PKG@$VERSION in $DEST"
