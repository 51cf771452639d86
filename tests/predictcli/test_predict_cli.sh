#!/usr/bin/env bash
# llcprobe predict end to end on synthetic profiles (written by the profile
# writer through tests/predictcli/gen_profile): outputs and their
# consistency, options, and every refusal (one line naming file and field).
. "$(dirname "$0")/../cli_lib.sh"
gen=${LLCPROBE_GEN_PROFILE:?LLCPROBE_GEN_PROFILE names tests/predictcli/gen_profile}

"$gen" "$tmp/a.profile.json" A intel8 3 1 probe cv=0.2 && "$gen" "$tmp/b.profile.json" B intel8 4 2 &&
  "$gen" "$tmp/c.profile.json" C amd32 2 3 && "$gen" "$tmp/g.profile.json" G intel8 2 4 probe gamma=1.6
check_rc "synthetic profiles written" 0 $?

# --- a pair, all outputs --------------------------------------------------
"$bin" predict "$tmp/a.profile.json" "$tmp/b.profile.json" -o "$tmp/ab" >"$tmp/ab.out" 2>"$tmp/ab.err"
check_rc "predict A B" 0 $?
check "summary names both programs" 'grep -q "^  A " "$tmp/ab.out" && grep -q "^  B " "$tmp/ab.out"'
check "warning: B has no probe readings" 'grep -q "warning: B: no probe readings" "$tmp/ab.err"'
jcheck "prediction header" "$tmp/ab.prediction.json" \
  'd["format"]=="llcprobe-prediction" and d["version"]==1 and d["machine"]["preset"]=="intel8" and d["machine"]["llc"]["lines"]==131072 and d["machine"]["model_policy"]=="lru"'
jcheck "per program: model, FOA, SDC, occupancy in lines/bytes/%" "$tmp/ab.prediction.json" \
  'len(d["programs"])==2 and all(0<p["model"]["miss_ratio"]<1 and p["model"]["slowdown"]>=1 and abs(p["model"]["occupancy_bytes"]-64*p["model"]["occupancy_lines"])<1e-6*p["model"]["occupancy_bytes"] and p["foa"]["miss_ratio"]>0 and p["sdc"]["slowdown"]>=1 for p in d["programs"])'
jcheck "occupancies share the cache (within 1%)" "$tmp/ab.prediction.json" \
  'abs(sum(p["model"]["occupancy_pct_llc"] for p in d["programs"])-100)<1'
jcheck "A's probe gives it an anchor and cv; no anchored timeline unasked" "$tmp/ab.prediction.json" \
  'd["programs"][0]["probe_used"] and d["programs"][0]["anchored"] is None and not d["options"]["anchored"] and all(abs(q["cv"]-0.2)<1e-12 and q["anchor"]=="ok" for q in d["programs"][0]["phases"]) and not d["programs"][1]["probe_used"]'
# The skew the set-associative LRU grid uses is the probe's CV less the
# Poisson spread of lines placed at random (CV^2 - sets / lines); the
# fully associative and random models take it whole.
jcheck "set-associative LRU: cv_skew = sqrt(max(0, cv^2 - sets / lines)) < cv" "$tmp/ab.prediction.json" \
  'all(q["cv_skew"] < q["cv"] and q["cv_skew"] >= 0 for q in d["programs"][0]["phases"])'
for args in "--policy random" "--fully-associative"; do
  "$bin" predict "$tmp/a.profile.json" "$tmp/b.profile.json" $args -o "$tmp/ab2" --no-plot -q >/dev/null 2>&1
  jcheck "$args: cv_skew = cv" "$tmp/ab2.prediction.json" \
    'all(q["cv_skew"] == q["cv"] for q in d["programs"][0]["phases"])'
  # (a measured CV: these generated profiles record no layout dispersion)
  jcheck "$args: the skew on the key values of the measured CV" "$tmp/ab2.prediction.json" \
    'all(q["skew_strata"] == ("key_values" if q["cv_skew"] > 0 else "none") for q in d["programs"][0]["phases"])'
done
jcheck "tuples: every phase pair met is solved once per age, converged" "$tmp/ab.prediction.json" \
  'len(d["tuples"])>=2 and len(set((tuple(t["phases"]), tuple(t["ages"])) for t in d["tuples"]))==len(d["tuples"]) and all(t["converged"] for t in d["tuples"]) and d["options"]["cold_start"]'
