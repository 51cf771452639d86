#!/usr/bin/env bash
# llcprobe mrc --phases on two-phase traces of known curve (phase A cycles
# over 64 lines, B over 2000, windows A A B B A A B B; tests/mrc/
# gen_phase_trace.c): the phases are found, the mixture of the per-phase
# StatStack curves is within 0.013 of the exact LRU curve (the model's own
# value derived below) where the pooled histogram is off by ~0.47,
# instruction windows get phase --trace's labels, and bad
# combinations fail with one line.
. "$(dirname "$0")/../cli_lib.sh"
gen=$(dirname "$bin")/tests/mrc/mrc_gen_phase_trace
sizes=2K,64000,96000,256K # 32, 1000, 1500, 4096 lines

"$gen" "$tmp/pc.trace" pc 20000 && "$gen" "$tmp/in.trace" instr 20000 || { bad "gen"; exit 1; }

# Runtime-like trace (data records with their pc): reference windows.
"$bin" mrc --trace "$tmp/pc.trace" --phases --phase-window 20000 --rate 1 --sizes $sizes \
  -o "$tmp/pc" >"$tmp/out" 2>&1
check_rc "mrc --phases (pc trace)" 0 $?
check "summary names the phases" "grep -q '^phases: 8 windows of 20000 references, 2 phases' '$tmp/out'"
# One python per document: its start-up dominates this test on a loaded machine.
"$python" - "$tmp/pc.mrc.json" <<'PY' && ok "pc trace: JSON" || bad "pc trace: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
ph = d["phases"]
assert d["curve"] == "phase mixture", d["curve"]
assert ph["window_unit"] == "references" and ph["windows"] == 8 and ph["phases"] == 2, ph
l = [w["phase"] for w in ph["per_window"]]
assert l[0] == l[1] == l[4] == l[5] and l[2] == l[3] == l[6] == l[7] and l[0] != l[2] and min(l) >= 0, l
for p in ph["per_phase"]:  # 4 windows, half the references, their own samples
    assert p["windows"] == 4 and p["references"] == 80000 and p["samples"] == 80000 and not p["pooled"], p
# Exact LRU: 1.0 at 32 lines, 0.5008 at 1000 and 1500 (B misses, A hits
# but for its 64 reuses across a B run), 0.0129 (cold only) at 4096.
# StatStack on the timeline (docs/METHODS.md §9) gets phase A exactly
# (0.0016: cold and the reuses across B, whose stack distance is B's
# footprint). Phase B: 0.975, not 1: its 2000 reuses across an A run
# (2.5% of B's samples) start in the last 2000 references of their window,
# but a sample's place in its window is not recorded and the model spreads
# it over the window (at 1/8, 3/8, 5/8, 7/8): from those places the reuse
# ends inside the A run and sees A's 64 lines and B's sparse long-reuse
# tail only. Mixture 0.4883. The pooled histogram puts B's stack distance
# near 1000.
mix = [p["miss_ratio"] for p in d["models"][1]["points"]]
assert all(abs(m - t) < 1e-4 for m, t in zip(mix, [1.0, 0.4883, 0.4883, 0.0129])), mix
own = {p["phase"]: [x["miss_ratio"] for m in p["models"] if m["model"] == "statstack"
                   for x in m["points"]] for p in ph["per_phase"]}
assert all(abs(m - t) < 1e-4 for m, t in zip(own[l[0]][1:3], [0.0016, 0.0016])), own
assert all(abs(m - t) < 1e-4 for m, t in zip(own[l[2]][1:3], [0.975, 0.975])), own
assert d["pooled_models"][1]["points"][2]["miss_ratio"] < 0.05, d["pooled_models"]
PY
# The splice rule it replaced (kept for comparison): each phase's footprint
# past one window follows the pooled one; A's reuses across B hit (0.5004).
LLCPROBE_MRC_PHASE_SPLICE=1 "$bin" mrc --trace "$tmp/pc.trace" --phases --phase-window 20000 \
  --rate 1 --sizes $sizes --model statstack --gnuplot "$tmp/no-gnuplot" -o "$tmp/sp" >/dev/null 2>&1
check_rc "mrc --phases, splice rule" 0 $?
jcheck "splice rule: 0.5004" "$tmp/sp.mrc.json" \
  'all(abs(p["miss_ratio"] - t) < 1e-4 for p, t in zip(d["models"][0]["points"], [1.0, 0.5004, 0.5004, 0.0129]))'
