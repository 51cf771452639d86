#!/usr/bin/env bash
# phase --trace --bbv pairs windows with exp-bbv intervals by instruction
# count (the synthetic two-phase trace of gen_trace, whose BBV has one
# interval per 20000 instructions): windows of 10000 are paired two to an
# interval, and agree as well as windows of 20000 do; a BBV covering half
# the run is refused (totals 50% apart, 45.8% beyond the one interval
# exp-bbv leaves unwritten at the end) unless the tolerance allows it, and
# then the windows past its end are left out and counted; a BBV missing
# just its last interval (as exp-bbv writes them) is accepted.
. "$(dirname "$0")/../cli_lib.sh"
helpers=$(dirname "$bin")/tests/phasecli
"$helpers/phasecli_gen_trace" "$tmp/t.trace" "$tmp/t.bb" 20000 6 4 || { bad "gen"; exit 1; }
"$bin" phase --trace "$tmp/t.trace" --window 10000 --bbv "$tmp/t.bb" -o "$tmp/h" --no-plot \
  >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
check_rc "half windows: exit 0" 0 $rc
check "totals equal" 'grep -q "as exp-bbv counts): trace 480000, exp-bbv 480000 (0.000% apart; 0.000% beyond exp-bbv.s unwritten last interval, tolerance 2.00%); 0 windows past" "$tmp/out"'
"$python" - "$tmp/h.phase.json" "$tmp/h.phase.csv" <<'PY' || fail=1
import csv, json, sys
d = json.load(open(sys.argv[1]))
b = d["bbv"]
assert len(d["windows"]) == 48 and b["windows"] == 24 and b["compared"] == 48, b
assert b["ari"] > 0.85, b
# window 2k and 2k+1 share interval k's label
lab = [int(r["bbv_phase"]) for r in csv.DictReader(open(sys.argv[2]))]
assert all(lab[2 * k] == lab[2 * k + 1] for k in range(24)), lab
assert lab[0] == lab[24] != lab[12] == lab[36], lab
print("ok   paired two to an interval")
PY
head -n 12 "$tmp/t.bb" >"$tmp/half.bb"
"$bin" phase --trace "$tmp/t.trace" --window 20000 --bbv "$tmp/half.bb" -o "$tmp/f" --no-plot \
  >"$tmp/out" 2>&1
check_rc "half a run: refused" 1 $?
check "says how far apart" 'grep -q "half.bb counts 240000 instructions, the trace 480000: 45.83% apart beyond exp-bbv.s unwritten last interval (up to 20000), more than --bbv-tolerance 2.00% (not the same run?)" "$tmp/out"'
"$bin" phase --trace "$tmp/t.trace" --window 20000 --bbv "$tmp/half.bb" --bbv-tolerance 60 \
  -o "$tmp/g" --no-plot >"$tmp/out" 2>&1
check_rc "within --bbv-tolerance 60" 0 $?
jcheck "windows past its end left out" "$tmp/g.phase.json" \
  'd["bbv"]["compared"] == 12 and d["bbv"]["unmatched"] == 12 and d["bbv"]["total_diff"] == 0.5 and abs(d["bbv"]["gap"] - 220000 / 480000) < 1e-12 and d["bbv"]["tolerance"] == 0.6'
head -n 23 "$tmp/t.bb" >"$tmp/most.bb"
"$bin" phase --trace "$tmp/t.trace" --window 20000 --bbv "$tmp/most.bb" -o "$tmp/m" --no-plot \
  >"$tmp/out" 2>&1
check_rc "last interval missing: accepted" 0 $?
jcheck "last interval missing: the last window unpaired" "$tmp/m.phase.json" \
  'd["bbv"]["compared"] == 23 and d["bbv"]["unmatched"] == 1 and d["bbv"]["gap"] == 0 and d["bbv"]["tail_allowance"] == 20000'
"$bin" phase --trace "$tmp/t.trace" --bbv-tolerance 5 >"$tmp/out" 2>&1
check_rc "--bbv-tolerance without --bbv: usage" 2 $?
"$bin" phase --trace "$tmp/t.trace" --bbv "$tmp/t.bb" --bbv-tolerance 101 >"$tmp/out" 2>&1
check_rc "--bbv-tolerance 101: usage" 2 $?
exit $fail