jcheck "cold start: the first tuple is young, every age positive" "$tmp/ab.prediction.json" \
  'd["tuples"][0]["ages"][0] is not None and all(a is None or a > 0 for t in d["tuples"] for a in t["ages"])'
jcheck "pair grid 3 x 4" "$tmp/ab.prediction.json" \
  'len(d["pair_grid"]["slowdown_a"])==3 and all(len(r)==4 for r in d["pair_grid"]["slowdown_b"])'
# The grid of a pair copies the phase pairs its timeline solved; with a
# third program the timeline's tuples are triples and every cell of the
# first two programs' grid is solved afresh: the same figures, bit for bit.
for pol in lru random; do
  "$bin" predict "$tmp/a.profile.json" "$tmp/b.profile.json" --policy $pol -o "$tmp/g2" --no-plot -q >/dev/null &&
    "$bin" predict "$tmp/a.profile.json" "$tmp/b.profile.json" "$tmp/g.profile.json" --policy $pol -o "$tmp/g3" \
      --no-plot -q >/dev/null
  check_rc "predict A B and A B G ($pol)" 0 $?
  "$python" - "$tmp/g2.prediction.json" "$tmp/g3.prediction.json" <<'PY' && ok "pair grid from the timeline's tuples = solved afresh ($pol)" || bad "pair grid reuse ($pol)"
import json, sys
g2, g3 = (json.load(open(f))["pair_grid"] for f in sys.argv[1:3])
sys.exit(0 if g2 == g3 and len(g2["slowdown_a"]) == 3 else 1)
PY
done
# The timeline CSV reproduces the JSON's miss ratio: references-weighted
# over A's first pass (its instructions per segment from the CPI).
"$python" - "$tmp/ab.prediction.json" "$tmp/ab.prediction.csv" "$tmp/a.profile.json" <<'PY' && ok "timeline CSV adds up to the JSON figures" || bad "timeline CSV vs JSON"
import csv, json, sys
d = json.load(open(sys.argv[1])); prof = json.load(open(sys.argv[3]))
api = {p["id"]: p["refs_per_instruction"] for p in prof["phases"]}
f = prof["timing"]["freq_hz"]; end = d["programs"][0]["model"]["seconds"]
refs = miss = ins = 0
for r in csv.DictReader(open(sys.argv[2])):
    if r["program"] != "0" or float(r["t0_s"]) >= end * (1 - 1e-12):
        continue
    i = float(r["dt_s"]) * f / float(r["cpi"]); ins += i
    refs += i * api[int(r["phase"])]; miss += i * api[int(r["phase"])] * float(r["miss_ratio"])
m = d["programs"][0]["model"]
sys.exit(0 if abs(miss / refs - m["miss_ratio"]) < 1e-6 and abs(ins - m["instructions"]) < 1e-6 * ins else 1)
PY
ntuples=$("$python" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["tuples"]))' "$tmp/ab.prediction.json")
check "tuples CSV: header and one row per tuple and program" \
  '[ "$(head -1 "$tmp/ab.tuples.csv" | cut -d, -f1-4)" = "tuple,program,name,phase" ] && [ $(($(wc -l <"$tmp/ab.tuples.csv") - 1)) -eq $((ntuples * 2)) ]'
if command -v gnuplot >/dev/null; then
  for p in occupancy missratio slowdown; do
    [ "$(head -c 4 "$tmp/ab.$p.png" | tail -c 3)" = "PNG" ] && ok "$p.png" || bad "$p.png missing or not a PNG"
  done
fi

# --- alone: the model's own solo, slowdown 1, the profile's solo miss ratio ---
# (the stationary, fully associative model of the histograms as recorded: the
# synthetic profile's solo is StatStack's of them)
"$bin" predict "$tmp/b.profile.json" -o "$tmp/b" --no-plot -q --stationary --fully-associative \
  --censored >/dev/null
check_rc "predict B alone" 0 $?
jcheck "--stationary: every tuple warm" "$tmp/b.prediction.json" \
  'not d["options"]["cold_start"] and all(t["ages"]==[None] for t in d["tuples"])'
