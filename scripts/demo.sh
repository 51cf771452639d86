#!/usr/bin/env bash
# The main job on the bundled demo workload (tests/demo/demo_app: a stream
# phase and a hash-table phase), from a fresh machine:
#   1. install and build (scripts/setup.sh);
#   2. what this machine lets llcprobe see (llcprobe info);
#   3. the per-set contention map with --backend auto semantics: a hardware
#      backend if one passes its checks here, else the reason, and the same
#      program through the simulator (traced under valgrind first);
#   4. the Gaussian fit of the map and 25-set sampling over time, the
#      miss-ratio curve, the program's phases.
# Outputs go to out/demo.*.
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
  "$bin" sample --gaussian25 --fit out/demo.fit.json --backend sim --preset amd32 --trace out/demo.trace \
    -o out/demo || echo "(sample failed: see above)"
fi

if "$bin" --help | grep -q "^  mrc "; then
  [ -f out/demo.trace ] || "$bin" trace -q -o out/demo.trace -- "$app"
  echo "== llcprobe mrc --trace out/demo.trace --rate 0.01"
  "$bin" mrc -o out/demo --trace out/demo.trace --rate 0.01 || echo "(mrc failed: see above)"
fi
if "$bin" --help | grep -q "^  phase "; then
  echo "== llcprobe phase -- $app 300   (live, about a second natively)"
  "$bin" phase -o out/demo -- "$app" 300 || echo "(phase failed: see above)"
fi
echo "== outputs"
ls -l out/demo.* | awk '{print $5, $9}'
