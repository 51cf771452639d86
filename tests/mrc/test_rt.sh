#!/usr/bin/env bash
# libllcprobe-rt on a small C program built here with scripts/llcprobe-cc:
# the histogram at rate 1 matches the one sampled from the same run's full
# trace (trace mode), SIGUSR1 writes a profile before exit, and `mrc -- PROG`
# picks the runtime by itself.
. "$(dirname "$0")/../cli_lib.sh"
set -o pipefail
src=${LLCPROBE_SOURCE_DIR:?}
cc=$src/scripts/llcprobe-cc
command -v clang >/dev/null || { echo "skip: no clang"; exit 77; }
[ -f "${LLCPROBE_RT_LIB:-}" ] || { echo "skip: libllcprobe-rt.a not built"; exit 77; }

cat >"$tmp/prog.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
/* Sweeps over n ints, `rounds` times; with "usr1", signals itself halfway
 * and reports whether the profile appeared before exit. */
int main(int argc, char **argv)
{
    const long n = atol(argv[1]), rounds = atol(argv[2]);
    /* Line-aligned, so that every run (addresses move with ASLR) touches
     * the same number of lines. */
    volatile int *a = aligned_alloc(64, ((size_t)n * sizeof(int) + 63) / 64 * 64);
    for (long i = 0; i < n; i++)
        a[i] = 0;
    long sum = 0;
    for (long r = 0; r < rounds; r++) {
        if (argc > 3 && r == rounds / 2)
            raise(SIGUSR1);
        for (long i = 0; i < n; i++)
            a[i] += (int)(i + r);
        for (long i = 0; i < n; i += 7)
            sum += a[i];
    }
    if (argc > 3)
        printf("profile before exit: %s\n", access(getenv("LLCPROBE_RT_OUTPUT"), F_OK) == 0 ? "yes" : "no");
    printf("%ld\n", sum);
    return 0;
}
C
"$cc" -O1 -o "$tmp/prog" "$tmp/prog.c" 2>"$tmp/cc.err" || { bad "llcprobe-cc: $(cat "$tmp/cc.err")"; exit 1; }
clang -O1 -o "$tmp/native" "$tmp/prog.c" || exit 1
[ "$("$tmp/prog" 3000 20)" = "$("$tmp/native" 3000 20)" ] || bad "instrumented output differs"

# Idle without LLCPROBE_RT_OUTPUT: nothing written anywhere.
(cd "$tmp" && ./prog 100 2 >/dev/null) && [ -z "$(find "$tmp" -newer "$tmp/prog" -name '*.profile')" ] \
  || bad "idle runtime wrote something"

# Rate 1: every reference sampled; the trace of the same run, sampled at
# rate 1, must give the same curve (both exact).
LLCPROBE_RT_OUTPUT=$tmp/p1.profile LLCPROBE_RT_RATE=1 "$tmp/prog" 3000 20 >/dev/null || bad "rt run"
LLCPROBE_RT_OUTPUT=$tmp/p1.trace LLCPROBE_RT_MODE=trace "$tmp/prog" 3000 20 >/dev/null || bad "trace run"
"$bin" trace --show "$tmp/p1.trace" --verify >"$tmp/show" 2>&1 || bad "trace unreadable: $(cat "$tmp/show")"
grep -q 'recorder: llcprobe-rt' "$tmp/show" || bad "recorder not llcprobe-rt"
refs_trace=$(awk '/^loads:|^stores:/ { s += $2 } END { print s }' "$tmp/show")
refs_prof=$(awk '$1 == "refs" { print $2 }' "$tmp/p1.profile")
[ "$refs_trace" = "$refs_prof" ] || bad "references: trace $refs_trace, profile $refs_prof"
# 20 rounds x (3000 stores + 3000 loads + 429 loads) + a few: at least 128k.
[ "${refs_prof:-0}" -ge 128000 ] || bad "too few references: $refs_prof"
sizes=1K,8K,11K,12K,13K,16K,64K
"$bin" mrc --profile "$tmp/p1.profile" --sizes $sizes -o "$tmp/a" >/dev/null 2>&1 || bad "mrc profile"
"$bin" mrc --trace "$tmp/p1.trace" --rate 1 --sizes $sizes -o "$tmp/b" >/dev/null 2>&1 || bad "mrc trace"
paste -d, "$tmp/a.mrc.csv" "$tmp/b.mrc.csv" | awk -F, -v n=10 '
  NR > 1 { for (c = 3; c <= n; c++) if ($c != "" && ($c - $(c + n)) ^ 2 > 1e-6) { print "col " c ": " $c " vs " $(c + n); bad = 1 } }
  END { exit bad }' || bad "rt and trace curves differ"

