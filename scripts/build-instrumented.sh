#!/usr/bin/env bash
# build-instrumented.sh: rebuild Debian source packages with clang's
# load/store instrumentation and libllcprobe-rt (scripts/llcprobe-cc as CC),
# for `llcprobe mrc --sampler rt` and the runtime's full-trace mode.
#
#     scripts/build-instrumented.sh [--build DIR] PACKAGE...
#
# PACKAGE is a source package (sqlite3, xz-utils, bzip2, zstd, gawk, ...) or
# a binary package apt maps to one. Each is fetched with `apt-get source`,
# its build dependencies installed (`apt-get build-dep`, as root), and built
# with `dpkg-buildpackage -b` and CC=llcprobe-cc: debian/rules' own
# configure and flags (dpkg-buildflags). Rules that name the compiler
# themselves (bzip2's CC=gcc) get llcprobe-cc too: cc, gcc and
# <triplet>-gcc[-N] are llcprobe-cc first on PATH during a build.
# Tests are skipped (DEB_BUILD_OPTIONS=nocheck). Nothing is
# installed: the instrumented executables are copied to
# DIR/instrumented/PACKAGE/bin and its shared libraries to .../lib; run an
# executable that uses the package's own libraries with
# LD_LIBRARY_PATH=DIR/instrumented/PACKAGE/lib so they are instrumented too
# (each library carries a copy of the runtime; one copy per process records).
# C++ (CXX, c++, g++) is compiled and linked with clang++ through
# llcprobe-cc too (LLCPROBE_CC=clang++): a C++ program linked against an
# instrumented C library needs the runtime anyway (zstd's pzstd).
#
# Needs a deb-src entry for the system's Debian archive; as root it adds one
# (a deb822 file mirroring /etc/apt/sources.list.d/debian.sources) when none
# is configured, and removes it again (and refreshes apt's lists) when done.
# Idempotent: a package whose stamp names the same source version and the
# same runtime archive is not rebuilt.
# Environment: JOBS (default 2), KEEP_DEB_SRC=1 keeps an added entry.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
die() { echo "build-instrumented: $*" >&2; exit 1; }
usage() { echo "usage: build-instrumented.sh [--build DIR] PACKAGE..." >&2; exit 2; }
while (($#)); do
  case "$1" in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) usage ;;
    *) break ;;
  esac
