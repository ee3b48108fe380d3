#!/usr/bin/env bash
# Debian's Prometheus server and Python's prometheus_client (the real parser of the exposition format),
# for the tests of `--prometheus`: the two packages are downloaded (apt-get download) and unpacked
# (dpkg-deb -x) into cqlbench's cache, never installed, so no service starts and nothing outside the
# cache changes. Prints the directory that holds usr/bin/prometheus and usr/lib/python3/dist-packages.
#   scripts/prometheus.sh fetch
set -euo pipefail
[ "${1:-}" = fetch ] || { echo "usage: $0 fetch" >&2; exit 2; }
cache="${CQLBENCH_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/cqlbench}/prometheus"
dir="$cache/debian"
mkdir -p "$cache"
# Test binaries may ask at once: one fetches, the others wait and find it done.
exec 9>"$cache/fetch.lock"
flock 9
if [ -f "$dir/.complete" ]; then
  echo "$dir"
  exit 0
fi
staging=$(mktemp -d "$cache/staging.XXXXXX")
trap 'rm -rf "$staging"' EXIT
packages=(prometheus python3-prometheus-client)
cd "$staging"
if ! apt-get download "${packages[@]}" >download.log 2>&1; then
  # A fresh machine may have no package lists yet.
  apt-get update -qq >>download.log 2>&1 || true
  apt-get download "${packages[@]}" >>download.log 2>&1 || {
    echo "cannot download Debian's ${packages[*]} with apt-get download:" >&2
    cat download.log >&2
    exit 1
  }
fi
for deb in ./*.deb; do
  dpkg-deb -x "$deb" root
done
root/usr/bin/prometheus --version >/dev/null
PYTHONPATH=root/usr/lib/python3/dist-packages python3 -c 'import prometheus_client.parser'
rm -rf "$dir"
mv root "$dir"
touch "$dir/.complete"
echo "$dir"
