#!/usr/bin/env bash
# Installs what llcprobe needs (Debian packages) and builds it into build/.
# Idempotent: installs only what is missing, runs apt-get update at most once.
# Then installs the program, its runtime, headers, man page and pkg-config
# file under a prefix, so `man llcprobe` finds the page: /usr/local when run
# as root, else ~/.local (man finds ~/.local/share/man when ~/.local/bin is
# on PATH).
# Usage: scripts/setup.sh [--sanitize] [--prefix DIR] [--no-install]
#   --sanitize  build build-asan/ (ASan+UBSan) instead; never installed
#   --prefix    install under DIR (also LLCPROBE_PREFIX)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config
          libhugetlbfs-dev libgsl-dev libpfm4-dev libjansson-dev libhwloc-dev libcmocka-dev
          valgrind clang gnuplot-nox xz-utils bzip2 gzip zstd python3 sqlite3 perl bc groff-base
          qemu-user gawk slurmctld slurmd slurm-client munge lz4 tcl jq)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  # apt-get update once: only when the package lists are missing or the install fails.
  if ! "${sudo_cmd[@]}" apt-get install -y -q "${missing[@]}" >/dev/null; then
    "${sudo_cmd[@]}" apt-get update -q >/dev/null
    "${sudo_cmd[@]}" apt-get install -y -q "${missing[@]}" >/dev/null
  fi
fi

# QEMU's plugin API header for libllcprobe-qemu (from Debian's qemu source).
scripts/qemu-plugin-header.sh

build=build
flags=()
install=1
prefix=${LLCPROBE_PREFIX:-}
while (($#)); do
  case "$1" in
    --sanitize) build=build-asan; flags=(-DLLCPROBE_SANITIZE=ON); install=0 ;;
    --prefix) prefix=${2:?--prefix needs a directory}; shift ;;
    --prefix=*) prefix=${1#--prefix=} ;;
    --no-install) install=0 ;;
    *) echo "setup: unknown option $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
  shift
done
cmake -S . -B "$build" "${flags[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
echo "setup: built $build/llcprobe" >&2
if ((install)); then
  if [ -z "$prefix" ]; then
    if [ "$(id -u)" -eq 0 ]; then prefix=/usr/local; else prefix=$HOME/.local; fi
  fi
  cmake --install "$build" --prefix "$prefix" >/dev/null
  echo "setup: installed under $prefix (man llcprobe; $prefix/bin/llcprobe)" >&2
  if ! MANPAGER=cat man -w llcprobe >/dev/null 2>&1; then
    echo "setup: man does not search $prefix/share/man yet: add $prefix/bin to PATH or $prefix/share/man to MANPATH" >&2
  fi
fi
