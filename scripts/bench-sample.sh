#!/usr/bin/env bash
# Overhead of set-sampled monitoring (issue 4): what the probe costs with
# Gaussian-25 against Global at the same per-set probe rate (the paper's
# comparison), in the simulator:
#   probe accesses per simulated second, counted by `sample` (all the
#   probe issued over the measured intervals / their length), and
#   the target's extra LLC misses against the target running with no
#   probe to speak of (one set probed at 1e3 accesses/s), from the
#   simulator's ground truth over the same simulated time. The simulator
#   models no target timing, so the slowdown is given as the extra LLC
#   misses the probe causes (each one a memory access instead of a hit).
# On hardware it runs `sample` with the best backend when one passes its
# self-test; here none does, and the script prints the refusal.
# The last lines are the headline figures, `name: value unit`.
# Usage: scripts/bench-sample.sh [--quick]   (--quick: intel8 only)
#        PER_SET_RATE (environment): probe accesses per set per second (4e6:
#        sample's default, 1e8 over 25 sets)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
bin=build/llcprobe
[ -x "$bin" ] || scripts/setup.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
per_set=${PER_SET_RATE:-4e6}
workload=gaussian:size=16M,cv=0.5
interval=0.002
intervals=2
presets=(intel8 amd32)
[ $quick = 1 ] && presets=(intel8)
declare -A sets=([intel8]=8192 [amd32]=32768)

field() { # FILE EXPR over t (the sample's total)
  python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['total']; print($2)" "$1"
}
heads=()
printf "%-7s %-12s %6s %16s %18s %16s %14s\n" preset method sets "probe rate 1/s" "probe acc/sim s" "target misses" "extra misses"
for p in "${presets[@]}"; do
  n=${sets[$p]}
  common=(--backend sim --preset "$p" --workload "$workload" --seed 1 --interval $interval --intervals $intervals -q)
  "$bin" map --backend sim --preset "$p" --workload "$workload" --seed 1 -o "$tmp/$p.prof" -q >/dev/null
  "$bin" fit "$tmp/$p.prof.map.json" -o "$tmp/$p" -q --no-plots
  "$bin" sample "${common[@]}" --random 1 --rate 1e3 -o "$tmp/$p.base" >/dev/null
  base=$(field "$tmp/$p.base.sample.json" "t['true_target_misses']")
  for m in gaussian25 global; do
    if [ $m = gaussian25 ]; then
      k=25; args=(--fit "$tmp/$p.fit.json")
    else
      k=$n; args=(--global)
    fi
    rate=$(python3 -c "print(f'{$k * $per_set:.6g}')")
    /usr/bin/time -f %e -o "$tmp/time" "$bin" sample "${common[@]}" "${args[@]}" --rate "$rate" -o "$tmp/$p.$m" >/dev/null 2>&1
    acc=$(field "$tmp/$p.$m.sample.json" "t['probe_accesses'] / (t['t_end'] - t['t_start'])")
    tm=$(field "$tmp/$p.$m.sample.json" "t['true_target_misses']")
    extra=$(python3 -c "print(f'{100 * ($tm - $base) / $base:.2f}')")
    printf "%-7s %-12s %6s %16s %18.4g %16.0f %13s%%\n" "$p" "$m" "$k" "$rate" "$acc" "$tm" "$extra"
    heads+=("sample_probe_accesses_per_s_${m}_$p: $(python3 -c "print(f'{$acc:.4g}')") 1/s"
            "sample_target_extra_llc_misses_${m}_$p: $extra %")
  done
  printf "%-7s %-12s %6s %16s %18s %16.0f %14s\n" "$p" "no probe" 1 1e3 "-" "$base" "(reference)"
done
echo "(simulated: $workload, $intervals intervals of $interval s at $per_set probe accesses per set per second)"

echo "== hardware: the best backend on this machine"
hw=none
if timeout 300 "$bin" sample --gaussian25 --intervals 2 -o "$tmp/hw" -q -- sleep 60 >/dev/null 2>"$tmp/hw.err"; then
  hw=$(python3 -c "import json; print(json.load(open('$tmp/hw.sample.json'))['backend'])")
  acc=$(field "$tmp/hw.sample.json" "t['probe_accesses'] / (t['t_end'] - t['t_start'])")
  heads+=("sample_hw_probe_accesses_per_s_gaussian25: $acc 1/s")
else
  echo "refused: $(tail -1 "$tmp/hw.err")"
fi
for h in "${heads[@]}"; do echo "$h"; done
echo "sample_hw_backend: $hw"
