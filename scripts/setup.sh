#!/usr/bin/env bash
# Installs what llcprobe needs (Debian packages) and builds it into build/.
# Idempotent: installs only what is missing, runs apt-get update at most once.
# Usage: scripts/setup.sh [--sanitize]   (--sanitize builds build-asan/ instead)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config
          libhugetlbfs-dev libgsl-dev libpfm4-dev libjansson-dev libhwloc-dev libcmocka-dev
          valgrind clang gnuplot-nox xz-utils bzip2 gzip zstd python3 sqlite3 perl bc groff-base
          qemu-user gawk)
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
if [ "${1:-}" = "--sanitize" ]; then
  build=build-asan
  flags=(-DLLCPROBE_SANITIZE=ON)
fi
cmake -S . -B "$build" "${flags[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
echo "setup: built $build/llcprobe" >&2
