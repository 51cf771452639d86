#!/usr/bin/env bash
# The detour meter (phasecli_detour) and the overhead script's detour part
# that runs it plain, under phase and under phase with cpu-clock.
. "$(dirname "$0")/../cli_lib.sh"
helpers=$(dirname "$bin")/tests/phasecli
root=$(cd "$(dirname "$0")/../.." && pwd)

"$helpers/phasecli_detour" 0.3 >"$tmp/d.json"
check "detour: runs" '[ $? = 0 ]'
"$python" - "$tmp/d.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
# the loop stops at its first clock read past 0.3 s: late by at most the
# last gap, which is a long detour (the vCPU descheduled) when it is long
assert -0.001 < d["wall_s"] - 0.3 < 0.05 + d["long_ns"] / 1e9, d
assert 0.05 < d["cpu_s"] <= d["wall_s"] + 0.05, d
assert d["reads"] > 1000 and 0 < d["step_ns"] < d["threshold_ns"], d
# the loop's detours are at least its timer ticks (tens per 0.3 s at any
# HZ), and their time is part of the run
assert d["detours"] + d["long"] >= 1, d
assert d["detour_ns"] + d["long_ns"] < d["wall_s"] * 1e9, d
print("ok   detour json")
PY
"$helpers/phasecli_detour" 0 >/dev/null 2>&1
check "detour: usage error" '[ $? = 2 ]'

LLCPROBE=$bin "$python" "$root/scripts/phase-overhead.py" detour "$tmp" 1 0.3 "$helpers/phasecli_detour" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
check "phase-overhead detour: exit 0" '[ $rc = 0 ]'
check "phase-overhead detour: a cpu-clock line" 'grep -q "^phase_detour_cpu_clock_pct: " "$tmp/out"'
check "phase-overhead detour: a line for the default source" '[ $(grep -c "^phase_detour_.*_pct: " "$tmp/out") = 2 ]'
check "phase-overhead detour: rounds kept" '[ -s "$tmp/detour.json" ]'
exit $fail
