#!/usr/bin/env bash
# mrc --phases from the instrumented runtime (--sampler rt and --profile) on
# a program with two clear phases: 800 sweeps over 256 lines (16 KiB, cache
# resident), then 12 sweeps over 16384 lines (1 MiB, one load per line).
# The runtime's windows give the two phases (the same labels as the trace
# path on the same program's full trace), and the per-phase mixture is
# closer to the simulator's truth (exact LRU, simulated random replacement
# on that trace) than the pooled curve, for both models; windows do not
# change the reuse samples; profiles without windows are refused clearly.
. "$(dirname "$0")/../cli_lib.sh"
src=${LLCPROBE_SOURCE_DIR:?}
cc=$src/scripts/llcprobe-cc
truth=$(dirname "$bin")/tests/mrc/mrc_eval_truth
command -v clang >/dev/null || { echo "skip: no clang"; exit 77; }
[ -f "${LLCPROBE_RT_LIB:-}" ] || { echo "skip: libllcprobe-rt.a not built"; exit 77; }

cat >"$tmp/two.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    const long rounds_a = atol(argv[1]), big = atol(argv[2]), rounds_b = atol(argv[3]);
    volatile char *small = aligned_alloc(64, 256 * 64);
    volatile char *large = aligned_alloc(64, (size_t)big * 64);
    long sum = 0;
    for (long r = 0; r < rounds_a; r++)
        for (long i = 0; i < 256; i++)
            sum += small[i * 64];
    for (long r = 0; r < rounds_b; r++)
        for (long i = 0; i < big; i++)
            sum += large[i * 64];
    printf("%ld\n", sum);
    return 0;
}
C
"$cc" -O2 -o "$tmp/two" "$tmp/two.c" 2>"$tmp/cc.err" || { bad "llcprobe-cc: $(cat "$tmp/cc.err")"; exit 1; }
args=(800 16384 12)
lines=128,512,10000,12288,32768
sizes=8K,32K,640000,786432,2M # the same in bytes
common=(--phases --phase-window 20000 --rate 0.01 --sizes $sizes --gnuplot "$tmp/no-gnuplot")

# Truth: the full trace of the same program (trace mode), exact LRU and a
# simulated random-replacement cache.
LLCPROBE_RT_MODE=trace LLCPROBE_RT_OUTPUT=$tmp/two.trace "$tmp/two" "${args[@]}" >/dev/null ||
  bad "trace run"
"$truth" "$tmp/two.trace" 0.001 1 100000 20000r ${lines//,/ } >"$tmp/truth" 2>&1 || bad "truth: $(cat "$tmp/truth")"

"$bin" mrc --sampler rt "${common[@]}" -o "$tmp/rt" -- "$tmp/two" "${args[@]}" >"$tmp/out" 2>&1
check_rc "mrc --sampler rt --phases" 0 $?
check "summary: 21 windows of 20000 references" "grep -q '^phases: 21 windows of 20000 references' '$tmp/out'"
"$bin" mrc --trace "$tmp/two.trace" "${common[@]}" -o "$tmp/tr" >/dev/null 2>&1
check_rc "mrc --trace --phases (same program)" 0 $?
"$python" - "$tmp/rt.mrc.json" "$tmp/tr.mrc.json" "$tmp/truth" <<'PY' && ok "rt: two phases, the trace path's labels, per phase closer to the truth than pooled" || bad "rt phases"
import json, sys
d = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))
ph = d["phases"]
assert d["curve"] == "phase mixture" and ph["window_unit"] == "references" and ph["window"] == 20000, ph
labels = [w["phase"] for w in ph["per_window"]]
# Windows 0-9 are the small loop, 11-20 the walk (window 10 holds both).
assert len(set(labels[:10])) == 1 and len(set(labels[11:])) == 1 and labels[0] != labels[11] \
    and min(labels) >= 0, labels
assert labels == [w["phase"] for w in t["phases"]["per_window"]], (labels, t["phases"]["per_window"])
big = [p for p in ph["per_phase"] if p["windows"] >= 10]
assert len(big) == 2 and all(p["samples"] > 1000 and not p["pooled"] for p in big), ph["per_phase"]
rows = [l.split() for l in open(sys.argv[3]) if not l.startswith("#")]
lru = [float(r[2]) for r in rows]
rnd = [float(r[3]) for r in rows]
def mae(model, truth, which):
    pts = d[which][model]["points"]
    return sum(abs(p["miss_ratio"] - x) for p, x in zip(pts, truth)) / len(truth)
