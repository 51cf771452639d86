#!/usr/bin/env bash
# libllcprobe-rt's libc wrappers (probe/rt/libc.c): the lines memset,
# memcpy, strlen, strcmp and memcmp touch are fed to the sampler, one
# access per line, each call's ranges exactly (trace mode, rate 1); results
# are those of libc; a shared library built with llcprobe-cc (its own copy
# of the runtime) adds its references to the program's one profile.
. "$(dirname "$0")/../cli_lib.sh"
set -o pipefail
src=${LLCPROBE_SOURCE_DIR:?}
cc=$src/scripts/llcprobe-cc
command -v clang >/dev/null || { echo "skip: no clang"; exit 77; }
[ -f "${LLCPROBE_RT_LIB:-}" ] || { echo "skip: libllcprobe-rt.a not built"; exit 77; }

cat >"$tmp/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void lib_touch(char *p, size_t n);
/* Through volatile pointers: clang may not expand the calls inline. */
static void *(*volatile set)(void *, int, size_t) = memset;
static void *(*volatile cpy)(void *, const void *, size_t) = memcpy;
static size_t (*volatile len)(const char *) = strlen;
static int (*volatile cmp)(const char *, const char *) = strcmp;
static int (*volatile mcmp)(const void *, const void *, size_t) = memcmp;
int main(int argc, char **argv)
{
    const size_t n = 64 * 1000;
    /* Each buffer starts 10 bytes into a line: 1001 lines each. */
    char *a = (char *)aligned_alloc(64, n + 64) + 10, *b = (char *)aligned_alloc(64, n + 64) + 10;
    set(a, 'x', n);                /* stores: 1001 lines */
    cpy(b, a, n);                  /* loads 1001 + stores 1001 */
    a[n - 1] = '\0';
    b[n - 1] = '\0';
    size_t l = len(a);             /* loads: 1001 */
    b[5000] = 'y';
    int c = cmp(a, b);             /* loads: bytes 0..5000 of each, 79 lines each */
    int m = mcmp(a, b, 100);       /* loads: 2 lines each */
    if (argc > 1)
        lib_touch(a, n);
    printf("%zu %d %d\n", l, c < 0 ? -1 : c > 0, m);
    return 0;
}
C
cat >"$tmp/lib.c" <<'C'
#include <string.h>
static void *(*volatile set)(void *, int, size_t) = memset;
void lib_touch(char *p, size_t n) { set(p, 'z', n); }
C
"$cc" -O2 -fPIC -shared -o "$tmp/libtouch.so" "$tmp/lib.c" 2>"$tmp/cc.err" || { bad "llcprobe-cc -shared: $(cat "$tmp/cc.err")"; exit 1; }
"$cc" -O2 -o "$tmp/prog" "$tmp/prog.c" -L"$tmp" -ltouch -Wl,-rpath,"$tmp" 2>"$tmp/cc.err" ||
  { bad "llcprobe-cc: $(cat "$tmp/cc.err")"; exit 1; }
clang -O2 -o "$tmp/native" "$tmp/prog.c" -L"$tmp" -ltouch -Wl,-rpath,"$tmp" || exit 1
check "results as libc's" '[ "$("$tmp/prog")" = "$("$tmp/native")" ] && [ "$("$tmp/prog")" = "63999 -1 0" ]'

# The trace's records with an address inside a or b, by kind.
LLCPROBE_RT_OUTPUT=$tmp/t.trace LLCPROBE_RT_MODE=trace "$tmp/prog" >/dev/null || bad "trace run"
"$bin" trace --show "$tmp/t.trace" --verify >"$tmp/show" 2>&1 || bad "trace unreadable: $(cat "$tmp/show")"
loads=$(awk '/^loads:/ { print $2 }' "$tmp/show")
stores=$(awk '/^stores:/ { print $2 }' "$tmp/show")
# At least the wrappers' lines (the program's own few accesses add some).
check "memset+memcpy stores fed ($stores >= 2002)" '[ "${stores:-0}" -ge 2002 ] && [ "$stores" -lt 2100 ]'
check "memcpy+strlen+strcmp+memcmp loads fed ($loads >= 2164)" \
  '[ "${loads:-0}" -ge 2164 ] && [ "$loads" -lt 2300 ]'

# Rate 1 profile: every line fed is a reference; the library's memset adds
# its 1001 lines to the program's profile (one profile, not two).
LLCPROBE_RT_OUTPUT=$tmp/p.profile LLCPROBE_RT_RATE=1 "$tmp/prog" >/dev/null || bad "rt run"
LLCPROBE_RT_OUTPUT=$tmp/q.profile LLCPROBE_RT_RATE=1 "$tmp/prog" lib >/dev/null || bad "rt run with lib"
r1=$(awk '$1 == "refs" { print $2 }' "$tmp/p.profile")
r2=$(awk '$1 == "refs" { print $2 }' "$tmp/q.profile")
check "profile refs = trace refs ($r1)" '[ "$r1" = $((loads + stores)) ]'
check "library's references in the program's profile ($r2 - $r1 >= 1001)" \
  '[ $((r2 - r1)) -ge 1001 ] && [ $((r2 - r1)) -lt 1020 ]'
# Idle: no output, and a runtime never configured costs no per-line work.
(cd "$tmp" && ./prog lib >/dev/null) && [ -z "$(find "$tmp" -newer "$tmp/q.profile" -name '*.profile')" ] ||
  bad "idle runtime wrote something"
# LLCPROBE_RT_LIBC=0: the wrappers feed nothing (the program's own few
# references remain).
LLCPROBE_RT_OUTPUT=$tmp/n.profile LLCPROBE_RT_RATE=1 LLCPROBE_RT_LIBC=0 "$tmp/prog" >/dev/null || bad "rt run, libc off"
r0=$(awk '$1 == "refs" { print $2 }' "$tmp/n.profile")
check "LLCPROBE_RT_LIBC=0 feeds nothing ($r0 < 100)" '[ "${r0:-999}" -lt 100 ]'

exit $fail
