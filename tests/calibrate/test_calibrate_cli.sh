#!/usr/bin/env bash
# llcprobe calibrate end to end on the simulator.
. "$(dirname "$0")/../cli_lib.sh"

# Default touch rate: per-set probe rate / (2 W^2) = 4e6 / 512.
"$bin" calibrate --backend sim --preset intel8 -o "$tmp/c" >"$tmp/c.out" 2>"$tmp/c.err"
check_rc "calibrate intel8" 0 $?
jcheck "file format, geometry, rates" "$tmp/c.calib.json" \
  'd["format"]=="llcprobe-calibration" and d["version"]==2 and d["ways"]==16 and d["sets"]==8192 and d["probed"]==25 and abs(d["touch_rate"]-4e6/512)<1e-6 and len(d["misses_per_set_s"])==17'
jcheck "no co-runner, no misses" "$tmp/c.calib.json" 'd["misses_per_set_s"][0]==0'
# One foreign insertion costs W probe misses (docs/METHODS.md §12.10).
jcheck "misses = W k touch_rate within 2%" "$tmp/c.calib.json" \
  'all(abs(m-16*k*d["touch_rate"])<=0.02*16*k*d["touch_rate"] for k,m in enumerate(d["misses_per_set_s"]) if k)'
# The walk-length search sees exactly the co-runner's k lines on LRU.
jcheck "search estimate = k" "$tmp/c.calib.json" \
  'all(abs(e-k)<0.5 for k,e in enumerate(d["search"]["estimate"])) and d["search"]["estimator"]=="walk-length search"'
jcheck "curve stays below half the probe rate" "$tmp/c.calib.json" \
  'max(d["misses_per_set_s"])<=0.5*d["rate"]/d["probed"]*1.01'
[ "$(wc -l <"$tmp/c.calib.csv")" = 18 ] && [ "$(head -1 "$tmp/c.calib.csv" | cut -d, -f1-6)" = "k,misses_per_set_s,sd,min,max,search_estimate" ] \
  && ok "csv" || bad "csv"
[ "$(head -c 4 "$tmp/c.calib.png" | tail -c 3)" = "PNG" ] && ok "png" || bad "png"
# Two panels (misses, and the search's estimate against k): 1400 px wide.
check "png has the search panel beside the miss curve" \
  '[ "$("$python" -c "import struct,sys; print(struct.unpack(\">I\", open(sys.argv[1],\"rb\").read()[16:20])[0])" "$tmp/c.calib.png")" = 1400 ]'
grep -q "^calibrate: simulator preset intel8" "$tmp/c.out" && grep -q "^  16 " "$tmp/c.out" && ok "summary" \
  || bad "summary: $(cat "$tmp/c.out")"

# A fast co-runner saturates the probe from k = 2 on: the touch rate, not
# k, sets the misses (why the default is slow). The occupancy search is not
# checked here; a short search cycle keeps its simulated time (which grows
# with the touch rate) from dominating the run.
"$bin" calibrate --backend sim --preset intel8 --touch-rate 2e5 --search-cycle 0.005 --search-walks 1 \
  -o "$tmp/f" -q >/dev/null 2>&1
check_rc "calibrate --touch-rate 2e5" 0 $?
jcheck "saturated at the probe rate from k = 2" "$tmp/f.calib.json" \
  'all(abs(m/(d["rate"]/d["probed"])-1)<0.01 for m in d["misses_per_set_s"][2:])'

# sample reads it and reports occupancy beside the simulator's truth.
sim=(--backend sim --preset intel8 --workload uniform:size=2M --random 25 --intervals 2)
"$bin" sample "${sim[@]}" --calibration "$tmp/c.calib.json" -o "$tmp/s" >"$tmp/s.out" 2>&1
check_rc "sample --calibration" 0 $?
jcheck "occupancy in lines, bytes, % of the LLC" "$tmp/s.sample.json" \
  'd["total"]["occupancy_lines"]>0 and d["total"]["occupancy_bytes"]==64*d["total"]["occupancy_lines"] and abs(d["total"]["occupancy_pct_llc"]-100*d["total"]["occupancy_lines"]/(8192*16))<1e-9 and len(d["calibration_curve"])==17 and len(d["occupancy_search"]["lines"])==25 and d["occupancy_estimator"].startswith("walk-length")'
# uniform:size=2M holds a quarter of intel8's LLC.
jcheck "occupancy within 10% of the LLC of the truth" "$tmp/s.sample.json" \
  'abs(d["total"]["occupancy_pct_llc"]-d["total"]["true_occupancy_pct_llc"])<10 and abs(d["total"]["true_occupancy_pct_llc"]-25)<2'
grep -q "occupancy .* lines = .* KiB = .*% of the LLC (walk-length search, calibration .*); true occupancy" "$tmp/s.out" && ok "sample summary" \
  || bad "sample summary: $(cat "$tmp/s.out")"

# Refusals.
"$bin" sample --backend sim --preset amd32 --workload uniform:size=1M --random 25 --intervals 1 \
  --calibration "$tmp/c.calib.json" -o "$tmp/x" -q >/dev/null 2>"$tmp/x.err"
check_rc "calibration of another LLC" 1 $?
grep -q "^llcprobe: sample: --calibration: the calibration is for 8192 sets" "$tmp/x.err" && ok "says why" \
  || bad "message: $(cat "$tmp/x.err")"
