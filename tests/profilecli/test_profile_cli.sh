#!/usr/bin/env bash
# llcprobe profile: a simulated workload (phased) and a simulated trace give
# llcprobe-profile v1 files that read back (predict reads them), whose
# phases, windows and solo figures agree with each other and with a timed
# solo run of the same program; bad input gives one line, the right exit
# status, and no file.
. "$(dirname "$0")/../cli_lib.sh"
cd "$tmp" || exit 1

W='phased:uniform:size=1M@3e5;zipf:size=16M,alpha=0.8@3e5'
"$bin" profile --backend sim --preset intel8 --workload "$W" --instructions 4e6 -o ph \
  >out 2>err
check_rc "workload profile" 0 $?
jcheck "format, source, preset machine" ph.profile.json \
  'd["format"] == "llcprobe-profile" and d["version"] == 1 and d["program"]["source"] == "workload" and d["machine"]["kind"] == "preset" and d["machine"]["preset"] == "intel8" and d["machine"]["llc"]["lines"] == 131072'
jcheck "two phases, the windows of each counted" ph.profile.json \
  'len(d["phases"]) == 2 and all(p["windows"] == d["windows"]["phase_of"].count(p["id"]) for p in d["phases"])'
jcheck "windows: 100000 instructions, one per 1e5 of 4e6" ph.profile.json \
  'd["windows"]["unit"] == "instructions" and d["windows"]["length"] == 100000 and d["windows"]["count"] in (40, 41)'
jcheck "refs per instruction: 1/3 (ipa 3)" ph.profile.json \
  'all(abs(p["refs_per_instruction"] - 1/3) < 1e-3 for p in d["phases"])'
jcheck "the 16M zipf phase misses more and runs slower than the 1M one" ph.profile.json \
  'sorted(d["phases"], key=lambda p: p["solo"]["llc_miss_ratio"])[1]["solo"]["cpi"] > sorted(d["phases"], key=lambda p: p["solo"]["llc_miss_ratio"])[0]["solo"]["cpi"] + 2'
jcheck "cpi0 = cpi - misses/instr x (mem - llc) / mlp" ph.profile.json \
  'all(abs(p["cpi0"] - (p["solo"]["cpi"] - p["refs_per_instruction"] * p["solo"]["llc_miss_ratio"] * d["timing"]["miss_penalty_cycles"])) < 0.02 * p["solo"]["cpi"] for p in d["phases"])'
jcheck "reuse samples in every phase" ph.profile.json 'all(p["samples"] > 100 for p in d["phases"])'
# Without --rate the rate aims at --samples (20000) of the 4e6 / 3 references.
jcheck "default rate: about 20000 samples in all" ph.profile.json \
  'abs(d["sampler"]["rate"] - 20000 / (4e6 / 3)) < 1e-4 and 19000 < sum(p["samples"] for p in d["phases"]) < 21000'
grep -q "profile: rate 0.015 for about 20000 samples of 1333334 references" err &&
  ok "the chosen rate is said" || bad "no line on the chosen rate: $(head -3 err)"
"$bin" profile --backend sim --preset intel8 --workload "$W" --instructions 4e6 -o sm --samples 2000 \
  --no-probe --no-strata -q >/dev/null 2>&1
jcheck "--samples 2000: ten times fewer" sm.profile.json \
  'abs(d["sampler"]["rate"] - 2000 / (4e6 / 3)) < 1e-5 and 1800 < sum(p["samples"] for p in d["phases"]) < 2200'
"$bin" profile --backend sim --preset intel8 --workload "$W" --instructions 4e6 -o rt --rate 1e-3 --samples 2000 \
  --no-probe --no-strata -q >/dev/null 2>&1
jcheck "--rate wins over --samples" rt.profile.json 'd["sampler"]["rate"] == 1e-3'
jcheck "probe readings for every phase: 3 rates spanning 10x, tau = W / rate, 25 sets" ph.profile.json \
  'd["probe"]["status"] == "ok" and sorted(e["phase"] for e in d["probe"]["per_phase"]) == sorted(p["id"] for p in d["phases"]) and all(len(e["rates"]) == 3 and abs(e["rates"][2] / e["rates"][0] - 10) < 1e-6 and all(abs(t * r - 16) < 1e-6 for t, r in zip(e["tau_s"], e["rates"])) and sum(map(len, e["sets"])) == 25 for e in d["probe"]["per_phase"])'
jcheck "probe readings: footprints grow with tau, in the linear regime" ph.profile.json \
  'all(e["phi_hat"][0] > e["phi_hat"][1] > e["phi_hat"][2] > 0 and max(e["q_max"]) <= 0.1 for e in d["probe"]["per_phase"])'
