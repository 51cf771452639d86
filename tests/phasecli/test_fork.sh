#!/usr/bin/env bash
# Targets that fork and exec (children must be sampled) or exit early.
. "$(dirname "$0")/../cli_lib.sh"
helpers=$(dirname "$bin")/tests/phasecli

# fork: phase A runs in a forked child, phase B in an exec'd copy.
"$bin" phase --no-plot -o "$tmp/f" --source cpu-clock --window-ms 40 --max-rate 10000 -- "$helpers/phasecli_twophase" 200 2 fork >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
check "fork: exit 0" '[ $rc = 0 ]'
"$python" - "$tmp/f.phase.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
w = d["windows"]
# The parent only waits: nearly every sample comes from a child, and the
# windows' CPU time is the children's (the parent alone would give ~0 windows).
assert len(w) >= 6, len(w)
assert sum(x["samples"] for x in w) > 100 * len(w) / 2
assert any(x["processes"] >= 2 for x in w), "samples from more than one process"
assert d["summary"]["phases"] >= 2, d["summary"]
# Each round's B runs in a new exec'd copy, loaded at another address
# (PIE, ASLR): IPs keyed by (file, offset) give both copies the same
# signature. So the run has two substantial phases (A and B, each ~10
# windows over the two rounds), not a third for round 2's copy of B (~5
# windows); start-up and exit windows (longer under ASan) stay below 4.
big = [p for p in d["summary"]["windows_per_phase"] if p["windows"] >= 4]
assert len(big) == 2, d["summary"]["windows_per_phase"]
assert d["sampling"]["rate_control"] == "inherited-events", d["sampling"]
# The dynamic rate reaches the children: the windows of a child running at
# a lowered rate get fewer samples from the kernel (fewer timer interrupts
# in the child), not only after thinning in llcprobe. Summed over the
# low-rate windows: a window can start with a few ms at the old rate while
# the monitor waits for a CPU (those samples are thinned), but a kernel
# period stuck at full rate would give 4-8x the wanted samples.
low = [x for x in w[:-1] if x["multiplier"] >= 4]
assert low, "the dynamic rate never lowered the rate"
want_low = sum(d["sampling"]["samples_per_window"] / x["multiplier"] for x in low)
got_low = sum(x["kernel_samples"] for x in low)
assert got_low < 2 * want_low, ("kernel kept the full rate", got_low, want_low)
for x in w[:-1]:
    want = d["sampling"]["samples_per_window"] / x["multiplier"]
    assert x["samples"] < 1.6 * want, (x, want)
print("ok   fork/exec children sampled and classified")
PY

# The same with the default source where it is the tick: the rate switch
# (enabling and disabling inherited tracepoint events) must reach the
# children too. 25 samples per window: 100 ms at HZ 250. Phases of 1 s
# give about 10 low-rate windows (80 samples wanted): with 500 ms there
# were 2 (8 wanted), and on a loaded machine, whose tick reaches a busy
# CPU irregularly, one CI run counted 16 (2.1x) with the rate switched.
"$bin" phase --no-plot -o "$tmp/ft" --samples 25 -- "$helpers/phasecli_twophase" 1000 2 fork >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
check "fork, default source: exit 0" '[ $rc = 0 ]'
"$python" - "$tmp/ft.phase.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
if d["sampling"]["source"] != "tick":
    print("skip tick fork: source is %s" % d["sampling"]["source"])
    sys.exit(0)
w = d["windows"][:-1]
# No check of samples from two processes in one window here: at 25 tick
# samples a window (6 at a lowered rate), the few windows that span a switch
# from one process to the next can get all theirs from one side on a loaded
# machine (a CI run found none of 40). The cpu-clock run above, at hundreds
# of samples a window, checks that the children are sampled.
# Interrupts per CPU second at full rate, as this run saw them (the tick
# plus other timers): a window at multiplier m should get 1/m of that. A
# rate stuck at full in the children would give 4-8x.
full = [x for x in w if x["multiplier"] == 1]
low = [x for x in w if x["multiplier"] >= 4]
assert full and low, "the dynamic rate never lowered the rate"
rate = sum(x["kernel_samples"] for x in full) / sum(x["cpu_ns"] for x in full)
want_low = sum(rate * x["cpu_ns"] / x["multiplier"] for x in low)
got_low = sum(x["kernel_samples"] for x in low)
print("tick fork: %d low-rate windows, %d samples, %.0f wanted" % (len(low), got_low, want_low))
assert got_low < 2 * want_low, ("kernel kept the full rate", got_low, want_low)
print("ok   tick: the rate switch reaches forked and exec'd children")
PY

# exit: the program stops after 5 ms with status 3: one short window.
"$bin" phase --no-plot -o "$tmp/e" -- "$helpers/phasecli_twophase" 100 1 exit >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
check "early exit: llcprobe exit 0" '[ $rc = 0 ]'
check "early exit: status recorded" 'grep -q "exit status 3" "$tmp/out"'
"$python" - "$tmp/e.phase.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["target"]["exit_code"] == 3
assert 1 <= len(d["windows"]) <= 2, d["windows"]
# The exit ends the window at once: shorter than a full window.
assert d["windows"][-1]["cpu_ns"] < d["sampling"]["window"]
print("ok   early exit json")
PY

# a program killed by a signal
"$bin" phase --no-plot -o "$tmp/k" -- /bin/sh -c 'kill -9 $$' >"$tmp/out" 2>&1
rc=$?
check "killed target: exit 0 ($rc)" '[ $rc = 0 ]'
check "killed target: signal reported" 'grep -q "killed by signal 9" "$tmp/out"'
exit $fail
