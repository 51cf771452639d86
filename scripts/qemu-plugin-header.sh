#!/usr/bin/env bash
# Installs QEMU's TCG plugin API header (qemu-plugin.h), which no Debian 12
# binary package ships (there is no qemu-system-dev in bookworm), from
# Debian's qemu source package, so that the build can make libllcprobe-qemu.
# Run by scripts/setup.sh; idempotent (nothing to do once the header is in
# DEST_DIR).
#
# The source package is fetched with apt-get into a temporary directory,
# with a temporary package list made from this machine's own apt sources
# (their "deb" entries as "deb-src"): the system's apt configuration and
# package lists are not touched, and nothing is left behind.
# Usage: scripts/qemu-plugin-header.sh [DEST_DIR]   (default /usr/local/include/llcprobe-qemu)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
dest=${1:-/usr/local/include/llcprobe-qemu}
if [ -f "$dest/qemu-plugin.h" ]; then
  exit 0
fi
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/llcprobe-qemu-src.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/parts" "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/src"
# The machine's sources as deb-src: one-line format and deb822 (.sources).
: >"$tmp/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] && sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >>"$tmp/sources.list"
done
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" >"$tmp/parts/$(basename "$f")"
done
opts=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/parts"
      -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o "APT::Sandbox::User=root")
apt-get -q "${opts[@]}" update >"$tmp/update.log" 2>&1 ||
  { cat "$tmp/update.log" >&2; echo "qemu-plugin-header: apt-get update of the source lists failed" >&2; exit 1; }
# The source of the installed qemu-user if apt still offers it, else the newest.
version=$(dpkg-query -W -f='${source:Version}' qemu-user 2>/dev/null || true)
(cd "$tmp/src" &&
  { { [ -n "$version" ] && apt-get -q "${opts[@]}" source --download-only "qemu=$version"; } ||
      apt-get -q "${opts[@]}" source --download-only qemu; }) >"$tmp/source.log" 2>&1 ||
  { cat "$tmp/source.log" >&2; echo "qemu-plugin-header: apt-get source qemu failed" >&2; exit 1; }
orig=$(ls "$tmp"/src/qemu_*.orig.tar.* | head -n 1)
tar -xf "$orig" -C "$tmp/src" --wildcards '*/include/qemu/qemu-plugin.h'
header=$(find "$tmp/src" -path '*/include/qemu/qemu-plugin.h' | head -n 1)
[ -n "$header" ] || { echo "qemu-plugin-header: no include/qemu/qemu-plugin.h in $orig" >&2; exit 1; }
"${sudo_cmd[@]}" install -D -m 0644 "$header" "$dest/qemu-plugin.h"
echo "qemu-plugin-header: installed $dest/qemu-plugin.h from $(basename "$orig")" >&2
