#!/usr/bin/env bash
# Accuracy of llcprobe's miss-ratio curves (issue 5).
#  1. Against ground truth on the same reference streams: exact fully
#     associative LRU (stack distances) and a simulated fully associative
#     random-replacement cache, vs StatStack and StatCache from samples at
#     rate 1e-4. (llc_sim caps associativity at 64 ways, so the fully
#     associative references are computed by tests/mrc/eval_truth.c.)
#     Each stream is sampled with EVAL_SEEDS (default 5 seeds) and the MAE is
#     the mean over seeds and sizes: one seed's figure moves by +-0.02 on the
#     short streams. Both models also in the time-slot mode of docs/METHODS.md §7.5
#     (slots of EVAL_SLOT_REFS = 200000 references, the StatCache paper's) and per
#     phase (docs/METHODS.md §9, `mrc --phases`: windows of EVAL_PHASE_WINDOW, default
#     mrc's, classified by ScarPhase; the phases' reference-weighted mixture).
#     Per stream also the sampling-noise floor: the mean over sizes of the
#     binomial standard error sqrt(p (1 - p) / N_s) of a miss ratio p
#     estimated from N_s samples.
#  2. Against valgrind cachegrind's LL data miss ratio (set-associative LRU
#     behind its D1) at several LL sizes, vs StatStack with the associativity
#     correction for the same ways, from a lackey trace of the same run.
# Streams: real programs' traces (libllcprobe-rt trace mode, and lackey).
# The headline covers the issue's three streams (walk+qsort 64 KiB and
# 1 MiB, xz -1 under lackey) in the recommended mode, `mrc --phases` with
# its default window (per phase; `_pooled`: one histogram, `_slots`: time
# slots); bzip2 and xz rebuilt from Debian sources by
# scripts/build-workloads.sh are added to the table when they are built
# (EVAL_WORKLOADS=0: do not try to build them).
# Also the instrumented runtime's own per-phase curves (mrc --sampler rt
# --phases) on the two walk+qsort programs (the _rt_phases_ lines).
#  3. Real programs against cachegrind's LL, with the qemu sampler and the
#     runtime: scripts/eval-mrc-real.sh, run last (its options pass through;
#     its headline lines come last, after parts 1 and 2's).
# Usage: scripts/eval-mrc.sh [--quick] [--real-only] [--no-suite]
#            [--program NAME=CMD]... [--rt-program NAME=CMD]...
#            [--samplers LIST] [BUILD_DIR]
#   --quick, --real-only: only part 3 (--quick: its small suite, for ctest);
#   the other options are eval-mrc-real.sh's.
# Last lines: mrc_mae_statcache_vs_random, mrc_mae_statstack_vs_lru (per
#             phase; before this change they were the pooled figures, now
#             the _pooled lines), mrc_mae_vs_cachegrind (pooled StatStack),
#             then part 3's, mrc_rel_err_pct_real last.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
real_only=0
. "$root/scripts/eval-mrc-opts.sh"
while (($#)); do
  real_opt "$@" && { shift "$real_shift"; continue; }
  case "$1" in
    --real-only) real_only=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "eval-mrc: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
build=$(cd "${1:-$root/build}" && pwd)
if ((real_only || quick)); then
  exec "$root/scripts/eval-mrc-real.sh" "${real_args[@]}" "$build"
fi
bin=$build/llcprobe
truth=$build/tests/mrc/mrc_eval_truth
lib=$build/lib/libllcprobe-rt.a
rate=${EVAL_RATE:-1e-4}
seeds=${EVAL_SEEDS:-1,2,3,4,5}
slot_refs=${EVAL_SLOT_REFS:-200000}
# 0: mrc --phases' default window; a number with suffix i or r forces the
# unit (instructions, references), as mrc --phase-unit.
phase_window=${EVAL_PHASE_WINDOW:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# 16 sizes, 2 per octave, 1 KiB .. 256 KiB lines-wise (16 .. 4096 lines) and
# up to 4 MiB: the range the streams below exercise.
sizes=$(awk 'BEGIN { for (k = 0; k <= 16; k++) printf "%d ", int(16 * 2 ^ (k / 2) + 0.5) }')

cat >"$tmp/walk.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
/* Random cycle over n entries, then a sort: two different reuse patterns. */
static int cmp(const void *a, const void *b) { return (*(const unsigned *)a > *(const unsigned *)b) - (*(const unsigned *)a < *(const unsigned *)b); }
int main(int argc, char **argv)
{
    const size_t n = strtoul(argv[1], 0, 0);
    const long steps = strtol(argv[2], 0, 0);
    unsigned *next = malloc(n * sizeof *next), *perm = malloc(n * sizeof *perm);
    for (size_t i = 0; i < n; i++) perm[i] = (unsigned)i;
    unsigned long long x = 88172645463325252ull;
    for (size_t i = n - 1; i > 0; i--) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; size_t j = x % (i + 1); unsigned t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
    for (size_t i = 0; i < n; i++) next[perm[i]] = perm[(i + 1) % n];
    unsigned p = 0; unsigned long long sum = 0;
    for (long k = 0; k < steps; k++) { p = next[p]; sum += p; }
    qsort(perm, n, sizeof *perm, cmp);
    printf("%llu %u\n", sum, perm[n / 2]);
    return 0;
}
C
LLCPROBE_RT_LIB=$lib "$root/scripts/llcprobe-cc" -O2 -o "$tmp/walk" "$tmp/walk.c"
names=() traces=() headline=()
echo "== streams"
LLCPROBE_RT_MODE=trace LLCPROBE_RT_OUTPUT=$tmp/walk16k.trace "$tmp/walk" 16384 3000000 >/dev/null
names+=("walk+qsort 64KiB (rt trace)"); traces+=("$tmp/walk16k.trace"); headline+=(1)
LLCPROBE_RT_MODE=trace LLCPROBE_RT_OUTPUT=$tmp/walk256k.trace "$tmp/walk" 262144 4000000 >/dev/null
names+=("walk+qsort 1MiB (rt trace)"); traces+=("$tmp/walk256k.trace"); headline+=(1)
head -c 40000 "$bin" >"$tmp/input"
"$bin" trace -q -o "$tmp/xz.trace" -- xz -1 -c -k "$tmp/input" >/dev/null
names+=("xz -1 on 40 KB (lackey)"); traces+=("$tmp/xz.trace"); headline+=(1)
wl=$build/workloads/bin
if [ "${EVAL_WORKLOADS:-1}" != 0 ] && { [ ! -x "$wl/bzip2" ] || [ ! -x "$wl/xz" ]; }; then
  "$root/scripts/build-workloads.sh" "$build" >&2 || echo "(workloads not built: table without them)"
fi
if [ -x "$wl/bzip2" ] && [ -x "$wl/xz" ]; then
  # 100 KB of this build's binary: ~10-14 M references each.
  head -c 100000 "$bin" >"$tmp/input100k"
  LLCPROBE_RT_MODE=trace LLCPROBE_RT_OUTPUT=$tmp/bzip2.trace "$wl/bzip2" -1 -c "$tmp/input100k" >/dev/null
  names+=("bzip2 -1 on 100 KB (Debian source, rt trace)"); traces+=("$tmp/bzip2.trace"); headline+=(0)
  LLCPROBE_RT_MODE=trace LLCPROBE_RT_OUTPUT=$tmp/xzrt.trace "$wl/xz" -1 -c "$tmp/input100k" >/dev/null
  names+=("xz -1 on 100 KB (Debian source, rt trace)"); traces+=("$tmp/xzrt.trace"); headline+=(0)
fi

# Per stream: MAE of each model column (pooled, slots, phases) against its
# truth, summed over seeds and sizes. Columns: seed lines lru random sc ss
# sc_slots ss_slots sc_phases ss_phases.
mae_cols='!/^#/ { for (k = 0; k < 6; k++) { t = (k % 2 == 0) ? $4 : $3; e = $(5 + k) - t; a[k] += e < 0 ? -e : e } n++ }
  END { printf "%.6f %.6f %.6f %.6f %.6f %.6f %d\n", a[0], a[1], a[2], a[3], a[4], a[5], n }'
# Sampling-noise floor: mean binomial standard error of the random and LRU
# truths from each seed's sample count ("# seed S: N samples; ...").
floor_cols='/^# seed/ { ns[$3 + 0] = $4; seeds++; tot += $4 }
  !/^#/ { N = ns[$1]; r += sqrt($4 * (1 - $4) / N); l += sqrt($3 * (1 - $3) / N); n++ }
  END { printf "samples per seed %.0f; binomial standard error, mean over sizes: random %.4f, lru %.4f\n", tot / seeds, r / n, l / n }'
declare -a sum_h=(0 0 0 0 0 0) sum_a=(0 0 0 0 0 0)
count_h=0 count_a=0
for i in "${!traces[@]}"; do
  echo "== ${names[$i]}"
  "$truth" "${traces[$i]}" "$rate" "$seeds" "$slot_refs" "$phase_window" $sizes >"$tmp/t$i"
  grep '^#' "$tmp/t$i"
  first=${seeds%%,*}
  echo "seed $first (slots: time-slot mode, docs/METHODS.md §7.5; phases: mrc --phases, docs/METHODS.md §9):"
  printf '%8s %8s %8s %9s %9s %9s %9s %9s %9s\n' lines lru random statcache statstack sc_slots ss_slots \
    sc_phases ss_phases
  awk -v s="$first" '!/^#/ && $1 == s { printf "%8d %8.4f %8.4f %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f\n", $2, $3, $4, $5, $6, $7, $8, $9, $10 }' "$tmp/t$i"
  echo "MAE per seed (statcache vs random, statstack vs lru; in slot mode; per phase):"
  for sd in ${seeds//,/ }; do
    awk -v s="$sd" '$1 == s' "$tmp/t$i" | awk "$mae_cols" |
      awk -v s="$sd" '{ printf "  seed %s: %.4f %.4f  slots %.4f %.4f  phases %.4f %.4f\n", s, $1 / $7, $2 / $7, $3 / $7, $4 / $7, $5 / $7, $6 / $7 }'
  done
  awk "$floor_cols" "$tmp/t$i"
  read -r a0 a1 a2 a3 a4 a5 n < <(awk "$mae_cols" "$tmp/t$i")
  awk -v a="$a0" -v b="$a1" -v c="$a2" -v d="$a3" -v e="$a4" -v f="$a5" -v n="$n" \
    'BEGIN { printf "MAE over seeds: statcache vs random %.4f, statstack vs lru %.4f; slots %.4f, %.4f; phases %.4f, %.4f\n", a / n, b / n, c / n, d / n, e / n, f / n }'
  vals=("$a0" "$a1" "$a2" "$a3" "$a4" "$a5")
  for k in 0 1 2 3 4 5; do
    sum_a[$k]=$(awk -v s="${sum_a[$k]}" -v a="${vals[$k]}" 'BEGIN { print s + a }')
    if [ "${headline[$i]}" = 1 ]; then
      sum_h[$k]=$(awk -v s="${sum_h[$k]}" -v a="${vals[$k]}" 'BEGIN { print s + a }')
    fi
  done
  count_a=$((count_a + n))
  if [ "${headline[$i]}" = 1 ]; then count_h=$((count_h + n)); fi
done

# The runtime's own per-phase curves (mrc --sampler rt --phases: windows
# and signatures recorded in the program, profile version 2) on the two
# walk+qsort programs, against the truth of their traces above (the runs
# differ only in ASLR; the arrays are line-aligned by malloc's size class,
# so the truth is the same). Window: EVAL_PHASE_WINDOW without a suffix,
# else mrc's default.
echo "== runtime: mrc --sampler rt --phases on the walk+qsort programs, seeds $seeds"
rt_window=()
case $phase_window in 0|*[!0-9]*) ;; *) rt_window=(--phase-window "$phase_window") ;; esac
rt_bytes=$(for l in $sizes; do printf '%d,' $((l * 64)); done)
rt_sum_sc=0 rt_sum_ss=0 rt_n=0
walk_args=("16384 3000000" "262144 4000000")
for i in 0 1; do
  first=${seeds%%,*}
  awk -v s="$first" '!/^#/ && $1 == s { print $3, $4 }' "$tmp/t$i" >"$tmp/rt-truth"
  for sd in ${seeds//,/ }; do
    # shellcheck disable=SC2086
    "$bin" mrc --sampler rt --phases "${rt_window[@]}" --rate "$rate" --seed "$sd" \
      --sizes "${rt_bytes%,}" --gnuplot "$tmp/no-gnuplot" -q -o "$tmp/rtm" -- "$tmp/walk" ${walk_args[$i]} \
      >"$tmp/rtm.out"
    read -r sc ss < <(awk -F, 'NR > 1 { print $3, $7 }' "$tmp/rtm.mrc.csv" | paste -d' ' - "$tmp/rt-truth" |
      awk '{ a += ($1 > $4 ? $1 - $4 : $4 - $1); b += ($2 > $3 ? $2 - $3 : $3 - $2); n++ } END { printf "%.6f %.6f\n", a / n, b / n }')
    echo "  ${names[$i]%% (*}, seed $sd: $(grep -o '^phases: [0-9]* windows of [0-9]* references, [0-9]* phases' "$tmp/rtm.out"); per phase $sc $ss"
    rt_sum_sc=$(awk -v s="$rt_sum_sc" -v a="$sc" 'BEGIN { print s + a }')
    rt_sum_ss=$(awk -v s="$rt_sum_ss" -v a="$ss" 'BEGIN { print s + a }')
    rt_n=$((rt_n + 1))
  done
done

echo "== cachegrind (xz -1 on 40 KB): LL data miss ratio vs StatStack with its associativity"
cg_sum=0 cg_n=0
printf '%10s %5s %12s %12s\n' LL ways cachegrind "statstack (mean of seeds)"
for ll in 262144 1048576 4194304; do
  ways=16
  valgrind --tool=cachegrind --cache-sim=yes --LL=$ll,$ways,64 --cachegrind-out-file=$tmp/cg.out \
    xz -1 -c -k "$tmp/input" >/dev/null 2>"$tmp/cg.err"
  # Data references and LL data misses from the summary.
  cg=$(awk '/D   refs:/ { gsub(",", "", $4); refs = $4 } /LLd misses:/ { gsub(",", "", $4); m = $4 } END { printf "%.6f", m / refs }' "$tmp/cg.err")
  # StatStack from each seed's samples; the error is averaged over seeds
  # like the figures above (at 1e-4 this trace gives ~440 samples, and the
  # miss ratio here is mostly its few never-reused ones).
  ours_sum=0 err_sum=0 ns=0
  for sd in ${seeds//,/ }; do
    "$bin" mrc --trace "$tmp/xz.trace" --rate "$rate" --seed "$sd" --model statstack --ways $ways \
      --sizes $ll -o "$tmp/cgm" >/dev/null 2>&1
    o=$(awk -F, 'NR == 2 { print $3 }' "$tmp/cgm.mrc.csv")
    ours_sum=$(awk -v s="$ours_sum" -v a="$o" 'BEGIN { print s + a }')
    err_sum=$(awk -v s="$err_sum" -v a="$cg" -v b="$o" 'BEGIN { d = a - b; print s + (d < 0 ? -d : d) }')
    ns=$((ns + 1))
  done
  ours=$(awk -v s="$ours_sum" -v n="$ns" 'BEGIN { printf "%.6f", s / n }')
  printf '%10s %5s %12.4f %12.4f\n' "$ll" "$ways" "$cg" "$ours"
  cg_sum=$(awk -v s="$cg_sum" -v e="$err_sum" -v n="$ns" 'BEGIN { print s + e / n }')
  cg_n=$((cg_n + 1))
done
echo "(rate $rate; cachegrind's LL sees only D1 misses and also instruction misses;"
echo " our stream counts a modify as one reference where cachegrind counts its read.)"
echo "(headline: the issue's three streams per phase (mrc --phases, window ${phase_window/#0/default}), seeds $seeds, rate $rate;"
echo " 'all' adds the Debian-source workloads; _pooled: one histogram per run; _slots: time slots)"
# Part 3 last, its headline lines after these.
{
awk -v a="${sum_a[0]}" -v b="${sum_a[1]}" -v n="$count_a" 'BEGIN {
  printf "mrc_mae_statcache_vs_random_pooled_all_streams: %.4f\nmrc_mae_statstack_vs_lru_pooled_all_streams: %.4f\n", a / n, b / n }'
awk -v a="${sum_a[4]}" -v b="${sum_a[5]}" -v n="$count_a" 'BEGIN {
  printf "mrc_mae_statcache_vs_random_all_streams: %.4f\nmrc_mae_statstack_vs_lru_all_streams: %.4f\n", a / n, b / n }'
awk -v a="${sum_h[2]}" -v b="${sum_h[3]}" -v n="$count_h" 'BEGIN {
  printf "mrc_mae_statcache_vs_random_slots: %.4f\nmrc_mae_statstack_vs_lru_slots: %.4f\n", a / n, b / n }'
awk -v a="${sum_h[0]}" -v b="${sum_h[1]}" -v n="$count_h" 'BEGIN {
  printf "mrc_mae_statcache_vs_random_pooled: %.4f\nmrc_mae_statstack_vs_lru_pooled: %.4f\n", a / n, b / n }'
awk -v a="$rt_sum_sc" -v b="$rt_sum_ss" -v n="$rt_n" 'BEGIN {
  printf "mrc_mae_rt_phases_statcache_vs_random_walks: %.4f\nmrc_mae_rt_phases_statstack_vs_lru_walks: %.4f\n", a / n, b / n }'
awk -v a="${sum_h[4]}" -v n="$count_h" 'BEGIN { printf "mrc_mae_statcache_vs_random: %.4f\n", a / n }'
awk -v a="${sum_h[5]}" -v n="$count_h" 'BEGIN { printf "mrc_mae_statstack_vs_lru: %.4f\n", a / n }'
awk -v a="$cg_sum" -v n="$cg_n" 'BEGIN { printf "mrc_mae_vs_cachegrind: %.4f\n", a / n }'
} >"$tmp/headlines"
"$root/scripts/eval-mrc-real.sh" "${real_args[@]}" --headlines "$tmp/real-headlines" "$build"
cat "$tmp/headlines" "$tmp/real-headlines"