for m, truth, name in ((0, rnd, "statcache vs random"), (1, lru, "statstack vs LRU")):
    mix, pooled = mae(m, truth, "models"), mae(m, truth, "pooled_models")
    print(f"{name}: per phase {mix:.4f}, pooled {pooled:.4f}")
    assert mix < 0.03 and mix < pooled / 3, (name, mix, pooled)
PY
check "phases.csv: 3 phases and the mixture at 5 sizes" \
  "[ \$(wc -l <'$tmp/rt.phases.csv') = 21 ] && [ \$(grep -c '^mixture,21,401411,' '$tmp/rt.phases.csv') = 5 ]"

# A profile written by the program itself (window from LLCPROBE_RT_WINDOW,
# same seed): the same outputs as --sampler rt.
LLCPROBE_RT_OUTPUT=$tmp/two.profile LLCPROBE_RT_RATE=0.01 LLCPROBE_RT_WINDOW=20000 \
  "$tmp/two" "${args[@]}" >/dev/null || bad "profile run"
"$bin" mrc --profile "$tmp/two.profile" --phases --sizes $sizes --gnuplot "$tmp/no-gnuplot" \
  -o "$tmp/pr" >/dev/null 2>&1
check_rc "mrc --profile --phases" 0 $?
# The same samples; the distinct lines (the curves' exact cold end) may
# differ by a line or two between two runs, as the address layout moves an
# array across a line boundary (seen: 16,641 against 16,642 under the
# sanitizer build), so equal when they agree, else within 1e-4.
check "profile: the rt sampler's phases.csv" "\"\$python\" - '$tmp/pr' '$tmp/rt' <<'PY'
import csv, json, sys
pr, rt = sys.argv[1], sys.argv[2]
lp = json.load(open(pr + '.mrc.json')).get('distinct_lines')
lr = json.load(open(rt + '.mrc.json')).get('distinct_lines')
a = list(csv.reader(open(pr + '.phases.csv')))
b = list(csv.reader(open(rt + '.phases.csv')))
assert len(a) == len(b) and a[0] == b[0], (len(a), len(b))
if lp == lr:
    assert a == b
assert abs(lp - lr) <= 2, (lp, lr)
for x, y in zip(a[1:], b[1:]):
    assert x[:6] == y[:6], (x, y)
    assert all(abs(float(u) - float(v)) <= 1e-4 for u, v in zip(x[6:], y[6:])), (x, y)
PY"
# Windows leave the reuse samples alone: the same histogram without them.
LLCPROBE_RT_OUTPUT=$tmp/off.profile LLCPROBE_RT_RATE=0.01 LLCPROBE_RT_WINDOW=0 \
  "$tmp/two" "${args[@]}" >/dev/null || bad "run without windows"
check "the same samples with windows and without" \
  "[ \"\$(grep '^rdhist' '$tmp/off.profile')\" = \"\$(grep '^rdhist' '$tmp/two.profile')\" ] && grep -qx 'windows off' '$tmp/off.profile'"

. "$(dirname "$0")/mrc_expect.sh"
# A version 1 profile (the format before windows) still loads, and --phases
# on it says why it cannot.
sed -e '1s/ 2$/ 1/' -e '/^windows /,$d' "$tmp/off.profile" >"$tmp/v1.profile"
"$bin" mrc --profile "$tmp/v1.profile" --sizes $sizes >/dev/null 2>&1
check_rc "version 1 profile loads" 0 $?
expect 1 'recorded without windows (a version 1 profile)' --profile "$tmp/v1.profile" --phases
expect 1 'recorded without windows (LLCPROBE_RT_WINDOW=0)' --profile "$tmp/off.profile" --phases
expect 1 'windows of 20000 references were recorded, not 40000' --profile "$tmp/two.profile" \
  --phases --phase-window 40000
expect 1 'count references, not instructions' --profile "$tmp/two.profile" --phases \
  --phase-unit instructions
sed 's/ complete$/ truncated/' "$tmp/two.profile" >"$tmp/cut.profile"
expect 1 'windows are truncated' --profile "$tmp/cut.profile" --phases
expect 2 'trace, rt or qemu sampler' --phases --sampler pmu -- "$tmp/two" "${args[@]}"
exit $fail
