#!/usr/bin/env bash
# llcprobe sample end to end on the simulator.
. "$(dirname "$0")/../cli_lib.sh"
sim=(--backend sim --preset intel8 --workload gaussian:size=16M,cv=0.5)

# Gaussian-25 without --fit: maps, fits, then samples in the same run.
"$bin" sample "${sim[@]}" --gaussian25 --intervals 4 -o "$tmp/g" >"$tmp/g.out" 2>"$tmp/g.err"
check_rc "gaussian25 in-run" 0 $?
jcheck "in-run map and fit written" "$tmp/g.fit.json" 'd["format"]=="llcprobe-fit" and len(d["selection"]["units"])==25'
jcheck "sample json" "$tmp/g.sample.json" \
  'd["format"]=="llcprobe-sample" and d["method"]=="gaussian" and d["headline"]=="stratified_ratio" and len(d["sets"])==25 and len(d["intervals"])==4'
jcheck "sampled sets are the fit's" "$tmp/g.sample.json" \
  'd["sets"]==[u["unit"] for u in json.load(open(sys.argv[1].replace(".sample.json",".fit.json")))["selection"]["units"]]'
jcheck "scale-up is N/n times the sampled misses" "$tmp/g.sample.json" \
  'all(abs(i["scale_up"]-8192/25*i["sampled_misses"])<1e-6*i["scale_up"] for i in d["intervals"])'
jcheck "estimators agree within 30% on a Gaussian workload" "$tmp/g.sample.json" \
  'all(abs(i["stratified"]/i["scale_up"]-1)<0.3 and abs(i["ratio"]/i["scale_up"]-1)<0.3 for i in d["intervals"])'
jcheck "totals add up, truth recorded" "$tmp/g.sample.json" \
  'abs(d["total"]["scale_up"]-sum(i["scale_up"] for i in d["intervals"]))<1e-6*d["total"]["scale_up"] and d["total"]["true_occupancy_lines"]>0'
[ "$(head -1 "$tmp/g.sample.csv" | cut -d, -f1-5)" = "interval,t_start,t_end,sampled_misses,scale_up" ] && \
  [ "$(wc -l <"$tmp/g.sample.csv")" = 5 ] && ok "csv" || bad "csv"
[ "$(head -c 4 "$tmp/g.sample.png" | tail -c 3)" = "PNG" ] && ok "png" || bad "png"
grep -q "^sample: gaussian 25 sets, 4 intervals" "$tmp/g.out" && ok "summary line" || bad "summary: $(cat "$tmp/g.out")"

# The simulated target's page size goes map -> fit -> sample (docs/METHODS.md §5.4).
jcheck "map records the target's page size" "$tmp/g.map.json" 'd["target_page_size"]=="4K"'
jcheck "fit records it" "$tmp/g.fit.json" 'd["page_size"]=="4K"'
# The same sets from the fit file.
"$bin" sample "${sim[@]}" --fit "$tmp/g.fit.json" --intervals 2 -o "$tmp/f" >/dev/null 2>"$tmp/fw"
check_rc "--fit FILE" 0 $?
# Same target, same simulator seed: the same placement, so no warning
# (it used to claim another run); another seed is another placement.
grep -q "g.fit.json: same target and simulator seed 1 as its map: the same page placement" "$tmp/fw" \
  && ! grep -q "another run" "$tmp/fw" && ok "same seed: same placement, no warning" || bad "same seed: $(cat "$tmp/fw")"
jcheck "fit records the map's seed" "$tmp/g.fit.json" 'd["map_seed"]==1'
"$bin" sample "${sim[@]}" --seed 2 --fit "$tmp/g.fit.json" --intervals 2 -o "$tmp/f2" >/dev/null 2>"$tmp/fw2"
check_rc "--fit FILE, another seed" 0 $?
grep -q "g.fit.json comes from another run of the target (page size 4K; its map used simulator seed 1, this run 2)" \
  "$tmp/fw2" && ok "another seed: small-page warning names the size and the seeds" || bad "warning: $(cat "$tmp/fw2")"
"$bin" fit "$tmp/g.map.json" -o "$tmp/h" -q --no-plots
"$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["target_page_size"]; json.dump(d,open(sys.argv[2],"w"))' \
  "$tmp/g.map.json" "$tmp/old.map.json"
"$bin" fit "$tmp/old.map.json" -o "$tmp/old" -q --no-plots
jcheck "a map without the field: unknown" "$tmp/old.fit.json" 'd["page_size"]=="unknown"'

jcheck "--fit uses the file's sets" "$tmp/f.sample.json" \
  'd["sets"]==json.load(open(sys.argv[1].replace("f.sample.json","g.sample.json")))["sets"]'

# Baselines.
"$bin" sample "${sim[@]}" --random 40 --seed 3 --intervals 2 -o "$tmp/r" -q >/dev/null 2>&1; check_rc "--random" 0 $?
jcheck "40 distinct random sets" "$tmp/r.sample.json" 'len(set(d["sets"]))==40 and d["method"]=="random" and d["intervals"][0]["stratified"] is None'
"$bin" sample "${sim[@]}" --continuous 30 --start 100 --intervals 2 -o "$tmp/c" -q >/dev/null 2>&1; check_rc "--continuous" 0 $?
jcheck "30 consecutive sets from 100" "$tmp/c.sample.json" 'd["sets"]==list(range(100,130))'
printf '# sets\n5\n7 9-11\n' >"$tmp/sets.txt"
"$bin" sample "${sim[@]}" --sets "$tmp/sets.txt" --intervals 1 -o "$tmp/s" -q >/dev/null 2>&1; check_rc "--sets FILE" 0 $?
jcheck "sets from the file" "$tmp/s.sample.json" 'sorted(d["sets"])==[5,7,9,10,11]'
"$bin" sample "${sim[@]}" --global --intervals 1 -o "$tmp/a" -q >/dev/null 2>&1; check_rc "--global" 0 $?
jcheck "global: every set, estimate = sum" "$tmp/a.sample.json" \
  'len(d["sets"])==8192 and d["intervals"][0]["scale_up"]==d["intervals"][0]["sampled_misses"]'