check "phases.csv: header, 2 phases and the mixture at 4 sizes" \
  "[ \$(wc -l <'$tmp/pc.phases.csv') = 13 ] && head -1 '$tmp/pc.phases.csv' | grep -q '^phase,windows,references,samples,bytes,lines,statcache_miss_ratio' && [ \$(grep -c '^mixture,8,160000,160000,' '$tmp/pc.phases.csv') = 4 ]"
check "mrc.csv holds the mixture" "awk -F, 'NR == 4 { exit !(\$7 > 0.488 && \$7 < 0.489) }' '$tmp/pc.mrc.csv'"
if command -v gnuplot >/dev/null; then
  check "PNG" "[ -s '$tmp/pc.mrc.png' ]"
fi

# Lackey-like trace (instruction records): instruction windows, the same
# labels as phase --trace with the same window (full rate, seed 1).
nogp=(--gnuplot "$tmp/no-gnuplot") # PNGs take seconds here: one is enough
"$bin" mrc --trace "$tmp/in.trace" --phases --phase-window 20000 --rate 1 --sizes $sizes \
  "${nogp[@]}" -o "$tmp/in" >"$tmp/out" 2>&1
check_rc "mrc --phases (instruction trace)" 0 $?
"$bin" phase --trace "$tmp/in.trace" --window 20000 --no-dynamic-rate --no-plot -o "$tmp/ph" \
  >/dev/null 2>&1
check_rc "phase --trace" 0 $?
"$python" - "$tmp/in.mrc.json" "$tmp/ph.phase.json" <<'PY' && ok "instruction windows: phase --trace's labels, exact mixture" \
  || bad "instruction windows: labels or mixture"
import json, sys
m = json.load(open(sys.argv[1]))["phases"]
p = json.load(open(sys.argv[2]))["windows"]
assert m["window_unit"] == "instructions"
assert [w["phase"] for w in m["per_window"]] == [w["phase"] for w in p], (m["per_window"], p)
mix = [x["miss_ratio"] for x in json.load(open(sys.argv[1]))["models"][1]["points"]]
assert all(abs(a - t) < 1e-4 for a, t in zip(mix, [1.0, 0.4883, 0.4883, 0.0129])), mix
PY
# Windows by references on a trace whose data records carry no pc: every
# window unclassified, modelled with all samples, so the mixture is the pooled curve.
"$bin" mrc --trace "$tmp/in.trace" --phases --phase-unit references --phase-window 20000 \
  --rate 1 --sizes $sizes "${nogp[@]}" -o "$tmp/nopc" >"$tmp/out" 2>&1
check_rc "--phase-unit references without pcs" 0 $?
jcheck "no pcs: all unclassified, mixture = pooled" "$tmp/nopc.mrc.json" \
  'd["phases"]["unclassified_windows"] == 8 and all(abs(a["miss_ratio"] - b["miss_ratio"]) < 1e-12 for a, b in zip(d["models"][1]["points"], d["pooled_models"][1]["points"]))'
# Time slots still write their CSV (shared output code).
"$bin" mrc --trace "$tmp/pc.trace" --time-slots 4 --rate 0.1 --sizes $sizes "${nogp[@]}" \
  -o "$tmp/sl" >/dev/null 2>&1
check_rc "--time-slots" 0 $?
check "slots.csv: 4 slots and the mean" "[ \$(wc -l <'$tmp/sl.slots.csv') = 21 ] && [ \$(grep -c '^mean,' '$tmp/sl.slots.csv') = 4 ]"

. "$(dirname "$0")/mrc_expect.sh"
expect 1 'no instruction records' --trace "$tmp/pc.trace" --phases --phase-unit instructions
expect 2 'trace, rt or qemu sampler' --phases --sampler pmu -- /bin/true
expect 2 'go with --phases' --trace "$tmp/pc.trace" --phase-window 20000
expect 2 'not both' --trace "$tmp/pc.trace" --phases --time-slots 4
expect 2 'band' --trace "$tmp/pc.trace" --phases --band
expect 2 'phase-unit' --trace "$tmp/pc.trace" --phases --phase-unit lines
expect 2 'phase-window' --trace "$tmp/pc.trace" --phases --phase-window 10
check "--help documents --phases" "'$bin' mrc --help | grep -q -- '--phase-window N'"
exit $fail
