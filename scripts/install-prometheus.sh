#!/usr/bin/env bash
# Puts Debian's Prometheus 2.x binaries (prometheus, promtool) under .tools/prometheus/usr/bin,
# without installing the package's service. The test fixtures look there first.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dest="$here/.tools/prometheus"
if [ -x "$dest/usr/bin/prometheus" ] && [ -x "$dest/usr/bin/promtool" ]; then
  exit 0
fi
mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get download prometheus >/dev/null 2>&1; then
  # A fresh machine has no package lists yet.
  apt-get update -qq
  apt-get download prometheus
fi
dpkg-deb -x prometheus_*.deb "$dest"
"$dest/usr/bin/prometheus" --version | head -1