done
(($#)) || usage
[ -d "$build" ] || die "$build: no such build directory (build llcprobe first)"
build=$(cd "$build" && pwd)
lib=$build/lib/libllcprobe-rt.a
[ -f "$lib" ] || die "$lib missing: build llcprobe first (cmake --build $build)"
cc=$root/scripts/llcprobe-cc
jobs=${JOBS:-2}
out=$build/instrumented
mkdir -p "$out/src" "$out/log"
export LLCPROBE_RT_LIB=$lib
# Nothing the build runs (configure tests, generated docs) may profile.
unset LLCPROBE_RT_OUTPUT LLCPROBE_RT_MODE

for tool in apt-get dpkg-source dpkg-buildpackage clang make; do
  command -v "$tool" >/dev/null || die "$tool not found (apt-get install dpkg-dev clang make)"
done

log_dir=$out/log
. "$root/scripts/deb-src.sh"
deb_src_ensure build-instrumented

# Source package and version apt would fetch, e.g. "xz-utils 5.4.1-0.2".
src_of() {
  apt-cache showsrc "$1" 2>/dev/null |
    awk '/^Package:/ { p = $2 } /^Version:/ { print p, $2; exit }'
}

lib_id=$(cksum <"$lib" | awk '{ print $1 "-" $2 }')
is_instrumented() { grep -q 'llcprobe-rt runtime marker' "$1"; }

# cc/gcc on PATH are llcprobe-cc during the builds.
shims=$out/shims
mkdir -p "$shims"
triplet=$(dpkg-architecture -qDEB_HOST_GNU_TYPE 2>/dev/null || gcc -dumpmachine)
gcc_major=$(gcc -dumpversion 2>/dev/null | cut -d. -f1)
for name in cc gcc "$triplet-gcc" ${gcc_major:+"gcc-$gcc_major" "$triplet-gcc-$gcc_major"}; do
  ln -sf "$cc" "$shims/$name"
done
cxx=$shims/llcprobe-c++
printf '#!/bin/sh\nLLCPROBE_CC=clang++ exec "%s" "$@"\n' "$cc" >"$cxx"
chmod +x "$cxx"
for name in c++ g++ "$triplet-g++" ${gcc_major:+"g++-$gcc_major" "$triplet-g++-$gcc_major"}; do
  ln -sf "$cxx" "$shims/$name"
done

for want_pkg in "$@"; do
  read -r pkg ver < <(src_of "$want_pkg") ||
    die "apt-cache showsrc $want_pkg: no source package (is the deb-src entry updated? run apt-get update)"
  dest=$out/$pkg
  stamp=$dest/.stamp
  want="$pkg $ver rt $lib_id"
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    echo "build-instrumented: $pkg up to date ($ver): $dest"
    continue
  fi
  upstream=${ver#*:}
  upstream=${upstream%-*}
  dir=$out/src/$pkg-$upstream
  log=$out/log/$pkg
  if [ "$(id -u)" = 0 ]; then
    echo "build-instrumented: apt-get build-dep $pkg" >&2
    DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -q "$pkg=$ver" >"$log-build-dep.log" 2>&1 ||
      die "apt-get build-dep $pkg failed (see $log-build-dep.log)"
  fi
  # A fresh tree each time: a half-built one would keep objects compiled
  # with another runtime or compiler.
  rm -rf "$dir"
  echo "build-instrumented: apt-get source $pkg=$ver" >&2
  (cd "$out/src" && apt-get source -qq "$pkg=$ver") >"$log-source.log" 2>&1 ||
    die "apt-get source $pkg=$ver failed (see $log-source.log)"
  [ -d "$dir" ] || die "apt-get source $pkg did not unpack into $dir"
  echo "build-instrumented: building $pkg $ver with llcprobe-cc (log: $log-build.log)" >&2
  rm -f "$stamp"
  # -d: build dependencies are checked by build-dep above (or by the user).
  if ! (cd "$dir" && PATH=$shims:$PATH CC=$cc CXX=$cxx DEB_BUILD_OPTIONS="nocheck noautodbgsym nostrip parallel=$jobs" \
          dpkg-buildpackage -b -uc -us -d) >"$log-build.log" 2>&1; then
    tail -n 5 "$log-build.log" >&2
    die "building $pkg failed (see $log-build.log)"
  fi
  rm -rf "$dest"
  mkdir -p "$dest/bin" "$dest/lib"
  n=0
  # The staged install trees under debian/: executables and shared
  # libraries that carry the runtime.
  while IFS= read -r -d '' f; do
    is_instrumented "$f" || continue
    case "$f" in
      *.so|*.so.*) cp -P "$f" "$dest/lib/" ;;
      *) [ -x "$f" ] || continue; cp "$f" "$dest/bin/" ;;
    esac
    n=$((n + 1))
  done < <(find "$dir/debian" -path "$dir/debian/.debhelper" -prune -o -type f \
             \( -path '*/bin/*' -o -path '*/sbin/*' -o -name '*.so*' \) -print0)
  # The libraries' soname links, so that LD_LIBRARY_PATH finds them.
  while IFS= read -r -d '' l; do
    t=$(basename "$(readlink "$l")")
    [ -e "$dest/lib/$t" ] && ln -sf "$t" "$dest/lib/$(basename "$l")"
  done < <(find "$dir/debian" -type l -name '*.so.*' -print0)
  ((n)) || die "$pkg built, but no executable or library in $dir/debian carries libllcprobe-rt (does debian/rules ignore CC?)"
  rm -f "$dir"/../*.deb "$dir"/../*.ddeb "$dir"/../*.buildinfo "$dir"/../*.changes
  echo "$want" >"$stamp"
  echo "build-instrumented: $pkg: $n instrumented files in $dest: $(ls "$dest/bin" | tr '\n' ' ')"
done
