#!/usr/bin/env bash
# Installs forge-roofline's build and run dependencies from the distribution's packages.
# As root on Debian or Ubuntu it runs apt-get; otherwise it prints the exact command and stops.
# --check only reports (exit 1 when something is missing).
set -euo pipefail

packages=(gcc make pkg-config libpapi-dev libhwloc-dev libopenblas-dev libcjson-dev libutf8proc-dev
          libcriterion-dev gnuplot-nox clang libclang-rt-14-dev clang-format clang-tidy cppcheck
          libsqlite3-dev libpq-dev postgresql libdnnl-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  [ "${1:-}" = "--check" ] || echo "bootstrap: all dependencies present"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "bootstrap: missing: ${missing[*]}"
  exit 1
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "bootstrap: missing packages: ${missing[*]}" >&2
  echo "bootstrap: run as root on Debian/Ubuntu: apt-get update && $cmd" >&2
  exit 1
fi
echo "bootstrap: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends ${missing[*]}
