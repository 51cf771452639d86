#!/usr/bin/env bash
# cmake --install of the build tree (LLCPROBE_BUILD_DIR) into a fresh prefix,
# then: every file is where a user looks for it, the installed program runs,
# `man -M PREFIX/share/man llcprobe` renders the page, pkg-config finds the
# runtime and the headers, a program compiles against the installed headers,
# and llcprobe-cc links the installed runtime. Once more with DESTDIR.
. "$(dirname "$0")/../cli_lib.sh"
src=${LLCPROBE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${LLCPROBE_BUILD_DIR:-$(dirname "$bin")}
[ -f "$build/CMakeCache.txt" ] || { bad "no build tree at $build"; exit $fail; }

p=$tmp/prefix
cmake --install "$build" --prefix "$p" >"$tmp/install.log" 2>&1
check_rc "cmake --install --prefix" 0 $?

for f in bin/llcprobe bin/llcprobe-cc lib/libllcprobe-rt.a share/man/man1/llcprobe.1 \
         lib/pkgconfig/llcprobe.pc share/doc/llcprobe/README.md share/doc/llcprobe/METHODS.md; do
  check "installed $f" "[ -s '$p/$f' ]"
done
# install_manifest.txt (what an uninstall removes) lists every file, the .pc too.
(cd "$p" && find . -type f | sed "s|^\.|$p|" | sort) >"$tmp/files"
sort "$build/install_manifest.txt" >"$tmp/manifest"
check "install_manifest.txt lists every installed file ($(wc -l <"$tmp/files"))" "cmp -s '$tmp/files' '$tmp/manifest'"
check "binary and llcprobe-cc executable" "[ -x '$p/bin/llcprobe' ] && [ -x '$p/bin/llcprobe-cc' ]"
# Every public header, and nothing else, under include/llcprobe.
(cd "$src/include/llcprobe" && ls *.h) >"$tmp/h.src"
(cd "$p/include/llcprobe" 2>/dev/null && ls) >"$tmp/h.inst"
check "public headers installed ($(wc -l <"$tmp/h.src"))" "cmp -s '$tmp/h.src' '$tmp/h.inst'"

"$p/bin/llcprobe" --version >"$tmp/version" 2>&1
check_rc "installed llcprobe --version" 0 $?
check "installed version is the build's" "[ \"\$(cat '$tmp/version')\" = \"\$('$bin' --version 2>&1)\" ]"

# man finds the page by name under the prefix's man directory.
if command -v man >/dev/null; then
  MANPAGER=cat MANWIDTH=80 man -M "$p/share/man" llcprobe >"$tmp/man.txt" 2>"$tmp/man.err"
  check_rc "man -M PREFIX/share/man llcprobe" 0 $?
  check "man page rendered (NAME, SYNOPSIS)" "grep -q '^NAME' '$tmp/man.txt' && grep -q '^SYNOPSIS' '$tmp/man.txt'"
else
  echo "skip man: no man program here"
fi

# pkg-config: flags name the prefix; a program compiles against the headers.
pcflags=$(PKG_CONFIG_PATH="$p/lib/pkgconfig" pkg-config --cflags --static --libs llcprobe 2>"$tmp/pc.err")
check_rc "pkg-config llcprobe" 0 $?
check "pkg-config names the prefix ($pcflags)" "[[ '$pcflags' == *'-I$p/include'* && '$pcflags' == *'-L$p/lib'* && '$pcflags' == *-lllcprobe-rt* ]]"
check "pkg-config version is the project's" \
  "[ \"\$(PKG_CONFIG_PATH='$p/lib/pkgconfig' pkg-config --modversion llcprobe)\" = \"\$(sed -n 's/^project(llcprobe VERSION \([0-9.]*\).*/\1/p' '$src/CMakeLists.txt')\" ]"
printf '#include <llcprobe/fit.h>\n#include <llcprobe/statmodel.h>\n#include <llcprobe/phase.h>\nint main(void) { return 0; }\n' >"$tmp/use.c"
cc -std=c11 -fsyntax-only $(PKG_CONFIG_PATH="$p/lib/pkgconfig" pkg-config --cflags llcprobe) "$tmp/use.c" 2>"$tmp/cc.err"
check_rc "a program compiles against the installed headers" 0 $?
[ -s "$tmp/cc.err" ] && cat "$tmp/cc.err"

# llcprobe-cc from the installed tree links the installed runtime (bin/../lib).
if command -v clang >/dev/null; then
  printf 'int a[4096]; int main(void) { for (int i = 0; i < 4096; i++) a[i] = i; return a[7] - 7; }\n' >"$tmp/app.c"
  LLCPROBE_RT_LIB= "$p/bin/llcprobe-cc" -O1 -o "$tmp/app" "$tmp/app.c" 2>"$tmp/cc2.err"
  check_rc "installed llcprobe-cc builds a program" 0 $?
  LLCPROBE_RT_OUTPUT="$tmp/app.profile" "$tmp/app"
  check_rc "the instrumented program runs" 0 $?
  check "it wrote its reuse profile" "[ -s '$tmp/app.profile' ]"
else
  echo "skip llcprobe-cc: no clang here"
fi

# DESTDIR: files land under DESTDIR/PREFIX, and the .pc names PREFIX alone.
d=$tmp/destdir
DESTDIR=$d cmake --install "$build" --prefix /opt/llcprobe >"$tmp/install2.log" 2>&1
check_rc "DESTDIR=... cmake --install --prefix /opt/llcprobe" 0 $?
check "DESTDIR tree holds the binary and the man page" \
  "[ -x '$d/opt/llcprobe/bin/llcprobe' ] && [ -s '$d/opt/llcprobe/share/man/man1/llcprobe.1' ]"
check "DESTDIR .pc says prefix=/opt/llcprobe" "grep -qx 'prefix=/opt/llcprobe' '$d/opt/llcprobe/lib/pkgconfig/llcprobe.pc'"
exit $fail
