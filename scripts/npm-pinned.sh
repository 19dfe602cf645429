# Sourced by the setup scripts that take a pinned package from the npm registry.
#
#   npm_fetch_verified NAME PKG VERSION INTEGRITY WORK
#
# Installs Debian's npm when none is on PATH, `npm pack`s PKG@VERSION into WORK
# (no npm install: only the tarball's files are used), checks the registry's
# sha512 (a re-published or tampered package fails here) and unpacks it into
# WORK/unpacked/package.  NAME prefixes the messages.  Exits 1 on any failure.
npm_fetch_verified() {
  local name=$1 pkg=$2 version=$3 integrity=$4 work=$5 sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if ! command -v npm >/dev/null 2>&1; then
    echo "$name: installing npm"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends npm
  fi
  echo "$name: fetching $pkg@$version"
  (cd "$work" && npm pack --silent "$pkg@$version" >pack.out)
  local tgz
  tgz="$work/$(tail -n1 "$work/pack.out")"
  [ -f "$tgz" ] || { echo "$name: npm pack produced no tarball" >&2; exit 1; }
  local actual
  actual="sha512-$(python3 -c 'import base64,hashlib,sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1],"rb").read()).digest()).decode())' "$tgz")"
  if [ "$actual" != "$integrity" ]; then
    echo "$name: integrity mismatch for $tgz: got $actual, want $integrity" >&2
    exit 1
  fi
  mkdir -p "$work/unpacked"
  tar -xzf "$tgz" -C "$work/unpacked"
}
