#!/usr/bin/env bash
# Benchmark of `llcprobe study` (issue: studies of N programs on K cores):
# 32 programs in groups of 4 (35,960 groups predicted, then the co-schedule
# search), profiles given, one core (taskset to CPU 0 when available).
# Profiles are synthetic (tests/predictcli/gen_profile: PHASES phases each,
# default 4, windows of 10^7 instructions cycling 3 times, preset intel8).
# The figure is the whole command's wall time (read, predict, search,
# study.json, CSVs, report.html); the prediction's and the search's own
# times from study.json and its CPU time (user + sys) are printed before it.
# Usage: scripts/bench-study.sh [BUILD_DIR]   (default build/; must be built)
# Environment: BENCH_STUDY_N (32), BENCH_STUDY_K (4), BENCH_STUDY_PHASES (4),
# BENCH_STUDY_ARGS (more options for llcprobe study, e.g. --stationary).
# Last line: study_32x4_seconds: X s
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
bin=$build/llcprobe
gen=$build/tests/predictcli/predict_gen_profile
for f in "$bin" "$gen"; do
  [ -x "$f" ] || { echo "bench-study: $f missing: build $build first" >&2; exit 1; }
done
n=${BENCH_STUDY_N:-32}
k=${BENCH_STUDY_K:-4}
phases=${BENCH_STUDY_PHASES:-4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/profiles"
for i in $(seq 1 "$n"); do
  "$gen" "$tmp/profiles/p$i.profile.json" "p$i" intel8 "$phases" "$((1000 + i))"
done
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
t0=$(date +%s%N)
/usr/bin/time -f '%U %S' -o "$tmp/cpu" "${pin[@]}" "$bin" study --cores "$k" ${BENCH_STUDY_ARGS:-} --profiles "$tmp/profiles" \
  -o "$tmp/out" -q >"$tmp/stdout"
t1=$(date +%s%N)
cat "$tmp/stdout"
python3 - "$tmp/out/study.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
q = d["search"]
print(f"groups: {d['groups_n']}; predict {q['predict_s']:.2f} s; search {q['search_s']:.2f} s "
      f"({q['method']}, best exact {q['best_exact']}, gap {q['optimality_gap_pct']:.3g} %)")
PY
# CPU time (user + sys): on a shared machine the wall time also counts waiting for a CPU
echo "study_${n}x${k}_cpu_seconds: $(awk '{ printf "%.2f", $1 + $2 }' "$tmp/cpu") s"
echo "study_${n}x${k}_seconds: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }') s"