"$python" - "$tmp/b.prediction.json" "$tmp/b.profile.json" <<'PY' && ok "alone: slowdown 1, miss ratio = the profile's solo" || bad "alone"
import json, sys
d = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
want = sum(q["references"] * q["solo"]["llc_miss_ratio"] for q in p["phases"]) / sum(q["references"] for q in p["phases"])
m = d["programs"][0]["model"]
sys.exit(0 if abs(m["slowdown"] - 1) < 1e-9 and abs(m["miss_ratio"] - want) < 1e-6 and d["pair_grid"] is None else 1)
PY

# --- options -----------------------------------------------------------------
"$bin" predict "$tmp/a.profile.json" "$tmp/b.profile.json" --no-coupling --no-probe -o "$tmp/nc" --no-plot -q >/dev/null
check_rc "--no-coupling --no-probe" 0 $?
# Per tuple, references/s = miss rate / miss ratio: coupled, API f / CPI of
# the co-run; without coupling, API f / CPI alone. Within 2e-3: the fixed
# point stops when a step moves the rates by < 1e-4, i.e. a residual of
# 1e-4 / beta (beta >= 1/16).
"$python" - "$tmp/ab.prediction.json" "$tmp/nc.prediction.json" "$tmp/a.profile.json" "$tmp/b.profile.json" <<'PY' && ok "rates: coupled from the co-run CPI, --no-coupling the solo rates; --no-probe: no anchor" || bad "--no-coupling/--no-probe"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
profs = [json.load(open(f)) for f in sys.argv[3:]]
def ok(d, key):
    for t in d["tuples"]:
        for i, (ph, p) in enumerate(zip(t["phases"], t["programs"])):
            q = next(x for x in profs[i]["phases"] if x["id"] == ph)
            want = q["refs_per_instruction"] * profs[i]["timing"]["freq_hz"] / p[key]
            if abs(p["miss_rate_per_s"] / p["miss_ratio"] / want - 1) > 2e-3:
                return False
    return True
sys.exit(0 if ok(a, "cpi") and ok(b, "solo_cpi") and not ok(b, "cpi") and not b["options"]["coupling"]
         and not b["options"]["probe"] and b["programs"][0]["anchored"] is None else 1)
PY
"$bin" predict "$tmp/a.profile.json" "$tmp/b.profile.json" --policy random -o "$tmp/rnd" --no-plot -q >/dev/null
jcheck "--policy random" "$tmp/rnd.prediction.json" 'd["machine"]["model_policy"]=="random" and d["machine"]["policy"]=="random"'
"$bin" predict "$tmp/a.profile.json" "$tmp/b.profile.json" --policy drrip -o "$tmp/dr" --no-plot >/dev/null 2>"$tmp/dr.err"
jcheck "--policy drrip: LRU model, said so" "$tmp/dr.prediction.json" \
  'd["machine"]["model_policy"]=="lru" and any("drrip is predicted with the lru" in f for f in d["flags"])'
check "drrip note on stderr" 'grep -q "warning: policy drrip" "$tmp/dr.err"'
"$bin" predict "$tmp/a.profile.json" "$tmp/b.profile.json" --policy srrip -o "$tmp/sr" --no-plot -q >/dev/null
jcheck "--policy srrip: LRU model with RRIP's protection, said so" "$tmp/sr.prediction.json" \
  'd["machine"]["model_policy"]=="lru" and d["machine"]["rrip_protect"]>1 and any("RRIP" in f for f in d["flags"])'
jcheck "--policy drrip: SRRIP's protection (inclusive preset)" "$tmp/dr.prediction.json" 'd["machine"]["rrip_protect"]>1'
"$bin" predict "$tmp/a.profile.json" "$tmp/b.profile.json" --policy lru -o "$tmp/lru" --no-plot -q >/dev/null
jcheck "--policy lru: no protection" "$tmp/lru.prediction.json" 'd["machine"]["rrip_protect"]==0'
"$bin" predict "$tmp/g.profile.json" "$tmp/b.profile.json" -o "$tmp/g" --no-plot >/dev/null 2>"$tmp/g.err"
jcheck "gamma 1.6 is recovered and flagged" "$tmp/g.prediction.json" \
  'all(q["anchor"]=="flagged" and abs(q["gamma"]-1.6)<1e-3 for q in d["programs"][0]["phases"])'
