#!/usr/bin/env bash
# The main job on the bundled demo workload (tests/demo/demo_app: a stream
# phase and a hash-table phase), from a fresh machine:
#   1. install and build (scripts/setup.sh);
#   2. what this machine lets llcprobe see (llcprobe info);
#   3. the per-set contention map with --backend auto semantics: a hardware
#      backend if one passes its checks here, else the reason, and the same
#      program through the simulator (traced under valgrind first);
#   4. the Gaussian fit of the map and 25-set sampling over time, the
#      miss-ratio curve, the program's phases (offline on the trace, and
#      live on a longer run whose phases last longer than a window).
# Outputs go to out/demo.*. Every figure the demo prints itself has its unit.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
bin=build/llcprobe
app=build/tests/demo/demo_app
mkdir -p out

echo "== llcprobe info"
"$bin" info --no-reserve | sed -n '/^Last-level cache/,/^$/p;/^Backend/,$p'

echo "== llcprobe map (backend auto) -- $app"
if "$bin" map -o out/demo -- "$app" 2>out/demo.hw.err; then
  echo "(mapped on this machine's hardware)"
else
  echo "no hardware map here: $(cat out/demo.hw.err)"
  echo "== llcprobe trace -o out/demo.trace -- $app   (once, under valgrind: slow but any binary)"
  "$bin" trace -o out/demo.trace -- "$app"
  echo "== llcprobe map --backend sim --preset amd32 --trace out/demo.trace   (a simulated LLC of this machine's kind)"
  "$bin" map --backend sim --preset amd32 -o out/demo --trace out/demo.trace
fi

if "$bin" --help | grep -q "^  fit "; then
  echo "== llcprobe fit out/demo.map.json   (Gaussian and other families, 25 representative sets)"
  "$bin" fit -o out/demo out/demo.map.json || echo "(fit failed: see above)"
fi
if "$bin" --help | grep -q "^  sample " && [ -f out/demo.trace ]; then
  echo "== llcprobe sample --gaussian25 --fit out/demo.fit.json --backend sim --preset amd32 --trace out/demo.trace"
  if "$bin" sample --gaussian25 --fit out/demo.fit.json --backend sim --preset amd32 --trace out/demo.trace \
      -o out/demo; then
    # The same intervals with their units (from out/demo.sample.json).
    python3 - out/demo.sample.json <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1]))
n, sets = d["sets_total"], len(d["sets"])
print(f"per interval ({d['interval_s'] * 1e3:g} simulated ms each; {sets} of {n} sets probed):")
print(f"  time (ms)   misses in the {sets} sets   whole-cache estimate: stratified (scale-up)   true occupancy (% of LLC)")
for i in d["intervals"]:
    occ = i.get("true_occupancy_pct_llc")
    occ = "-" if occ is None else f"{occ:.2f}%"
    est = f"{i['stratified']:.0f} ({i['scale_up']:.0f})"
    print(f"  {i['t_start'] * 1e3:3.0f}-{i['t_end'] * 1e3:<5.0f}  {i['sampled_misses']:>21.0f}   {est:>43}   {occ:>25}")
t = d["total"]
print(f"whole run: {t['stratified']:.0f} probe misses estimated for all {n} sets (stratified; scale-up "
      f"{t['scale_up']:.0f}, ratio {t['ratio']:.0f}) from {t['sampled_misses']:.0f} misses in {sets} sets")
PY
  else
    echo "(sample failed: see above)"
  fi
fi

if "$bin" --help | grep -q "^  mrc "; then
  [ -f out/demo.trace ] || "$bin" trace -q -o out/demo.trace -- "$app"
  echo "== llcprobe mrc --trace out/demo.trace --rate 0.01   (miss ratio = misses per memory reference)"
  "$bin" mrc -o out/demo --trace out/demo.trace --rate 0.01 || echo "(mrc failed: see above)"
fi
if "$bin" --help | grep -q "^  phase "; then
  if [ -f out/demo.trace ]; then
    echo "== llcprobe phase --trace out/demo.trace --window 250000   (offline: windows of 250 000 instructions)"
    "$bin" phase -o out/demo-trace --trace out/demo.trace --window 250000 || echo "(phase failed: see above)"
  fi
  # demo_app 10000 2000: 20 000 rounds in blocks of 2000 of each phase, about
  # 4 s of CPU, so each phase spans several 200 ms windows.
  echo "== llcprobe phase --window-ms 200 -- $app 10000 2000   (live: windows of 200 ms of the program's CPU time)"
  "$bin" phase --window-ms 200 -o out/demo -- "$app" 10000 2000 || echo "(phase failed: see above)"
fi
echo "== outputs"
ls -l out/demo.* | awk '{print $5, $9}'