# Usage and input errors.
"$bin" sample "${sim[@]}" --random 5 --global >/dev/null 2>&1; check_rc "two set choices" 2 $?
"$bin" sample "${sim[@]}" --interval 0 >/dev/null 2>&1; check_rc "bad --interval" 2 $?
"$bin" sample --help | grep -q "^usage: llcprobe sample" && ok "--help" || bad "--help"
"$bin" sample "${sim[@]}" --interval 1e9 2>"$tmp/e" >/dev/null; check_rc "--interval 1e9" 2 $?
grep -q "^llcprobe: sample: --interval: 1e9 is outside \[1e-06, 3600\]" "$tmp/e" && ok "names the range" || bad "$(cat "$tmp/e")"
"$bin" sample "${sim[@]}" --intervals 0 >/dev/null 2>&1; check_rc "--intervals 0" 2 $?
"$bin" sample "${sim[@]}" --random 999999999 >/dev/null 2>&1; check_rc "--random 999999999" 2 $?
"$bin" sample "${sim[@]}" --fit "$tmp/g.map.json" -o "$tmp/x" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -qF "$tmp/g.map.json: format: 'llcprobe-map' is not llcprobe-fit" "$tmp/e" \
  && ok "foreign --fit file" || bad "foreign --fit: exit $rc: $(cat "$tmp/e")"
"$python" -c "import json,sys; d=json.load(open(sys.argv[1])); d['selection']['units'][3]['unit']=99999; json.dump(d,open(sys.argv[2],'w'))" \
  "$tmp/g.fit.json" "$tmp/bad.fit.json"
"$bin" sample "${sim[@]}" --fit "$tmp/bad.fit.json" -o "$tmp/x" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -qF "$tmp/bad.fit.json: selection.units[3].unit: 99999 is outside" "$tmp/e" \
  && ok "bad unit in --fit file" || bad "bad unit: exit $rc: $(cat "$tmp/e")"
# Damaged --fit files, --sets files: one line naming the file and the field (or line).
bad_input() { # NAME EXPECTED-SUBSTRING SAMPLE-ARGS...
  local name=$1 want=$2; shift 2
  "$bin" sample "${sim[@]}" "$@" --intervals 1 -o "$tmp/x" >/dev/null 2>"$tmp/e"; local rc=$?
  if [ $rc = 1 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -qF -- "$want" "$tmp/e"; then ok "$name"
  else bad "$name: exit $rc, stderr: $(cat "$tmp/e")"; fi
}
fitmut() { # OUT PYTHON-STATEMENTS over d
  "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); $2; json.dump(d,open(sys.argv[3],'w'))" "$tmp/g.fit.json" "$2" "$1"
}
fitmut "$tmp/pi.json" 'd["selection"]["strata"]["pi"][0]+=0.5'
bad_input "stratum weight not members / usable" "$tmp/pi.json: selection.strata.pi: entry 0 is not members / usable sets" --fit "$tmp/pi.json"
fitmut "$tmp/mem.json" 'd["selection"]["strata"]["members"][1]=-3'
bad_input "negative stratum members" "$tmp/mem.json: selection.strata.members: entry 1 is not a whole number" --fit "$tmp/mem.json"
fitmut "$tmp/up.json" 'd["selection"]["strata"]["upper"][0]=None'
bad_input "open boundary before the last stratum" "$tmp/up.json: selection.strata.upper: entry 0 is not between" --fit "$tmp/up.json"
fitmut "$tmp/sd.json" 'd["selection"]["sigma"]=-1'
bad_input "negative sigma" "$tmp/sd.json: selection.sigma: -1 is not a number in [0, inf)" --fit "$tmp/sd.json"
fitmut "$tmp/seed.json" 'd["selection"]["seed"]=7'
bad_input "seed not a hex string" "$tmp/seed.json: selection.seed: not a string" --fit "$tmp/seed.json"
head -c 500 "$tmp/g.fit.json" >"$tmp/cut.json"
bad_input "truncated --fit file" "$tmp/cut.json: line" --fit "$tmp/cut.json"
bad_input "a fit file given to --sets" "$tmp/g.fit.json: JSON, not a list of set ids (a fit file goes with --fit)" --sets "$tmp/g.fit.json"
printf '5\n7 x9\n' >"$tmp/badsets.txt"
bad_input "bad --sets line" "$tmp/badsets.txt: line 2: '7,x9' is not a list of set ids" --sets "$tmp/badsets.txt"
printf '0-3000000\n0-3000000\n' >"$tmp/manysets.txt"
bad_input "--sets file naming too many sets" "$tmp/manysets.txt: line 2: more than 4194304 sets in the file" --sets "$tmp/manysets.txt"
printf '# nothing\n\n' >"$tmp/nosets.txt"
bad_input "--sets file without sets" "$tmp/nosets.txt: no sets in the file" --sets "$tmp/nosets.txt"
"$bin" sample --backend sim --preset amd32 --workload uniform:size=1M --fit "$tmp/g.fit.json" -o "$tmp/x" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc = 1 ] && grep -qF "llc.sets: the fit is for 8192 sets, this LLC has 32768" "$tmp/e" \
  && ok "fit from another LLC refused" || bad "other LLC: exit $rc: $(cat "$tmp/e")"
exit $fail
