#!/usr/bin/env bash
# libllcprobe-rt's realloc (probe/rt/libc.c): a block that moves is
# copied inside libc, min(old usable size, new size) bytes, fed as one
# load of the old block and one store of the new per line; a block that
# stays, a block glibc mapped by itself (moved by mremap, no copy) and
# realloc(NULL, n) feed nothing. And llcprobe-cc exports every function
# libc.c defines from the executable, so that shared libraries' calls reach
# the program's wrappers (else they bind to the library's own idle copy).
. "$(dirname "$0")/../cli_lib.sh"
set -o pipefail
src=${LLCPROBE_SOURCE_DIR:?}
cc=$src/scripts/llcprobe-cc
command -v clang >/dev/null || { echo "skip: no clang"; exit 77; }
command -v gawk >/dev/null || { echo "skip: no gawk (strtonum)"; exit 77; }
[ -f "${LLCPROBE_RT_LIB:-}" ] || { echo "skip: libllcprobe-rt.a not built"; exit 77; }

cat >"$tmp/prog.c" <<'C'
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void *(*volatile v_realloc)(void *, size_t) = realloc;
/* Through a volatile pointer: clang may not reason about the block (the
 * size word before it is outside it). */
static void *(*volatile v_malloc)(size_t) = malloc;
static size_t lines(const void *p, size_t n)
{
    const uintptr_t a = (uintptr_t)p;
    return n ? ((a + n - 1) >> 6) - (a >> 6) + 1 : 0;
}
/* Prints: moved, the lines the copy reads and writes (0 0 if none), and
 * the old block, the new one and the bytes copied. */
int main(int argc, char **argv)
{
    const int k = argc > 1 ? atoi(argv[1]) : 0;
    char *p = malloc(64000);
    char *after = malloc(64000); /* from the top, right after p: p cannot grow in place */
    if (after < p || after > p + 64100) {
        printf("layout\n");
        return 1;
    }
    const size_t old = malloc_usable_size(p);
    char *q = p, *m;
    size_t n = 0;
    switch (k) {
    case 1: q = v_realloc(p, n = 128000); break;
    case 2: q = v_realloc(p, n = 1000); break; /* shrinks in place */
    case 3:
        m = v_malloc(64 << 20); /* above any mmap threshold (at most 32 MiB): mapped by itself */
        if (!(((size_t *)m)[-1] & 2)) {
            printf("not mapped\n");
            return 1;
        }
        p = m;
        q = v_realloc(m, 128 << 20);
        break;
    case 4: q = v_realloc(NULL, 5000); p = NULL; break;
    }
    const int moved = k == 1 && q != p;
    const size_t c = old < n ? old : n;
    printf("%d %zu %zu %lx %lx %zu\n", moved, moved ? lines(p, c) : 0, moved ? lines(q, c) : 0,
           (unsigned long)(uintptr_t)p, (unsigned long)(uintptr_t)q, moved ? c : 0);
    return 0;
}
C
"$cc" -O2 -o "$tmp/prog" "$tmp/prog.c" 2>"$tmp/cc.err" || { bad "llcprobe-cc: $(cat "$tmp/cc.err")"; exit 1; }

# counts K: "loads stores" of a trace of `prog K`; the program's line in out.K.
counts() {
  LLCPROBE_RT_OUTPUT=$tmp/t$1.trace LLCPROBE_RT_MODE=trace "$tmp/prog" "$1" >"$tmp/out.$1" ||
    { bad "trace run $1: $(cat "$tmp/out.$1")"; echo 0 0; return; }
  "$bin" trace --show "$tmp/t$1.trace" >"$tmp/show$1" 2>&1 || bad "trace $1 unreadable: $(cat "$tmp/show$1")"
  awk '/^loads:/ { l = $2 } /^stores:/ { s = $2 } END { print l + 0, s + 0 }' "$tmp/show$1"
}
read -r l0 s0 < <(counts 0)
for k in 1 2 3 4; do
  read -r l s < <(counts "$k")
  read -r moved el es from to bytes <"$tmp/out.$k"
  dl=$((l - l0)) ds=$((s - s0))
  case $k in
    1) check "realloc that moves: moved" "[ '$moved' = 1 ]"
       check "realloc that moves: 64008 bytes ($el lines) read ($dl, at most 4 more)" \
         "[ $el -ge 1001 ] && [ $dl -ge $el ] && [ $dl -le $((el + 4)) ]"
       check "realloc that moves: $es lines written ($ds, at most 4 more)" \
         "[ $es -ge 1001 ] && [ $ds -ge $es ] && [ $ds -le $((es + 4)) ]"
       # The accesses' sizes: the bytes of each line the copy covers.
       "$bin" trace --show "$tmp/t1.trace" --dump 1000000 2>/dev/null | gawk -v f="$from" -v t="$to" -v c="$bytes" '
         BEGIN { f = strtonum("0x" f); t = strtonum("0x" t) }
         /^ [LS] / { split($2, x, ","); a = strtonum("0x" x[1])
           if ($1 == "L" && a >= f && a < f + c) l += x[2]; if ($1 == "S" && a >= t && a < t + c) s += x[2] }
         END { print l + 0, s + 0 }' >"$tmp/sizes"
       read -r lb sb <"$tmp/sizes"
       check "realloc that moves: the loads' sizes sum to the $bytes bytes copied ($lb)" "[ '$lb' = '$bytes' ]"
       check "realloc that moves: the stores' sizes sum to them too ($sb)" "[ '$sb' = '$bytes' ]" ;;
    *) what=([2]="in place" [3]="mapped (mremap)" [4]="of NULL")
       check "realloc ${what[$k]}: nothing fed (loads +$dl, stores +$ds)" "[ $dl -le 4 ] && [ $ds -le 4 ]" ;;
  esac
done

# Exports: the functions libc.c defines are in the executable's dynamic
# symbol table (the archive's libc.c.o, as nm lists them).
ar p "$LLCPROBE_RT_LIB" libc.c.o >"$tmp/libc.o" || { bad "no libc.c.o in $LLCPROBE_RT_LIB"; exit 1; }
nm "$tmp/libc.o" | awk '$2 == "T" || $2 == "W" { print $3 }' | sort >"$tmp/defined"
nm -D --defined-only "$tmp/prog" | awk '{ print $3 }' | sort >"$tmp/exported"
missing=$(comm -23 "$tmp/defined" "$tmp/exported" | tr '\n' ' ')
check "nm lists libc.c's functions ($(wc -l <"$tmp/defined"), memcpy and realloc among them)" \
  "grep -qx memcpy '$tmp/defined' && grep -qx realloc '$tmp/defined' && [ $(wc -l <"$tmp/defined") -ge 30 ]"
check "every one is exported by the executable (missing: ${missing:-none})" "[ -z '$missing' ]"
exit $fail
