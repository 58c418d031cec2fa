#!/usr/bin/env bash
# Puts Debian's VictoriaMetrics single-node server (the victoria-metrics package, 1.79 on Debian 12) under
# .tools/victoria-metrics/usr/bin, without the package's service or its other tools. The backend tests
# (tests/metrics/test_backend_victoriametrics.py) look there first. The Debian build reports no version
# itself, so the package version is kept in .tools/victoria-metrics/VERSION.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dest="$here/.tools/victoria-metrics"
if [ -x "$dest/usr/bin/victoria-metrics" ] && [ -s "$dest/VERSION" ]; then
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get download victoria-metrics >/dev/null 2>&1; then
  # A fresh machine has no package lists yet.
  apt-get update -qq
  apt-get download victoria-metrics
fi
dpkg-deb -x victoria-metrics_*.deb extracted
mkdir -p "$dest/usr/bin"
# Copy, then rename: an interrupted install never looks complete.
cp extracted/usr/bin/victoria-metrics "$dest/usr/bin/victoria-metrics.new"
mv "$dest/usr/bin/victoria-metrics.new" "$dest/usr/bin/victoria-metrics"
dpkg-deb -f victoria-metrics_*.deb Version > "$dest/VERSION"
echo "victoria-metrics $(cat "$dest/VERSION")"