check "gamma flag on stderr" 'grep -q "warning: G: phase 0: gamma 1.6 outside \[0.80, 1.25\]" "$tmp/g.err"'
# --anchored: a second timeline with G's rate scaled by 1.6 in its footprint
# (a larger footprint: more of the cache, more misses); B, not anchored,
# loses lines to it. The main figures stay those of the run without.
"$bin" predict "$tmp/g.profile.json" "$tmp/b.profile.json" --anchored -o "$tmp/ga" --no-plot -q >/dev/null
check_rc "predict --anchored" 0 $?
"$python" - "$tmp/g.prediction.json" "$tmp/ga.prediction.json" <<'PY' && ok "--anchored: variant beside unchanged figures" || bad "--anchored"
import json, sys
g, a = (json.load(open(f)) for f in sys.argv[1:3])
pg, pa = g["programs"], a["programs"]
sys.exit(0 if a["options"]["anchored"] and pg[0]["anchored"] is None
         and all(x["model"] == y["model"] for x, y in zip(pg, pa))
         and pa[0]["anchored"]["occupancy_lines"] > pa[0]["model"]["occupancy_lines"]
         and pa[1]["anchored"]["occupancy_lines"] < pa[1]["model"]["occupancy_lines"] else 1)
PY
"$bin" predict "$tmp/g.profile.json" "$tmp/b.profile.json" -q >/dev/null 2>"$tmp/q.err"
check "--quiet: no warnings" '[ ! -s "$tmp/q.err" ]'

# Phase runs of 3x10^5 instructions, shorter than T*: the co-runners see a
# program's whole-program footprint there (flagged, marked per tuple and in
# the tuples CSV); its own figures stay its phase's. --phase-local: none.
"$gen" "$tmp/sa.profile.json" SA intel8 3 21 window=300000 windows=1 &&
  "$gen" "$tmp/sb.profile.json" SB intel8 3 22 window=300000 windows=1
check_rc "short-run profiles written" 0 $?
"$bin" predict "$tmp/sa.profile.json" "$tmp/sb.profile.json" -o "$tmp/sw" --no-plot >/dev/null 2>"$tmp/sw.err"
check_rc "predict, short phase runs" 0 $?
check "whole-program co-runners flagged" 'grep -q "warning: phases: in .* T\* spans a program.s current phase run" "$tmp/sw.err"'
"$bin" predict "$tmp/sa.profile.json" "$tmp/sb.profile.json" --phase-local -o "$tmp/sl" --no-plot -q >/dev/null
check_rc "predict --phase-local" 0 $?
"$python" - "$tmp/sw.prediction.json" "$tmp/sl.prediction.json" "$tmp/sw.tuples.csv" <<'PY' && ok "whole marks: JSON, CSV; --phase-local has none and other figures" || bad "whole marks"
import csv, json, sys
w, l = (json.load(open(f)) for f in sys.argv[1:3])
rows = list(csv.DictReader(open(sys.argv[3])))
marked = [t for t in w["tuples"] if any(t["whole"])]
sys.exit(0 if marked and w["timeline"]["whole_s"] > 0 and not w["options"]["phase_local"]
         and any(r["whole"] == "1" for r in rows) and all(r["whole"] in "01" for r in rows)
         and l["options"]["phase_local"] and l["timeline"]["whole_s"] == 0
         and not any(any(t["whole"]) for t in l["tuples"])
         and not any("whole-program footprint" in f for f in l["flags"])
         and any(abs(a["model"]["miss_ratio"] - b["model"]["miss_ratio"]) > 1e-3
                 for a, b in zip(w["programs"], l["programs"])) else 1)
PY
# The same 3-phase programs: each phase's reuses across its other phases
# (phases[].cross_phase, flagged); --phase-local: none. A 1-phase program
# has none.
"$python" - "$tmp/sw.prediction.json" "$tmp/sl.prediction.json" "$tmp/sw.err" <<'PY' && ok "cross-phase lines: JSON, flag; --phase-local has none" || bad "cross-phase lines"
import json, sys
w, l = (json.load(open(f)) for f in sys.argv[1:3])
err = open(sys.argv[3]).read()
def crossed(d):
    return [ph["cross_phase"] for p in d["programs"] for ph in p["phases"] if ph["cross_phase"]]