"$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["search"]["threshold"]; json.dump(d,open(sys.argv[2],"w"))' \
  "$tmp/c.calib.json" "$tmp/nothr.json"
"$bin" sample "${sim[@]}" --calibration "$tmp/nothr.json" -o "$tmp/x" -q >/dev/null 2>"$tmp/x.err"
check_rc "calibration without a search threshold" 1 $?
grep -q "nothr.json.*search.threshold" "$tmp/x.err" && ok "names the field" || bad "message: $(cat "$tmp/x.err")"
"$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["touch_rate"]=-1; json.dump(d,open(sys.argv[2],"w"))' \
  "$tmp/c.calib.json" "$tmp/negtouch.json"
"$bin" sample "${sim[@]}" --calibration "$tmp/negtouch.json" -o "$tmp/x" -q >/dev/null 2>"$tmp/x.err"
check_rc "calibration with a negative touch rate" 1 $?
grep -qF "negtouch.json: touch_rate: -1 is not a positive number" "$tmp/x.err" && ok "names the field" || bad "message: $(cat "$tmp/x.err")"
echo '{"format":"llcprobe-map","version":1}' >"$tmp/foreign.json"
"$bin" sample "${sim[@]}" --calibration "$tmp/foreign.json" -o "$tmp/x" -q >/dev/null 2>"$tmp/x.err"
check_rc "foreign JSON" 1 $?
grep -qF "foreign.json: format: 'llcprobe-map' is not llcprobe-calibration" "$tmp/x.err" && ok "names the file" || bad "message: $(cat "$tmp/x.err")"
echo '{"name": "pkg", "version": "1.0"}' >"$tmp/pkg.json"
"$bin" sample "${sim[@]}" --calibration "$tmp/pkg.json" -o "$tmp/x" -q >/dev/null 2>"$tmp/x.err"
check_rc "another tool's JSON" 1 $?
grep -qF "pkg.json: format: missing: not an llcprobe-calibration file" "$tmp/x.err" && ok "says it is not a calibration" || bad "message: $(cat "$tmp/x.err")"
"$bin" calibrate --backend sim --touch-rate 0 >/dev/null 2>&1; check_rc "--touch-rate 0" 2 $?
"$bin" calibrate --backend sim --probed 0 >/dev/null 2>&1; check_rc "--probed 0" 2 $?
"$bin" calibrate --backend sim --search-threshold 1 >/dev/null 2>&1; check_rc "--search-threshold 1" 2 $?
"$bin" calibrate --backend sim --search-cycle 0 >/dev/null 2>&1; check_rc "--search-cycle 0" 2 $?
"$bin" calibrate --backend sim --workload uniform:size=1M >/dev/null 2>&1; check_rc "a target" 2 $?
"$bin" calibrate --backend sim --mode global >/dev/null 2>&1; check_rc "--mode" 2 $?
"$bin" calibrate --help | grep -q "^usage: llcprobe calibrate" && ok "--help" || bad "--help"
# Hardware: an unpaced probe gives no touch rate to derive, so --rate or
# --touch-rate is needed; then map's checks, the self-test and the slow
# idle walk, refusing with the measured reason where the machine cannot
# show contention (here), else calibrating.
"$bin" calibrate --backend timing -o "$tmp/hw" >/dev/null 2>"$tmp/hw.err"
check_rc "hardware without --rate" 2 $?
grep -q "give --rate or --touch-rate" "$tmp/hw.err" && ok "says what to give" || bad "hw: $(cat "$tmp/hw.err")"
timeout 100 "$bin" calibrate --backend timing --rate 1e5 -o "$tmp/hw" -q >/dev/null 2>"$tmp/hw.err"
rc=$?
if [ $rc = 0 ]; then
  jcheck "hardware calibration written" "$tmp/hw.calib.json" 'd["format"]=="llcprobe-calibration"'
else
  check_rc "hardware backend refuses" 1 $rc
  grep -q "^llcprobe: calibrate: " "$tmp/hw.err" && ok "hardware refusal message" || bad "hw: $(cat "$tmp/hw.err")"
  if grep -q "co-runner" "$tmp/hw.err"; then bad "refused for the co-runner: $(cat "$tmp/hw.err")"
  else ok "refusal is the machine's: $(cat "$tmp/hw.err")"; fi
fi
# sample --calibration on hardware: the same checks, refusing with the
# machine's reason here (no longer "simulator only").
timeout 100 "$bin" sample --backend timing --random 4 --intervals 1 --calibration "$tmp/c.calib.json" \
  -o "$tmp/hws" -q -- sleep 5 >/dev/null 2>"$tmp/hws.err"
rc=$?
if [ $rc = 0 ]; then
  jcheck "hardware sample with occupancy" "$tmp/hws.sample.json" 'd["occupancy_search"]["slow_walk_check"] is not None'
else
  check_rc "hardware sample --calibration refuses" 1 $rc
  if grep -q "^llcprobe: sample: " "$tmp/hws.err" && ! grep -q "cannot change its walk\|simulator only" "$tmp/hws.err"
  then ok "refusal is the machine's: $(cat "$tmp/hws.err")"; else bad "hw sample: $(cat "$tmp/hws.err")"; fi
fi
exit $fail
