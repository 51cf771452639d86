#!/usr/bin/env bash
# `sample --gaussian25 --calibration` on the bundled demo program's trace
# (traced under valgrind as scripts/demo.sh does): the trace replays from
# its start whenever it ends, so the in-run map, every interval and the
# occupancy search at the calibration's own cycle all see the program; the
# estimate is checked against the simulator's true occupancy.
. "$(dirname "$0")/../cli_lib.sh"
app=$(dirname "$bin")/tests/demo/demo_app
[ -x "$app" ] || { echo "SKIP: $app is not built"; exit 77; }
command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed (llcprobe trace needs it)"; exit 77; }

"$bin" trace -q -o "$tmp/demo.trace" -- "$app" >/dev/null 2>"$tmp/t.err" || { bad "trace: $(cat "$tmp/t.err")"; exit $fail; }
"$bin" calibrate --backend sim --preset intel8 -o "$tmp/c" -q >/dev/null 2>&1
check_rc "calibrate intel8" 0 $?

"$bin" sample --backend sim --preset intel8 --trace "$tmp/demo.trace" --gaussian25 --calibration "$tmp/c.calib.json" \
  -o "$tmp/d" >"$tmp/d.out" 2>"$tmp/d.err"
check_rc "gaussian25 in-run with a calibration on a trace" 0 $?
# The trace holds 1.0 M data accesses, 0.1 simulated s: the map (two
# sweeps of 0.12 s), ten intervals and the 2 s search took it 19 times.
jcheck "the trace was replayed, the runs recorded" "$tmp/d.sample.json" 'd["target_runs"]>=10'
jcheck "every interval measured" "$tmp/d.sample.json" 'len(d["intervals"])==10'
jcheck "the search ran at the calibration's cycle" "$tmp/d.sample.json" \
  'd["occupancy_search"]["cycle_s"]==json.load(open(sys.argv[1].replace("d.sample.json","c.calib.json")))["search"]["cycle_s"]'
check "no cycle-shrinking warning" '! grep -q "shrinks" "$tmp/d.err"'
grep -q "the simulated trace ran [0-9]* times" "$tmp/d.out" && ok "summary says how many runs" || bad "summary: $(cat "$tmp/d.out")"
# The demo touches a 4 MiB stream and a 384 KiB table: about 55% of
# intel8's 8 MiB. Measured error of the estimate over seeds 1-5: -6.4,
# +3.7, -6.9, -5.8, -6.9 points of the LLC (truth 55.6-55.7%); the bound
# is the issue's accuracy goal (10% of the LLC), not widened for this
# program. Before the replay the search shrank its cycle to 4.5 ms and
# read 9.8% for 41.6% (--random 25), or failed after an in-run map.
jcheck "truth is the demo's footprint" "$tmp/d.sample.json" 'abs(d["total"]["true_occupancy_pct_llc"]-55)<5'
jcheck "occupancy within 10% of the LLC of the truth" "$tmp/d.sample.json" \
  'abs(d["total"]["occupancy_pct_llc"]-d["total"]["true_occupancy_pct_llc"])<10'
exit $fail
