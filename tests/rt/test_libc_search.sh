#!/usr/bin/env bash
# libllcprobe-rt's wrappers of libc's searches, case-blind comparisons and
# duplicates (probe/rt/libc.c): each call's lines are fed to the sampler,
# one access per line, exactly (trace mode); results are those of libc.
# Each function runs alone on a buffer of 64000 bytes that starts 10 bytes
# into a line (1001 lines); its references are the run's minus those of a
# run that calls nothing.
. "$(dirname "$0")/../cli_lib.sh"
set -o pipefail
src=${LLCPROBE_SOURCE_DIR:?}
cc=$src/scripts/llcprobe-cc
command -v clang >/dev/null || { echo "skip: no clang"; exit 77; }
[ -f "${LLCPROBE_RT_LIB:-}" ] || { echo "skip: libllcprobe-rt.a not built"; exit 77; }

cat >"$tmp/prog.c" <<'C'
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
/* Through volatile pointers: clang may not expand the calls inline. */
static char *(*volatile v_strstr)(const char *, const char *) = strstr;
static void *(*volatile v_memmem)(const void *, size_t, const void *, size_t) = memmem;
static size_t (*volatile v_strspn)(const char *, const char *) = strspn;
static size_t (*volatile v_strcspn)(const char *, const char *) = strcspn;
static char *(*volatile v_strpbrk)(const char *, const char *) = strpbrk;
static int (*volatile v_strcasecmp)(const char *, const char *) = strcasecmp;
static int (*volatile v_strncasecmp)(const char *, const char *, size_t) = strncasecmp;
static char *(*volatile v_strchrnul)(const char *, int) = strchrnul;
static void *(*volatile v_memrchr)(const void *, int, size_t) = memrchr;
static void *(*volatile v_rawmemchr)(const void *, int) = rawmemchr;
static char *(*volatile v_strdup)(const char *) = strdup;
static char *(*volatile v_strndup)(const char *, size_t) = strndup;
static void *(*volatile v_memset)(void *, int, size_t) = memset;
int main(int argc, char **argv)
{
    const size_t n = 64 * 1000;
    char *a = (char *)aligned_alloc(64, n + 64) + 10, *b = (char *)aligned_alloc(64, n + 64) + 10;
    char *set = aligned_alloc(64, 64);
    v_memset(a, 'x', n - 1);
    v_memset(b, 'X', n - 1);
    a[n - 1] = b[n - 1] = '\0';
    set[0] = 'y', set[1] = 'z', set[2] = '\0'; /* one line */
    long r = -1;
    switch (argc > 1 ? atoi(argv[1]) : 0) {
    case 1: r = v_strstr(a, set) == NULL; break;
    case 2: r = v_memmem(a, n - 1, set, 2) == NULL; break;
    case 3: r = (long)v_strspn(a, "x"); break;
    case 4: r = (long)v_strcspn(a, set); break;
    case 5: r = v_strpbrk(a, set) == NULL; break;
    case 6: r = v_strcasecmp(a, b); break;
    case 7: r = v_strncasecmp(a, b, n); break;
    case 8: r = v_strchrnul(a, 'y') - a; break;
    case 9: r = v_memrchr(a, 'y', n - 1) == NULL; break;
    case 10: r = (char *)v_rawmemchr(a, '\0') - a; break;
    case 11: r = (long)strlen(v_strdup(a)); break;
    case 12: r = (long)strlen(v_strndup(a, n)); break;
    }
    printf("%ld\n", r);
    return 0;
}
C
"$cc" -O2 -o "$tmp/prog" "$tmp/prog.c" 2>"$tmp/cc.err" || { bad "llcprobe-cc: $(cat "$tmp/cc.err")"; exit 1; }
clang -O2 -o "$tmp/native" "$tmp/prog.c" || exit 1

# counts K: "loads stores" of a trace of `prog K`.
counts() {
  LLCPROBE_RT_OUTPUT=$tmp/t$1.trace LLCPROBE_RT_MODE=trace "$tmp/prog" "$1" >/dev/null || bad "trace run $1"
  "$bin" trace --show "$tmp/t$1.trace" >"$tmp/show$1" 2>&1 || bad "trace $1 unreadable: $(cat "$tmp/show$1")"
  awk '/^loads:/ { l = $2 } /^stores:/ { s = $2 } END { print l + 0, s + 0 }' "$tmp/show$1"
}
read -r l0 s0 < <(counts 0)
# name K LOADS STORES (strdup's copy lands wherever malloc puts it: 1000 to
# 1002 lines, and the program's strlen of it reads them too).
expect() {
  local name=$1 k=$2 el=$3 es=$4 l s
  [ "$("$tmp/prog" "$k")" = "$("$tmp/native" "$k")" ] || bad "$name: result differs from libc's"
  read -r l s < <(counts "$k")
  local dl=$((l - l0)) ds=$((s - s0))
  check "$name: loads fed ($dl, expected $el + at most 8 of the program's own)" \
    "[ $dl -ge $el ] && [ $dl -le $((el + 8)) ]"
  check "$name: stores fed ($ds, expected $es + at most 4)" "[ $ds -ge $es ] && [ $ds -le $((es + 4)) ]"
}
expect strstr 1 1002 0        # haystack 1001 lines, needle 1
expect memmem 2 1002 0
expect strspn 3 1002 0        # s 1001, the set (a literal) 1
expect strcspn 4 1002 0
expect strpbrk 5 1002 0
expect strcasecmp 6 2002 0    # both strings whole
expect strncasecmp 7 2002 0
expect strchrnul 8 1001 0
expect memrchr 9 1001 0
expect rawmemchr 10 1001 0
expect strdup 11 2001 1000    # copy read 1001, written 1000-1002; strlen of it 1000-1002
expect strndup 12 2001 1000
exit $fail