grep -q "probe map: window" err && ok "probe progress lines" || bad "no probe progress lines: $(cat err)"
# predict reads the readings: per-phase cv and anchor, and --no-probe drops them
# --no-strata: the per-stratum reuse (test_profile_strata.sh) would take the CV skew's place
"$bin" predict ph.profile.json ph.profile.json --no-strata -o pr --no-plot -q >/dev/null 2>&1
check_rc "predict with the readings" 0 $?
jcheck "predict: every profiled phase anchored from the readings, its cv the map's" pr.prediction.json \
  'all(q["anchor"] in ("ok", "flagged") and abs(q["cv"] - [e["cv"] for e in json.load(open("ph.profile.json"))["probe"]["per_phase"] if e["phase"] == q["phase"]][0]) < 1e-9 for p in d["programs"] for q in p["phases"] if q["phase"] >= 0)'
"$bin" predict ph.profile.json ph.profile.json --no-strata --no-probe -o nopr --no-plot -q >/dev/null 2>&1
check_rc "predict --no-probe" 0 $?
jcheck "predict: the set skew of the readings (cv > 0) moves the miss ratio; --no-probe does not use them" pr.prediction.json \
  'all(p["probe_used"] for p in d["programs"]) and not any(p["probe_used"] for p in json.load(open("nopr.prediction.json"))["programs"]) and abs(d["programs"][0]["model"]["miss_ratio"] - json.load(open("nopr.prediction.json"))["programs"][0]["model"]["miss_ratio"]) > 1e-4'
# The workload alternates 9 windows of each part: the 1M uniform's 16384
# lines are all first touched in its first run, none in its second; the
# 16M zipf still finds new lines in its second.
jcheck "first touches per window: each line once, the uniform part's in its first run" ph.profile.json \
  'len(d["windows"]["first_touches"]) == d["windows"]["count"] and all(0 <= f <= r for f, r in zip(d["windows"]["first_touches"], d["windows"]["references"])) and sum(d["windows"]["first_touches"]) <= 16384 + 262144 and 0.99 * 16384 <= sum(d["windows"]["first_touches"][:9]) <= 16384 and sum(d["windows"]["first_touches"][18:27]) == 0 and sum(d["windows"]["first_touches"][27:36]) > 0'
# predict (first touches by default): the zipf part's first run touched lines its
# second finds again, so its second starts older; fewer young tuples.
"$bin" predict ph.profile.json --no-first-touches -o ft0 --no-plot -q >/dev/null && "$bin" predict ph.profile.json \
  -o ft1 --no-plot -q >/dev/null
check_rc "predict with and without --no-first-touches" 0 $?
jcheck "first touches by default: recorded, fewer young phase tuples than --no-first-touches" ft1.prediction.json \
  'd["options"]["first_touches"] and not json.load(open("ft0.prediction.json"))["options"]["first_touches"] and sum(a is not None for t in d["tuples"] for a in t["ages"]) < sum(a is not None for t in json.load(open("ft0.prediction.json"))["tuples"] for a in t["ages"])'
"$bin" profile --backend sim --preset intel8 --workload "$W" --instructions 4e6 -o np --no-probe --no-strata -q \
  >/dev/null 2>&1
jcheck "--no-probe: probe missing, skipped" np.profile.json \
  'd["probe"]["status"] == "missing" and "--no-probe" in d["probe"]["reason"]'
jcheck "--no-strata: no strata, the same first touches" np.profile.json \
  'not any(p.get("strata") for p in d["phases"]) and d["windows"]["first_touches"] == json.load(open("ph.profile.json"))["windows"]["first_touches"]'
check "CSV beside it" '[ "$(head -1 ph.profile.csv)" = "window,phase,instructions,references" ]'

# The whole-run CPI of the profile is the timed solo run's.
"$bin" sim --corun --preset intel8 -q -o co.json "$W" 'uniform:size=1M' --instructions 4e6,1e5 \
  >/dev/null 2>&1
"$python" - ph.profile.json co.json <<'PY' && ok "profile CPI = sim --corun solo CPI" || bad "profile vs corun solo CPI"
import json, sys
p = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
cyc = sum(ph["solo"]["cpi"] * ph["instructions"] for ph in p["phases"])
ins = sum(ph["instructions"] for ph in p["phases"])
solo = c["agents"][0]["solo"]
# unclassified windows are left out of the phases: compare per instruction
assert abs(cyc / ins - solo["cpi"]) < 0.05 * solo["cpi"], (cyc / ins, solo["cpi"])
PY
"$bin" profile --backend sim --preset intel8 --workload "$W" --instructions 4e6 -o ph2 -q >/dev/null 2>&1
check "same seed, same profile (but the creation time)" \
  '[ "$(grep -v created ph.profile.json)" = "$(grep -v created ph2.profile.json)" ]'

