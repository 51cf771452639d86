#!/usr/bin/env bash
# Stress-probe map benchmark (issue: the stress probe).
#  1. Full simulated maps (global mode, every set) of both presets, timed.
#  2. Accuracy: Spearman between per-set probe misses and the target's true
#     (time-averaged) occupancy, for several workloads x LRU, tree-PLRU and
#     DRRIP x both presets; the lowest is the headline.
#  3. This machine with the best hardware backend: a full map, timed, twice
#     (repeatability), or the reason no hardware backend runs here.
# The last lines are the headline figures:
#   map_sim_amd32_seconds: S s
#   map_sim_intel8_seconds: S s
#   map_sim_min_spearman: R
#   map_hw_backend: NAME | none
#   map_hw_seconds: S s            (when a hardware backend ran)
#   map_hw_repeat_pearson: R       (when a hardware backend ran)
# Usage: scripts/bench-map.sh [--quick]   (--quick: intel8 only, LRU and DRRIP)
# MAP_ARGS (environment) is added to every simulated map, e.g. MAP_ARGS="--rate 3e7"
# (the default rate is auto: chosen per map against a planted pattern; the
# rate column says which).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
build=build
[ -x "$build/llcprobe" ] || scripts/setup.sh
bin=$build/llcprobe
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

spearman() { # JSON -> Spearman(misses, truth occupancy)
  scripts/map-spearman.py "$1"
}

echo "== tracing the demo workload for the trace-driven maps"
"$bin" trace -q -o "$tmp/demo.trace" -- "$build/tests/demo/demo_app" >/dev/null

presets=(intel8 amd32)
policies=(lru plru drrip)
[ $quick = 1 ] && presets=(intel8) && policies=(lru drrip)
declare -A llc_mib=([intel8]=8 [amd32]=32)
min=1
printf "%-7s %-6s %-28s %8s %9s %9s %9s\n" preset policy target seconds spearman retest rate
for preset in "${presets[@]}"; do
  two=$((2 * ${llc_mib[$preset]}))M
  for policy in "${policies[@]}"; do
    for target in "workload gaussian:size=$two,cv=0.5" "workload hotsets:size=$two,frac=0.2,weight=0.6" \
                  "trace $tmp/demo.trace"; do
      kind=${target%% *}; spec=${target#* }
      start=$(date +%s.%N)
      "$bin" map --backend sim --preset "$preset" --policy "$policy" --"$kind" "$spec" ${MAP_ARGS:-} -q -o "$tmp/m" \
        >/dev/null
      secs=$(echo "$(date +%s.%N) - $start" | bc)
      rho=$(spearman "$tmp/m.map.json")
      retest=$(python3 -c "import json; print('%.3f' % (json.load(open('$tmp/m.map.json'))['summary']['retest_pearson'] or float('nan')))")
      label=$( [ "$kind" = trace ] && echo "trace demo_app" || echo "${spec%%,*}" )
      rate=$(python3 -c "import json; print('%.3g' % json.load(open('$tmp/m.map.json'))['probe']['rate'])")
      printf "%-7s %-6s %-28s %8.1f %9s %9s %9s\n" "$preset" "$policy" "$label" "$secs" "$rho" "$retest" "$rate"
      min=$(python3 -c "print(min($min, $rho))")
      # The headline time: the gaussian workload with LRU.
      if [ "$policy" = lru ] && [[ "$spec" == gaussian* ]]; then
        eval "secs_$preset=$secs"
      fi
    done
  done
done

echo "== this machine"
hw=none
"$bin" map -q -o "$tmp/hw1" -- "$build/tests/demo/demo_app" 200 >"$tmp/hw1.out" 2>"$tmp/hw1.err" || true
if [ -f "$tmp/hw1.map.json" ]; then
  hw=$(python3 -c "import json; print(json.load(open('$tmp/hw1.map.json'))['backend']['name'])")
  "$bin" map -q -o "$tmp/hw2" -- "$build/tests/demo/demo_app" 200 >/dev/null 2>&1
  hw_secs=$(python3 -c "import json; print('%.2f' % json.load(open('$tmp/hw1.map.json'))['seconds'])")
  hw_r=$(python3 -c "
import json
a = json.load(open('$tmp/hw1.map.json'))['sets']['misses']; b = json.load(open('$tmp/hw2.map.json'))['sets']['misses']
n = len(a); ma = sum(a) / n; mb = sum(b) / n
c = sum((x - ma) * (y - mb) for x, y in zip(a, b)); d = (sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)) ** .5
print('%.3f' % (c / d if d else float('nan')))")
else
  echo "no hardware backend ran: $(cat "$tmp/hw1.err")"
fi

echo
[ -n "${secs_amd32:-}" ] && printf "map_sim_amd32_seconds: %.1f s\n" "$secs_amd32"
printf "map_sim_intel8_seconds: %.1f s\n" "$secs_intel8"
echo "map_sim_min_spearman: $min"
echo "map_hw_backend: $hw"
if [ "$hw" != none ]; then
  echo "map_hw_seconds: $hw_secs s"
  echo "map_hw_repeat_pearson: $hw_r"
fi