cw = crossed(w)
sys.exit(0 if len(cw) == 6
         and all(len(c["distances"]) == len(c["lines"]) == 64 for c in cw)
         and all(b > a for c in cw for a, b in zip(c["distances"], c["distances"][1:]))
         and any(max(c["lines"]) > 0 for c in cw)
         and "warning: phases: 6 phases' reuses across their programs' other phases" in err
         and not crossed(l) and not any("other phases count" in f for f in l["flags"]) else 1)
PY
# Random replacement: the misses the other phases add too, beside the
# co-run and alone (more beside co-runners that miss); flagged; none with
# --phase-local.
"$bin" predict "$tmp/sa.profile.json" "$tmp/sb.profile.json" --policy random -o "$tmp/rw" --no-plot \
  >/dev/null 2>"$tmp/rw.err" &&
  "$bin" predict "$tmp/sa.profile.json" "$tmp/sb.profile.json" --policy random --phase-local \
    -o "$tmp/rl" --no-plot -q >/dev/null
check_rc "predict --policy random, short phase runs" 0 $?
"$python" - "$tmp/rw.prediction.json" "$tmp/rl.prediction.json" "$tmp/rw.err" <<'PY' && ok "cross-phase misses (random): JSON, flag; --phase-local has none" || bad "cross-phase misses (random)"
import json, sys
w, l = (json.load(open(f)) for f in sys.argv[1:3])
err = open(sys.argv[3]).read()
cw = [ph["cross_phase"] for p in w["programs"] for ph in p["phases"] if ph["cross_phase"]]
sys.exit(0 if len(cw) == 6
         and all(len(c["misses"]) == len(c["misses_alone"]) == 64 for c in cw)
         and any(max(c["misses"]) > 0 for c in cw)
         and any(m != a for c in cw for m, a in zip(c["misses"], c["misses_alone"]))
         and "warning: phases: 6 phases' reuses across their programs' other phases count the misses" in err
         and not any(ph["cross_phase"] for p in l["programs"] for ph in p["phases"])
         and not any("misses those make" in f for f in l["flags"]) else 1)
PY

# A pair whose whole-program stand-in is solved warm: the phase-pair grid
# keeps to the profiles' phases (under ASan this wrote past the grid).
"$gen" "$tmp/ga3.profile.json" GA intel8 3 41 window=1000000 windows=2 &&
  "$gen" "$tmp/gb1.profile.json" GB intel8 1 42 window=1000000 windows=2 &&
  "$bin" predict "$tmp/ga3.profile.json" "$tmp/gb1.profile.json" -o "$tmp/gg" --no-plot -q >/dev/null
check_rc "pair grid beside a whole-program stand-in" 0 $?
jcheck "pair grid 3 x 1" "$tmp/gg.prediction.json" \
  'len(d["pair_grid"]["slowdown_a"])==3 and all(len(r)==1 for r in d["pair_grid"]["slowdown_b"])'

# --- machines -------------------------------------------------------------------
"$bin" predict "$tmp/a.profile.json" "$tmp/c.profile.json" >/dev/null 2>"$tmp/mix.err"
check_rc "intel8 + amd32 refused" 1 $?
check "one line naming file and field" \
  '[ $(wc -l <"$tmp/mix.err") -eq 1 ] && grep -q "^llcprobe: predict: $tmp/c.profile.json: machine: preset amd32, not intel8 in $tmp/a.profile.json (--force predicts anyway)$" "$tmp/mix.err"'
"$bin" predict "$tmp/a.profile.json" "$tmp/c.profile.json" --force -o "$tmp/f" --no-plot -q >/dev/null
check_rc "--force" 0 $?
jcheck "--force recorded" "$tmp/f.prediction.json" 'd["options"]["force"] and any(f.startswith("--force: ") and "amd32" in f for f in d["flags"])'
"$bin" predict "$tmp/a.profile.json" --preset amd32 >/dev/null 2>"$tmp/p.err"
check_rc "--preset amd32 for intel8 profiles refused" 1 $?
check "... naming the machine" 'grep -q "a.profile.json: machine: preset intel8, not amd32 in the machine predicted for" "$tmp/p.err"'
"$bin" predict "$tmp/c.profile.json" --preset amd32 -o "$tmp/c" --no-plot -q >/dev/null
jcheck "--preset amd32: 32 MiB, exclusive noted" "$tmp/c.prediction.json" \
  'd["machine"]["llc"]["bytes"]==33554432 and any("exclusive" in f for f in d["flags"])'
