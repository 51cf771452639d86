#!/usr/bin/env bash
# build-workloads.sh: real programs rebuilt from Debian source packages with
# clang's load/store instrumentation and libllcprobe-rt (scripts/llcprobe-cc),
# for `llcprobe mrc --sampler rt` and the runtime's full-trace mode.
#
#     scripts/build-workloads.sh [BUILD_DIR]     (default build/; must be built)
#
# Result: BUILD_DIR/workloads/bin/{bzip2,xz}, plus the unpacked sources in
# BUILD_DIR/workloads/src. Idempotent: a program whose stamp names the same
# source version and the same runtime archive is not rebuilt. Needs a deb-src
# entry for the system's Debian archive; as root it adds one (a deb822 file
# next to the system's own) when none is configured, runs apt-get update, and
# removes it again when done (scripts/deb-src.sh). Any other source package:
# scripts/build-instrumented.sh.
# Environment: WORKLOADS (default "bzip2 xz-utils"), JOBS (default 2),
# KEEP_DEB_SRC=1 keeps an added deb-src entry.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
die() { echo "build-workloads: $*" >&2; exit 1; }
[ -d "$build" ] || die "$build: no such build directory (build llcprobe first)"
build=$(cd "$build" && pwd)
lib=$build/lib/libllcprobe-rt.a
[ -f "$lib" ] || die "$lib missing: build llcprobe first (cmake --build $build)"
cc=$root/scripts/llcprobe-cc
jobs=${JOBS:-2}
out=$build/workloads
mkdir -p "$out/src" "$out/bin" "$out/log"
export LLCPROBE_RT_LIB=$lib
# Nothing the build runs (configure tests, the program itself) may profile.
unset LLCPROBE_RT_OUTPUT LLCPROBE_RT_MODE

for tool in apt-get dpkg-source clang make; do
  command -v "$tool" >/dev/null || die "$tool not found (apt-get install dpkg-dev clang make)"
done

log_dir=$out/log
. "$root/scripts/deb-src.sh"
deb_src_ensure build-workloads

# Source version apt would fetch, e.g. 5.4.1-1+deb12u2.
src_version() {
  # awk reads to the end: an early exit would kill apt-cache with SIGPIPE,
  # which pipefail turns into a failure of the whole script.
  apt-cache showsrc "$1" 2>/dev/null | awk '/^Version:/ && v == "" { v = $2 } END { print v }'
}

lib_id=$(cksum <"$lib" | awk '{ print $1 "-" $2 }')

fetch() { # package version -> prints the unpacked directory
  local pkg=$1 ver=$2 upstream dir
  upstream=${ver#*:}
  upstream=${upstream%-*}
  dir=$out/src/$pkg-$upstream
  if [ ! -d "$dir" ]; then
    echo "build-workloads: apt-get source $pkg=$ver" >&2
    (cd "$out/src" && apt-get source -qq "$pkg=$ver") >"$out/log/$pkg-source.log" 2>&1 ||
      die "apt-get source $pkg=$ver failed (see $out/log/$pkg-source.log)"
    [ -d "$dir" ] || die "apt-get source $pkg did not unpack into $dir"
  fi
  echo "$dir"
}

build_bzip2() { # dir
  # Debian's Makefile links bzip2 against its shared libbz2, which would put
  # a second copy of the runtime into the library: compile the program and
  # the library sources into one static executable instead, with the
  # Makefile's flags.
  (cd "$1" && rm -f bzip2 &&
     "$cc" -Wall -Winline -O2 -g -D_FILE_OFFSET_BITS=64 -o bzip2 bzip2.c blocksort.c \
       huffman.c crctable.c randtable.c compress.c decompress.c bzlib.c) &&
    cp "$1/bzip2" "$out/bin/bzip2"
}

build_xz() { # dir
  # Static liblzma so that src/xz/xz is the program itself, not a libtool
  # wrapper script around .libs/xz.
  (cd "$1" && ./configure -q CC="$cc" --disable-shared --disable-nls --disable-doc \
     --disable-scripts --disable-xzdec --disable-lzmadec --disable-lzmainfo \
     --disable-lzma-links) &&
    rm -f "$1/src/xz/xz" && make -C "$1" -j"$jobs" && cp "$1/src/xz/xz" "$out/bin/xz"
}

for pkg in ${WORKLOADS:-bzip2 xz-utils}; do
  case "$pkg" in
    bzip2) prog=bzip2 builder=build_bzip2 ;;
    xz-utils) prog=xz builder=build_xz ;;
    *) die "no recipe for source package '$pkg' (known: bzip2 xz-utils)" ;;
  esac
  ver=$(src_version "$pkg")
  [ -n "$ver" ] || die "apt-cache showsrc $pkg: no source version (is the deb-src entry updated? run apt-get update)"
  stamp=$out/bin/.$prog.stamp
  want="$pkg $ver rt $lib_id"
  if [ -x "$out/bin/$prog" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    echo "build-workloads: $prog up to date ($pkg $ver)"
    continue
  fi
  dir=$(fetch "$pkg" "$ver")
  echo "build-workloads: building $prog from $pkg $ver with llcprobe-cc (log: $out/log/$prog-build.log)"
  rm -f "$stamp"
  if ! $builder "$dir" >"$out/log/$prog-build.log" 2>&1; then
    tail -n 5 "$out/log/$prog-build.log" >&2
    die "building $prog failed (see $out/log/$prog-build.log)"
  fi
  grep -q 'llcprobe-rt runtime marker' "$out/bin/$prog" ||
    die "$out/bin/$prog does not carry libllcprobe-rt (was llcprobe-cc used as CC?)"
  echo "$want" >"$stamp"
  echo "build-workloads: $out/bin/$prog"
done
