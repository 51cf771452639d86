#!/usr/bin/env bash
# Simulator throughput (amd32 preset, LRU and DRRIP LLC, L2 on; see
# tests/sim/bench_sim.c for the access stream), and the timed co-run of four
# such programs (sim --corun) measured in the same run, with its ratio to
# the single-agent LRU rate (sim_corun4_ratio; sim_corun4_cpu_ratio from
# process CPU time, steadier on a loaded host). Builds bench_sim in build/
# (configuring it if missing; BUILD_DIR=dir to use another build tree).
#
#   scripts/bench-sim.sh                      one run; last four lines:
#     sim_lru_accesses_per_s: N 1/s
#     sim_drrip_accesses_per_s: N 1/s
#     sim_corun4_accesses_per_s: N 1/s
#     sim_corun4_vs_single_x: R x    (co-run / single-agent LRU, CPU time)
#   scripts/bench-sim.sh --baseline BIN [--rounds N]
#     N rounds (default 5) of this tree's bench_sim and BIN (another
#     build's bench_sim) interleaved, alternating which goes first; prints
#     each run, then per figure the medians, the median of the per-round
#     ratios new/baseline and their range, one line FIGURE_vs_baseline: R x
#     per figure (the figures that are ratios themselves, such as
#     sim_corun4_cpu_ratio, included), and ends with this tree's medians as
#     the four headline lines. On a loaded host the paired ratios are the
#     figure to trust, not the absolute rates.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
baseline=
rounds=5
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) baseline=${2:?--baseline needs a bench_sim binary}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    *) echo "usage: $0 [--baseline BIN] [--rounds N]" >&2; exit 2 ;;
  esac
done
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j2 --target bench_sim >/dev/null
new="$build/tests/sim/bench_sim"
if [ -z "$baseline" ]; then
  exec "$new"
fi
if [ ! -x "$baseline" ]; then
  echo "llcprobe: bench-sim: baseline '$baseline': not an executable" >&2
  exit 1
fi
case "$rounds" in ''|*[!0-9]*|0) echo "llcprobe: bench-sim: --rounds '$rounds': not a positive number" >&2; exit 2 ;; esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then order="new base"; else order="base new"; fi
  for who in $order; do
    bin=$new
    [ "$who" = base ] && bin=$baseline
    "$bin" > "$out/$who.$r"
    echo "round $r $who: $(grep -E '^sim_' "$out/$who.$r" | tr '\n' ' ')"
  done
done
# Figures present in both binaries' output, in the new one's order.
figures=$(grep -hE '^sim_[a-z0-9_]+: ' "$out/new.1" | cut -d: -f1)
summary() {   # figure -> "median_new median_base median_ratio min_ratio max_ratio"
  local f=$1
  for r in $(seq 1 "$rounds"); do
    local n b
    n=$(awk -v f="$f:" '$1 == f { print $2 }' "$out/new.$r")
    b=$(awk -v f="$f:" '$1 == f { print $2 }' "$out/base.$r")
    if [ -n "$n" ] && [ -n "$b" ]; then echo "$n $b"; fi
  done | awk '
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
      return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
    }
    { k++; nw[k] = $1; bs[k] = $2; ra[k] = $1 / $2; if (k == 1 || ra[k] < lo) lo = ra[k]; if (k == 1 || ra[k] > hi) hi = ra[k] }
    function fmt(v) { return v >= 1000 ? sprintf("%.0f", v) : sprintf("%.4f", v) }
    END { if (k) printf "%s %s %.4f %.4f %.4f\n", fmt(median(nw, k)), fmt(median(bs, k)), median(ra, k), lo, hi }'
}
median_new() {   # figure -> median of this tree's values over the rounds
  for r in $(seq 1 "$rounds"); do
    awk -v f="$1:" '$1 == f { print $2 }' "$out/new.$r"
  done | sort -g | awk '{ v[++k] = $1 } END { if (k) printf "%.4f\n", k % 2 ? v[(k+1)/2] : (v[k/2] + v[k/2+1]) / 2 }'
}
headline=
for f in $figures; do
  s=$(summary "$f")
  [ -z "$s" ] && continue
  read -r mn mb mr lo hi <<<"$s"
  echo "$f: new median $mn, baseline median $mb, ratio median $mr [$lo, $hi] over $rounds rounds"
  case "$f" in
    sim_lru_accesses_per_s|sim_drrip_accesses_per_s|sim_corun4_accesses_per_s) headline+="$f: $mn 1/s"$'\n' ;;
  esac
  echo "${f%_accesses_per_s}_vs_baseline: $mr x" >> "$out/ratios"
done
cat "$out/ratios"
printf '%s' "$headline"
# This tree's own ratio (a baseline may not print it).
ratio=$(median_new sim_corun4_vs_single_x)
if [ -n "$ratio" ]; then echo "sim_corun4_vs_single_x: $ratio x"; fi