cat >"$tmp/info.json" <<'EOF'
{"format": "llcprobe-info", "version": 1, "cpu": {"brand": "Test CPU"},
 "caches": [{"level": 2, "type": "unified", "size": 1048576, "ways": 16, "sets": 1024, "line_size": 64},
            {"level": 3, "type": "unified", "size": 8388608, "ways": 16, "sets": 8192, "line_size": 64}]}
EOF
"$bin" predict "$tmp/a.profile.json" --machine "$tmp/info.json" >/dev/null 2>"$tmp/h.err"
check_rc "--machine host for preset profiles refused" 1 $?
"$bin" predict "$tmp/a.profile.json" --machine "$tmp/info.json" --force -o "$tmp/h" --no-plot -q >/dev/null
jcheck "--machine --force: the host's L3" "$tmp/h.prediction.json" \
  'd["machine"]["kind"]=="host" and d["machine"]["llc"]["sets"]==8192'
echo '{"format": "llcprobe-info", "version": 1, "caches": []}' >"$tmp/noinfo.json"
"$bin" predict "$tmp/a.profile.json" --machine "$tmp/noinfo.json" --force >/dev/null 2>"$tmp/ni.err"
check_rc "--machine without an LLC" 1 $?
check "... says so" 'grep -q "noinfo.json: caches: no unified cache" "$tmp/ni.err"'

# --- damaged inputs: one line, file and field, exit 1 ------------------------------
damage() { # NAME PYTHON-STATEMENT-ON-d EXPECTED-MESSAGE-PART
  "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); $2; json.dump(d, open(sys.argv[2], 'w'))" \
    "$tmp/b.profile.json" "$tmp/bad.profile.json"
  "$bin" predict "$tmp/a.profile.json" "$tmp/bad.profile.json" >/dev/null 2>"$tmp/bad.err"
  local rc=$?
  if [ $rc -eq 1 ] && [ "$(wc -l <"$tmp/bad.err")" -eq 1 ] &&
     grep -qF "llcprobe: predict: $tmp/bad.profile.json: $3" "$tmp/bad.err"; then
    ok "refused: $1"
  else
    bad "$1: exit $rc, stderr: $(cat "$tmp/bad.err")"
  fi
}
damage "bad histogram" 'd["phases"][1]["rdhist"]="rdhist 1 inf=x"' "phases[1].rdhist: "
damage "phase without references" 'd["phases"][0]["references"]=0; d["phases"][0]["refs_per_instruction"]=0' \
  "phases[0].references: phase 0 has no references"
damage "phase without samples" 'd["phases"][2]["rdhist"]="rdhist 1 inf=0"; d["phases"][2]["samples"]=0' \
  "phases[2].samples: phase 2 has no reuse samples"
damage "samples not the histogram's" 'd["phases"][0]["samples"]=3' "phases[0].samples: 3 is not the histogram"
damage "window of an unknown phase" 'd["windows"]["phase_of"][0]=9' "windows.phase_of[0]: 9 is neither -1 nor a phase id"
damage "missing timing" 'del d["timing"]' "timing: missing"
damage "another format" 'd["format"]="llcprobe-map"' "format: 'llcprobe-map' is not llcprobe-profile"
echo '{"format": "llcprobe-profile", "version": 1,' >"$tmp/bad.profile.json"
"$bin" predict "$tmp/a.profile.json" "$tmp/bad.profile.json" >/dev/null 2>"$tmp/bad.err"
check_rc "truncated JSON" 1 $?
check "... not JSON" 'grep -q "bad.profile.json: line .* not JSON" "$tmp/bad.err"'
"$bin" predict "$tmp/a.profile.json" "$tmp/none.profile.json" >/dev/null 2>"$tmp/bad.err"
check_rc "missing file" 1 $?

