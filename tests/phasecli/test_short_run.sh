#!/usr/bin/env bash
# Live phase on a run too short for its windows: 0.6 s of CPU in windows of
# CPU time (--cpu-time; the default length is 1.6-2 s with the tick or
# cpu-clock) gives fewer than 8 windows, and one warning line says so with
# the numbers and a --window-ms that would give 8; -q silences it, the JSON
# keeps it. With --window-ms 50 the same run has enough windows: no warning.
. "$(dirname "$0")/../cli_lib.sh"
helpers=$(dirname "$bin")/tests/phasecli

"$bin" phase --cpu-time -o "$tmp/s" --no-plot -- "$helpers/phasecli_twophase" 150 2 \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err"
check_rc "short run: exit 0" 0 $rc
"$python" - "$tmp/s.phase.json" "$tmp/err" <<'PY' || fail=1
import json, re, sys
d = json.load(open(sys.argv[1]))
err = open(sys.argv[2]).read().splitlines()
n, win = len(d["windows"]), d["sampling"]["window"]
cpu = sum(w["progress"] for w in d["windows"]) / 1e9
print("windows:", n, "of", win / 1e9, "s; cpu", cpu)
assert d["sampling"]["window_unit"] == "cpu-ns", d["sampling"]["window_unit"]
warn = [l for l in err if "too short for its windows" in l]
if n >= 8:  # a machine whose default window is short enough
    assert not warn and d["short_run"] is None, (warn, d["short_run"])
    print("ok   enough windows (%d): no warning" % n)
    sys.exit(0)
assert len(warn) == 1, err
m = re.fullmatch(r"llcprobe: warning: the run is too short for its windows: (\d+) windows? of "
                 r"([0-9.]+) s CPU \(the target's CPU time ([0-9.]+) s\); phases need at least 8\. "
                 r"Try --window-ms (\d+) \(about (\d+) samples per window at this source's rate; "
                 r"10 at least\), or phases offline: llcprobe trace -o F -- PROGRAM, then "
                 r"llcprobe phase --trace F", warn[0])
assert m, warn[0]
assert int(m.group(1)) == n and abs(float(m.group(2)) - win / 1e9) < 1e-3, m.groups()
assert abs(float(m.group(3)) - cpu) < 2e-3 and 0.5 < cpu < 1.5, (m.group(3), cpu)
assert abs(int(m.group(4)) - cpu * 1000 / 8) <= 1, m.group(4)
s = d["short_run"]
assert s["windows"] == n and s["min_windows"] == 8 and s["unit"] == "cpu-ns", s
assert abs(s["suggested_window"] - cpu * 1000 / 8) < 1e-6, s
print("ok   warning:", warn[0])
PY
"$bin" phase --cpu-time -q -o "$tmp/q" --no-plot -- "$helpers/phasecli_twophase" 150 2 \
  >/dev/null 2>"$tmp/err"
check_rc "-q: exit 0" 0 $?
check "-q: no warning" '! grep -q "too short" "$tmp/err"'
"$bin" phase --cpu-time --window-ms 50 -o "$tmp/l" --no-plot -- \
  "$helpers/phasecli_twophase" 150 2 >/dev/null 2>"$tmp/err"
check_rc "50 ms windows: exit 0" 0 $?
check "50 ms windows: no warning" '! grep -q "too short" "$tmp/err"'
jcheck "50 ms windows: enough of them" "$tmp/l.phase.json" \
  'len(d["windows"]) >= 8 and d["short_run"] is None'
exit $fail
