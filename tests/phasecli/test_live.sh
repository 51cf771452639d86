#!/usr/bin/env bash
# llcprobe phase -- PROG: a program with two distinct phases (built with this
# test) must come out as at least two phases, with JSON, CSV and PNG written.
. "$(dirname "$0")/../cli_lib.sh"
helpers=$(dirname "$bin")/tests/phasecli

"$bin" phase --help >"$tmp/help" || fail=1
check "--help" 'grep -q "usage: llcprobe phase" "$tmp/help"'

# cpu-clock at a high rate: many short windows, whatever the machine allows.
"$bin" phase -o "$tmp/tp" --source cpu-clock --window-ms 40 --max-rate 10000 -- "$helpers/phasecli_twophase" 250 2 >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err"
check "exit 0" '[ $rc = 0 ]'
check "json csv written" '[ -s "$tmp/tp.phase.json" ] && [ -s "$tmp/tp.phase.csv" ]'
if command -v gnuplot >/dev/null; then check "png written" '[ -s "$tmp/tp.phase.png" ]'; fi
phases=$("$python" -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['phases'])" "$tmp/tp.phase.json")
check "at least 2 phases (got $phases)" '[ "$phases" -ge 2 ]'
# The two halves of each round must get different phase ids, and the
# first and second round's A (and B) must agree. A half-round's label is
# the most common phase of its windows, leaving out its first (which
# straddles the switch) and windows too thin to classify (unclassified).
cat >"$tmp/halves.py" <<'PY'
from collections import Counter


def half_label(w, q):
    """Most common phase of the q-th quarter of windows w (a half-round)."""
    n = len(w)
    got = [x["phase"] for x in w[n * q // 4 + 1:n * (q + 1) // 4] if x["phase"] >= 0]
    return Counter(got).most_common(1)[0][0] if got else -1
PY
"$python" - "$tmp/tp.phase.json" "$tmp" <<'PY' || fail=1
import json, sys
sys.path.insert(0, sys.argv[2])
from halves import half_label
d = json.load(open(sys.argv[1]))
assert d["format"] == "llcprobe-phase" and d["version"] == 1, "format"
assert d["mode"] == "live"
s = d["sampling"]
assert s["source"] == "cpu-clock", s
order = ["pebs-branches", "hw-ip", "tick", "cpu-clock"]
assert len(s["refused"]) == order.index(s["source"]), "a refusal per better source"
assert all(r["reason"] for r in s["refused"])
w = d["windows"]
assert len(w) >= 8, len(w)
assert d["target"]["exit_code"] == 0
n = len(w)
a1, b1, a2, b2 = (half_label(w, q) for q in range(4))
print("half-round labels:", a1, b1, a2, b2)
assert a1 >= 0 and b1 >= 0 and a1 != b1, "A and B differ"
assert a1 == a2 and b1 == b2, "phases recur"
assert 0 < d["summary"]["mean_rate"] <= 1
assert sum(x["windows"] for x in d["summary"]["windows_per_phase"]) <= d["summary"]["windows"]
print("ok   json content")
PY
lines=$(wc -l <"$tmp/tp.phase.csv")
wins=$("$python" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['windows']))" "$tmp/tp.phase.json")
check "csv has a row per window" '[ "$lines" = $((wins + 1)) ]'

# The default source. Where it is the tick (tracepoint permitted, the tick
# runs), the same two phases at its rate: 50 samples per window (200 ms of
# CPU time at HZ 250), 20 windows: 5 per half-round, so that a half's
# first window (which straddles the switch) leaves it 4 whole ones (with 3
# per half, 12 windows, a half was once split into two phases).
"$bin" phase --no-plot -o "$tmp/tk" --samples 50 -- "$helpers/phasecli_twophase" 1000 2 >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err"
check "default source: exit 0" '[ $rc = 0 ]'
"$python" - "$tmp/tk.phase.json" "$tmp" <<'PY' || fail=1
import json, sys
sys.path.insert(0, sys.argv[2])
from halves import half_label
d = json.load(open(sys.argv[1]))
s = d["sampling"]
order = ["pebs-branches", "hw-ip", "tick", "cpu-clock"]
assert len(s["refused"]) == order.index(s["source"]), "a refusal per better source"
if s["source"] != "tick":
    why = [r["reason"] for r in s["refused"] if r["source"] == "tick"]
    print("skip tick: source is %s (%s)" % (s["source"], why[0] if why else "a better one opened"))
    sys.exit(0)
assert s["event"] in ("irq_vectors:local_timer_entry", "timer:hrtimer_expire_entry"), s
assert s["tick_hz"] >= 20 and s["tick_hz_measured"] > 0, s
assert s["window"] == 50 * (10**9 // s["tick_hz"]), s
w = d["windows"]
n = len(w)
assert n >= 6, n
# Samples at least at the tick's rate in full-rate windows (other timers
# only add interrupts), over all of them: on a CPU shared with other busy
# tasks one window can get fewer (23 of 50 once, beside two busy loops).
full = [x for x in w[:-1] if x["multiplier"] == 1]
got = sum(x["kernel_samples"] for x in full)
assert full and got >= 0.5 * 50 * len(full), (got, len(full), full)
a1, b1, a2, b2 = (half_label(w, q) for q in range(4))
print("tick: %d Hz, %d windows, half-round labels:" % (s["tick_hz"], n), a1, b1, a2, b2)
assert a1 >= 0 and b1 >= 0 and a1 != b1, "A and B differ"
assert a1 == a2 and b1 == b2, "phases recur"
print("ok   tick source json content")
PY
exit $fail