# Unclassified windows (-1) are modelled with the pooled histogram.
"$python" -c "import json,sys; d=json.load(open(sys.argv[1])); d['windows']['phase_of'][0]=-1; d['phases'][0]['windows']-=1; json.dump(d, open(sys.argv[2], 'w'))" \
  "$tmp/b.profile.json" "$tmp/u.profile.json"
"$bin" predict "$tmp/u.profile.json" -o "$tmp/u" --no-plot -q >/dev/null
check_rc "unclassified window" 0 $?
jcheck "... as the pooled phase -1" "$tmp/u.prediction.json" \
  'd["programs"][0]["phases"][-1]["phase"]==-1 and any(-1 in t["phases"] for t in d["tuples"])'

# --- usage ------------------------------------------------------------------------
for args in "" "--policy fifo $tmp/a.profile.json" "--preset intel8 --machine $tmp/info.json $tmp/a.profile.json" \
            "--no-plot $tmp/a.profile.json" "--bogus $tmp/a.profile.json" \
            "--anchored --no-probe $tmp/a.profile.json" \
            "--first-touches --stationary $tmp/a.profile.json" \
            "$(for i in 1 2 3 4 5 6 7 8 9; do printf '%s ' "$tmp/a.profile.json"; done)"; do
  "$bin" predict $args >/dev/null 2>"$tmp/u.err"
  rc=$?
  check_rc "usage: predict $(echo "$args" | sed "s|$tmp/||g" | cut -c1-60)" 2 $rc
done
"$bin" predict --stationary "$tmp/a.profile.json" -o "$tmp/st" --no-plot -q >/dev/null 2>&1
check_rc "--stationary alone (first touches are the default's, not asked for)" 0 $?
jcheck "... records neither a cold start nor first touches" "$tmp/st.prediction.json" \
  'not d["options"]["cold_start"] and not d["options"]["first_touches"]'
"$bin" predict --preset nosuch "$tmp/a.profile.json" >/dev/null 2>&1
check_rc "unknown preset" 2 $?
"$bin" predict --help | grep -q -- "--no-coupling" && ok "--help" || bad "--help"

# Regression: two simulator profiles of eval-predict (set-skewed hotsets16, CV
# 0.70, and phased) under random replacement. The skew's top stratum holds
# more of hotsets16's lines than its sets can, while its reuse alone says
# nothing is evicted; the equilibrium used to report occupancies 2.7% over
# the cache and refuse the prediction.
data=$(dirname "$0")/data
"$bin" predict "$data/hotsets16-intel8-random.profile.json" "$data/phased-intel8-random.profile.json" \
  --preset intel8 --policy random -q -o "$tmp/skewrandom" --no-plot >/dev/null 2>"$tmp/skewrandom.err"
check_rc "random, skewed program whose lines overfill its sets" 0 $?

# End-of-run censoring (docs/METHODS.md §7.7): by default the model's reuse is
# the run's middle; --censored takes the histograms as recorded. FOA and SDC
# get them as recorded either way (summed along the model's timeline, whose
# segments differ: equal to rounding).
"$bin" predict "$data/hotsets16-intel8-random.profile.json" --preset intel8 -q -o "$tmp/unc" --no-plot \
  >/dev/null 2>&1 && "$bin" predict "$data/hotsets16-intel8-random.profile.json" --preset intel8 -q \
  --censored -o "$tmp/cen" --no-plot >/dev/null 2>&1
check_rc "predict with and without --censored" 0 $?
"$python" - "$tmp/unc.prediction.json" "$tmp/cen.prediction.json" <<'PY' && ok "--censored: model differs, FOA/SDC do not" || bad "--censored"
import json, sys
u, c = (json.load(open(f)) for f in sys.argv[1:3])
pu, pc = u["programs"][0], c["programs"][0]
sys.exit(0 if u["options"]["uncensored"] and not c["options"]["uncensored"]
         and abs(pu["model"]["miss_ratio"] - pc["model"]["miss_ratio"]) > 1e-4
         and all(abs(pu[b][f] - pc[b][f]) <= 1e-9 * abs(pc[b][f]) for b in ("foa", "sdc")
                 for f in pc[b]) else 1)
PY
exit $fail
