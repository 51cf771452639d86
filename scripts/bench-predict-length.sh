#!/usr/bin/env bash
# How `predict`'s speed against the timed co-run grows with the programs'
# length (issue 15: prediction >= 1000x faster than the co-run simulation).
# The co-run simulation costs in proportion to the accesses simulated; a
# prediction costs per phase tuple, age class and segment of the timeline,
# which grow far more slowly. One pair of workloads (default uniform 6 MiB
# and zipf 32 MiB, the evaluation's first pair), preset intel8, LRU; at each
# length L (instructions per program): both profiled alone (`profile
# --backend sim`), co-run in the simulator (`sim --corun`, its thread's CPU
# time), predicted (`prediction_cpu_ms`). The evaluation's own figure
# (scripts/eval-predict.sh) is at 10^7 instructions.
# Usage: scripts/bench-predict-length.sh [BUILD_DIR]   (default build/)
# Environment: BENCH_LENGTHS (default "1e7 4e7 1.6e8"), BENCH_PAIR (two
# workload specs or trace files, default "uniform:size=6M
# zipf:size=32M,alpha=0.8"; a trace is profiled whole, its co-run stops
# at the length or its end).
# Last lines: predict_length_<L>_speedup_x: N x per length, then
# predict_length_speedup_x: N x at the longest.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
bin=$build/llcprobe
[ -x "$bin" ] || { echo "bench-predict-length: $bin missing: build $build first" >&2; exit 1; }
lengths=${BENCH_LENGTHS:-1e7 4e7 1.6e8}
read -r -a pair <<<"${BENCH_PAIR:-uniform:size=6M zipf:size=32M,alpha=0.8}"
[ "${#pair[@]}" = 2 ] || { echo "bench-predict-length: BENCH_PAIR names ${#pair[@]} workloads, not 2" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

last=
for l in $lengths; do
  n=$(python3 -c 'import sys; v = float(sys.argv[1]); assert v >= 1e6; print(int(v))' "$l") ||
    { echo "bench-predict-length: length '$l' is not a number >= 1e6" >&2; exit 2; }
  for i in 0 1; do
    src=(--workload "${pair[$i]}" --instructions "$n")
    [ -f "${pair[$i]}" ] && src=(--trace "${pair[$i]}")
    "$bin" profile --backend sim --preset intel8 --policy lru "${src[@]}" \
      -o "$tmp/p$i" --name "p$i" -q >"$tmp/profile.log" 2>&1 ||
      { echo "bench-predict-length: profile ${pair[$i]} at $n: $(tail -1 "$tmp/profile.log")" >&2; exit 1; }
  done
  "$bin" sim --corun --preset intel8 --policy lru --window 100000 --instructions "$n,$n" \
    -o "$tmp/corun.json" "${pair[@]}" >"$tmp/corun.log" 2>&1 ||
    { echo "bench-predict-length: sim --corun at $n: $(tail -1 "$tmp/corun.log")" >&2; exit 1; }
  "$bin" predict "$tmp/p0.profile.json" "$tmp/p1.profile.json" --preset intel8 --policy lru \
    -o "$tmp/pred" --no-plot -q >/dev/null 2>"$tmp/pred.log" ||
    { echo "bench-predict-length: predict at $n: $(tail -1 "$tmp/pred.log")" >&2; exit 1; }
  python3 - "$n" "$tmp/corun.log" "$tmp/pred.prediction.json" <<'PY' | tee "$tmp/line"
import json, re, sys
n, log, pred = sys.argv[1:4]
m = re.search(r"\(([0-9.]+) s CPU\)", open(log).read())
if not m:
    sys.exit("bench-predict-length: %s: no '(X s CPU)' in sim --corun's output" % log)
corun = float(m.group(1))
model = json.load(open(pred))["prediction_cpu_ms"] / 1e3
print("# %s instructions per program: co-run %.3f s CPU, prediction %.2f ms CPU"
      % (n, corun, model * 1e3))
print("predict_length_%s_speedup_x: %.0f x" % (n, corun / model))
PY
  last=$(tail -1 "$tmp/line" | awk '{ print $2 }')
done
echo "predict_length_speedup_x: $last x"