# A trace, timed in the simulator (recorded here when lackey is available).
cc=$(command -v cc || command -v gcc || command -v clang || true)
cat >prog.c <<'C'
static volatile long a[1 << 15];
int main(void)
{
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < (1 << 15); i += 5)
            a[i] += a[(i * 7) & 0x7fff];
    return 0;
}
C
if [ -n "$cc" ] && command -v valgrind >/dev/null && "$cc" -O1 -o prog prog.c &&
   "$bin" trace -q -o prog.trace -- ./prog >/dev/null 2>&1; then
  "$bin" profile --backend sim --preset amd32 --trace prog.trace --window 10000 -q >out 2>err
  check_rc "trace profile (default prefix: the trace's name)" 0 $?
  jcheck "trace: source, SHA-256 of the file, command" prog.profile.json \
    "d['program']['source'] == 'trace' and d['program']['sha256'] == '$(sha256sum prog.trace | cut -d' ' -f1)' and d['program']['command'][0].endswith('prog')"
  jcheck "trace: phases with samples, solo figures" prog.profile.json \
    'len(d["phases"]) >= 1 and all(p["solo"]["cpi"] > 0 and p["solo"]["llc_miss_ratio"] is not None for p in d["phases"])'
  # Live: reuse and phases from lackey, CPU time natively; the probe says why it is missing.
  "$bin" profile -o live --window 10000 -q -- ./prog >out 2>err
  check_rc "live profile" 0 $?
  jcheck "live: host machine, binary hashed, miss ratio unknown, probe missing" live.profile.json \
    "d['program']['source'] == 'live' and d['machine']['kind'] == 'host' and d['program']['sha256'] == '$(sha256sum prog | cut -d' ' -f1)' and all(p['solo']['llc_miss_ratio'] is None for p in d['phases']) and d['probe']['status'] == 'missing'"
else
  echo "skip trace and live profiles: no compiler, valgrind or lackey here"
fi

expect() { # NAME RC NEEDLE ARGS...
  local name=$1 want=$2 needle=$3; shift 3
  "$bin" profile "$@" >out 2>err; local rc=$?
  if [ "$rc" != "$want" ]; then bad "$name: exit $rc, expected $want; $(cat err)"
  elif [ "$(wc -l <err)" != 1 ] || ! grep -qF -- "$needle" err; then bad "$name: stderr: $(cat err)"
  elif [ -e o.profile.json ] || [ -e o.profile.csv ]; then bad "$name: output written"
  else ok "$name: $(cat err)"; fi
  rm -f o.profile.json o.profile.csv
}
expect "nothing to profile" 2 "give --backend sim" -o o
expect "sim without preset" 2 "needs --preset" -o o --backend sim --workload uniform:size=1M
expect "sim with both inputs" 2 "exactly one" -o o --backend sim --preset intel8 \
  --workload uniform:size=1M --trace x.trace
expect "trace without timing" 2 "a trace alone has no timing" -o o --trace x.trace
expect "bad backend" 2 "--backend" -o o --backend pmu -- ./prog
expect "bad rate" 2 "rate" -o o --backend sim --preset intel8 --workload uniform:size=1M --rate 2
expect "bad samples" 2 "samples" -o o --backend sim --preset intel8 --workload uniform:size=1M --samples 10
expect "bad window" 2 "window" -o o --backend sim --preset intel8 --workload uniform:size=1M --window 10
expect "one probe rate" 2 "--probe-rates" -o o --backend sim --preset intel8 --workload uniform:size=1M \
  --probe-rates 1e5
expect "probe rate out of range" 2 "probe-rates" -o o --backend sim --preset intel8 \
  --workload uniform:size=1M --probe-rates 1e5,1e12
expect "too few map sets" 2 "--probe-map-sets" -o o --backend sim --preset intel8 \
  --workload uniform:size=1M --probe-map-sets 10
expect "bad latency" 2 "--latency" -o o --backend sim --preset intel8 --workload uniform:size=1M \
  --latency 1,2
expect "bad workload" 1 "--workload" -o o --backend sim --preset intel8 --workload nonsense:x=1
expect "bad preset" 1 "--preset" -o o --backend sim --preset intel9 --workload uniform:size=1M
expect "missing trace" 1 "missing.trace" -o o --backend sim --preset intel8 --trace missing.trace
printf 'not a trace' >bad.trace
expect "damaged trace" 1 "bad.trace" -o o --backend sim --preset intel8 --trace bad.trace
expect "unwritable output" 1 "nodir" -o nodir/o --backend sim --preset intel8 \
  --workload uniform:size=1M --instructions 1e5
exit $fail
