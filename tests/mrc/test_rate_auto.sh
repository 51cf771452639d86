#!/usr/bin/env bash
# Rate by sample count (mrc without --rate): a trace is sampled at
# --samples / references, the runtime halves its rate as samples pile up
# (LLCPROBE_RT_SAMPLES); both print a band. Exact cold misses: the curve's
# large-cache end is distinct lines / references.
. "$(dirname "$0")/../cli_lib.sh"
set -o pipefail
src=${LLCPROBE_SOURCE_DIR:?}
cc=$src/scripts/llcprobe-cc
command -v clang >/dev/null || { echo "skip: no clang"; exit 77; }
[ -f "${LLCPROBE_RT_LIB:-}" ] || { echo "skip: libllcprobe-rt.a not built"; exit 77; }

# 40 sweeps over 3000 lines, then one pass over 50000 new lines:
# 170000 references, 53000 distinct lines.
cat >"$tmp/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
    volatile char *a = aligned_alloc(64, 53000 * 64);
    long sum = 0;
    for (int r = 0; r < 40; r++)
        for (int i = 0; i < 3000; i++)
            sum += a[i * 64];
    for (int i = 3000; i < 53000; i++)
        sum += a[i * 64];
    printf("%ld\n", sum);
    return 0;
}
C
"$cc" -O2 -o "$tmp/prog" "$tmp/prog.c" || exit 1
LLCPROBE_RT_MODE=trace LLCPROBE_RT_OUTPUT=$tmp/p.trace "$tmp/prog" >/dev/null || bad "trace run"

# Trace: the rate is samples / references, the samples about that many.
"$bin" mrc --trace "$tmp/p.trace" --samples 5000 --sizes 64K,1G >"$tmp/out" 2>&1 || bad "mrc --trace: $(cat "$tmp/out")"
refs=$(sed -n 's/^mrc: trace from .*: \([0-9]*\) references.*/\1/p' "$tmp/out")
n=$(sed -n 's/.* references, \([0-9]*\) samples.*/\1/p' "$tmp/out")
check "trace: rate chosen ($(grep -o 'rate [0-9.e-]* chosen' "$tmp/out"))" \
  "grep -q 'mrc: rate .* chosen for about 5000 samples of $refs references' '$tmp/out'"
check "trace: about 5000 samples ($n)" '[ "${n:-0}" -gt 4700 ] && [ "$n" -lt 5300 ]'
check "trace: band printed" "grep -q '^band statcache (5-95%' '$tmp/out'"
check "trace: exact cold misses" "grep -q 'cold misses exact: 530[0-9][0-9] distinct lines' '$tmp/out'"

# Runtime: the adaptive rate ends at 2^-k with between N and 2N samples.
"$bin" mrc --samples 3000 --sizes 64K,1G -o "$tmp/rt" -- "$tmp/prog" >"$tmp/out" 2>&1 || bad "mrc -- prog: $(cat "$tmp/out")"
n=$(sed -n 's/^mrc: rt from .* references, \([0-9]*\) samples.*/\1/p' "$tmp/out")
rate=$(sed -n 's/^mrc: rt from .*, rate \([0-9.e-]*\), seed.*/\1/p' "$tmp/out")
check "rt: $n samples in [3000, 6000] at rate $rate" \
  '[ "${n:-0}" -ge 2900 ] && [ "$n" -le 6000 ] && awk -v r="$rate" "BEGIN { l = log(r) / log(2); exit !(r < 1 && l == int(l)) }"'
check "rt: band printed" "grep -q '^band statstack (5-95%' '$tmp/out'"
# At 1 GiB only cold misses are left: exactly lines / references.
awk -F, -v r="${refs:-0}" 'NR == 3 { e = 53000 / r; exit !(r > 0 && ($3 - e) ^ 2 < 1e-4 && ($7 - e) ^ 2 < 1e-4) }' \
  "$tmp/rt.mrc.csv" && ok "rt: large-cache end = distinct lines / references" ||
  bad "rt: large-cache end: $(cat "$tmp/rt.mrc.csv")"
# Target bounds.
"$bin" mrc --samples 5 --trace "$tmp/p.trace" >/dev/null 2>&1
check_rc "--samples 5 refused" 2 $?
exit $fail
