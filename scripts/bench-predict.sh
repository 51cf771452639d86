#!/usr/bin/env bash
# Benchmark of issue 15: `llcprobe predict` of a pair of 10-phase profiles
# (goal: well under a second). Profiles are synthetic (tests/predictcli/
# gen_profile: 10 phases each, 60 windows of 10^7 instructions, probe
# readings with a per-set CV), on preset intel8.
# Each run is the whole command (read, model, JSON and CSVs; no PNGs), wall
# clock; the figure is the median of BENCH_PREDICT_RUNS (default 7). The
# model's own time (the prediction_ms the JSON records), the CPU time, and
# the random policy's are printed before it.
# Usage: scripts/bench-predict.sh [BUILD_DIR]   (default build/; must be built)
# Last line: predict_pair_ms: X ms
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
bin=$build/llcprobe
gen=$build/tests/predictcli/predict_gen_profile
for f in "$bin" "$gen"; do
  [ -x "$f" ] || { echo "bench-predict: $f missing: build $build first" >&2; exit 1; }
done
runs=${BENCH_PREDICT_RUNS:-7}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" "$tmp/a.profile.json" A intel8 10 5 probe cv=0.3
"$gen" "$tmp/b.profile.json" B intel8 10 6 probe cv=0.1

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# run POLICY: wall us of one predict, the model's ms from the JSON, and the
# command's CPU ms (user + sys: on a shared machine the wall time also
# counts waiting for a CPU)
run() {
  local t0 t1 cpu
  t0=$(date +%s%N)
  cpu=$( { /usr/bin/time -f '%U %S' "$bin" predict "$tmp/a.profile.json" "$tmp/b.profile.json" --policy "$1" \
             -o "$tmp/p" --no-plot -q >/dev/null; } 2>&1 | awk '{ print 1000 * ($1 + $2) }')
  t1=$(date +%s%N)
  echo "$(((t1 - t0) / 1000)) $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["prediction_ms"])' "$tmp/p.prediction.json") $cpu"
}
for pol in lru random; do
  : >"$tmp/$pol"
  for i in $(seq "$runs"); do run "$pol" >>"$tmp/$pol"; done
  echo "policy $pol: wall ms $(awk '{ printf "%.1f ", $1 / 1000 }' "$tmp/$pol"); model ms $(awk '{ printf "%.1f ", $2 }' "$tmp/$pol"); cpu ms $(awk '{ printf "%.0f ", $3 }' "$tmp/$pol")"
done
echo "predict_pair_model_ms: $(awk '{ print $2 }' "$tmp/lru" | median) ms"
echo "predict_pair_cpu_ms: $(awk '{ print $3 }' "$tmp/lru" | median) ms"
echo "predict_pair_random_ms: $(awk '{ print $1 / 1000 }' "$tmp/random" | median) ms"
echo "predict_pair_random_cpu_ms: $(awk '{ print $3 }' "$tmp/random" | median) ms"
echo "predict_pair_ms: $(awk '{ print $1 / 1000 }' "$tmp/lru" | median) ms"