# SIGUSR1: a profile is on disk before the program ends.
out=$(LLCPROBE_RT_OUTPUT=$tmp/u.profile LLCPROBE_RT_RATE=0.01 "$tmp/prog" 3000 20 usr1)
grep -q 'profile before exit: yes' <<<"$out" || bad "SIGUSR1 wrote no profile: $out"

# Bad settings: one line on stderr, the program still runs.
LLCPROBE_RT_OUTPUT=$tmp/x.profile LLCPROBE_RT_RATE=7 "$tmp/prog" 10 1 >/dev/null 2>"$tmp/err" || bad "bad rate killed the program"
grep -q 'LLCPROBE_RT_RATE' "$tmp/err" && [ ! -e "$tmp/x.profile" ] || bad "bad rate: $(cat "$tmp/err")"

# mrc -- PROGRAM: auto picks the runtime.
"$bin" mrc --rate 0.01 --sizes 4K,64K -- "$tmp/prog" 3000 20 >"$tmp/out" 2>&1 || bad "mrc -- prog: $(cat "$tmp/out")"
grep -q 'mrc: rt from' "$tmp/out" || bad "auto did not pick rt: $(cat "$tmp/out")"

# Time slots (docs/METHODS.md §7.5) on a two-phase program: 60000 references cycling
# over 2000 lines, then 60000 over 100 lines. With 2 slots, LRU at 1000
# lines misses everything in slot 0 and nearly nothing in slot 1; the
# slots' mean is their average; the same samples pooled give one curve.
cat >"$tmp/phases.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
    volatile char *a = aligned_alloc(64, 2000 * 64);
    long sum = 0;
    for (int r = 0; r < 30; r++)
        for (int i = 0; i < 2000; i++)
            sum += a[i * 64];
    for (int r = 0; r < 600; r++)
        for (int i = 0; i < 100; i++)
            sum += a[i * 64];
    printf("%ld\n", sum);
    return 0;
}
C
"$cc" -O2 -o "$tmp/phases" "$tmp/phases.c" || exit 1
LLCPROBE_RT_MODE=trace LLCPROBE_RT_OUTPUT=$tmp/phases.trace "$tmp/phases" >/dev/null ||
  bad "phases program failed"
"$bin" mrc --trace "$tmp/phases.trace" --rate 0.05 --time-slots 2 --model statstack \
  --sizes 64000 -o "$tmp/ph" >"$tmp/ph.out" 2>&1 || bad "mrc --time-slots: $(cat "$tmp/ph.out")"
grep -q '^time slots: 2 of 60000 references, 2 with samples' "$tmp/ph.out" ||
  bad "slot summary: $(cat "$tmp/ph.out")"
awk -F, 'NR > 1 { v[$1] = $6; n[$1] = $3 }
  END { exit !(v[0] > 0.9 && v[1] < 0.05 && (v["mean"] - (v[0] + v[1]) / 2) ^ 2 < 1e-12 &&
               n["mean"] == n[0] + n[1] && n[0] > 2500 && n[1] > 2500) }' "$tmp/ph.slots.csv" ||
  bad "slot curves wrong: $(cat "$tmp/ph.slots.csv")"
grep -q '"time_slots"' "$tmp/ph.mrc.json" || bad "JSON lacks time_slots"
# The pooled curve uses the same samples as the slots.
pooled=$(grep -o '[0-9]* samples' "$tmp/ph.out" | head -1 | cut -d' ' -f1)
awk -F, -v p="$pooled" '$1 == "mean" { exit !($3 == p) }' "$tmp/ph.slots.csv" ||
  bad "slots hold other samples than the pooled run ($pooled)"
# Slots need the trace sampler.
"$bin" mrc --profile /nonexistent --time-slots 4 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'time-slots needs the trace sampler' "$tmp/err" ||
  bad "--time-slots with --profile: $(cat "$tmp/err")"
"$bin" mrc --time-slots 4 -- "$tmp/phases" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q 'linked with libllcprobe-rt' "$tmp/err" ||
  bad "--time-slots with an rt program: $(cat "$tmp/err")"
[ "$fail" = 0 ] && echo "mrc rt: ok"
exit $fail
