#!/usr/bin/env bash
# llcprobe fit end to end on a simulator map, and its input errors.
. "$(dirname "$0")/../cli_lib.sh"

"$bin" map --backend sim --preset intel8 --workload gaussian:size=16M,cv=0.3 --rate 1e8 -o "$tmp/g" -q >/dev/null 2>&1
check_rc "map for the fit" 0 $?
"$bin" fit "$tmp/g.map.json" >"$tmp/fit.out" 2>"$tmp/fit.err"
check_rc "fit" 0 $?
jcheck "fit json header and families" "$tmp/g.fit.json" \
  'd["format"]=="llcprobe-fit" and d["version"]==1 and len(d["families"])==7 and d["families"][0]["family"]=="gaussian" and d["statistic"]=="misses"'
# The Gaussian's parameters are the sample mean and N-1 sd of the map, recomputed here.
"$python" - "$tmp/g.map.json" "$tmp/g.fit.json" <<'PY' && ok "gaussian mu and sigma match the map" || bad "gaussian parameters"
import json, sys, math
m = json.load(open(sys.argv[1])); f = json.load(open(sys.argv[2]))
masked = {e["set"] for e in (m.get("exclusion") or {}).get("sets", [])}
x = [v for u, v in enumerate(m["sets"]["misses"]) if u not in masked]; n = len(x); mu = sum(x) / n
sd = math.sqrt(sum((v - mu) ** 2 for v in x) / (n - 1))
g = f["families"][0]["params"]
sys.exit(0 if abs(g["mu"] - mu) < 1e-6 * mu and abs(g["sigma"] - sd) < 1e-6 * sd else 1)
PY
jcheck "25 distinct sets, 5 per key, strata weights sum to 1" "$tmp/g.fit.json" \
  'len(set(u["unit"] for u in d["selection"]["units"]))==25 and len(d["selection"]["keys"])==5 and all(sum(1 for u in d["selection"]["units"] if u["label"]==k["label"])==5 for k in d["selection"]["keys"]) and [k["label"] for k in d["selection"]["keys"]]==(["mu","mu-sigma","mu+sigma","start","end"] if d["selection"]["mode"]!="quantile" else ["median","q15.9","q84.1","q2.3","q97.7"]) and abs(sum(d["selection"]["strata"]["pi"])-1)<1e-9'
jcheck "selected profile values are the map's" "$tmp/g.fit.json" \
  'all(u["profile"]==json.load(open(sys.argv[1].replace(".fit.json",".map.json")))["sets"]["misses"][u["unit"]] for u in d["selection"]["units"])'
jcheck "dispersion verdict in words" "$tmp/g.fit.json" \
  'd["dispersion"]["verdict"]=="structured" and "sets differ" in d["dispersion"]["text"] and d["dispersion"]["retest_r"]>0.5'
grep -q "^gaussian        mu" "$tmp/fit.out" && grep -q "^verdict " "$tmp/fit.out" && grep -q "^best family" "$tmp/fit.out" \
  && ok "summary" || bad "summary: $(cat "$tmp/fit.out")"
for p in fit-hist fit-map; do
  [ "$(head -c 4 "$tmp/g.$p.png" | tail -c 3)" = "PNG" ] && ok "$p.png" || bad "$p.png missing or not a PNG"
done

# Options: fewer points and sets per point, other key modes; the same input gives the same sets.
"$bin" fit "$tmp/g.map.json" --points 3 --per-point 4 --mode range --no-plots -o "$tmp/r" -q
check_rc "fit --points 3 --per-point 4 --mode range" 0 $?
jcheck "12 sets, range keys" "$tmp/r.fit.json" \
  'len(d["selection"]["units"])==12 and d["selection"]["mode"]=="range" and len(d["selection"]["keys"])==3'
"$bin" fit "$tmp/g.map.json" --mode quantile --no-plots -o "$tmp/q1" -q && \
  "$bin" fit "$tmp/g.map.json" --mode quantile --no-plots -o "$tmp/q2" -q
"$python" -c "import json,sys; a,b=(json.load(open(f))['selection']['units'] for f in sys.argv[1:]); sys.exit(0 if a==b else 1)" \
  "$tmp/q1.fit.json" "$tmp/q2.fit.json" && ok "selection is deterministic" || bad "selection differs between runs"

# The map's exclusion mask (baseline sweep): its sets are left out of the
# histogram, the fit and the selection unless --include-excluded; the
# summary says how many. Here the 40 hottest sets are named, so leaving
# them out lowers the mean and the maximum.
"$python" - "$tmp/g.map.json" "$tmp/mask.map.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
hot = sorted(range(len(d["sets"]["misses"])), key=lambda u: -d["sets"]["misses"][u])[:40]
d["exclusion"] = {"sets": [{"set": u, "baseline": True, "leader": False} for u in hot] + [{"set": hot[0]}]}
json.dump(d, open(sys.argv[2], "w"))
PY
"$bin" fit "$tmp/mask.map.json" --no-plots -o "$tmp/mask" >"$tmp/mask.out" 2>&1
check_rc "fit with a mask" 0 $?
grep -q "^sets            8152 usable" "$tmp/mask.out" &&
  grep -q "^exclusion       40 sets of the map's mask (baseline or leader sets) left out" "$tmp/mask.out" &&
  ok "summary says 40 sets left out" || bad "mask summary: $(cat "$tmp/mask.out")"
"$python" - "$tmp/mask.map.json" "$tmp/mask.fit.json" <<'PY' && ok "masked sets out of the fit and the selection" || bad "mask ignored"
import json, sys
m = json.load(open(sys.argv[1])); f = json.load(open(sys.argv[2]))
masked = {e["set"] for e in m["exclusion"]["sets"]}
x = [v for u, v in enumerate(m["sets"]["misses"]) if u not in masked]
mu = sum(x) / len(x)
ok = abs(f["families"][0]["params"]["mu"] - mu) < 1e-9 * mu
ok &= not masked & {u["unit"] for u in f["selection"]["units"]}
sys.exit(0 if ok else 1)
PY
"$bin" fit "$tmp/mask.map.json" --include-excluded --no-plots -o "$tmp/keep" >"$tmp/keep.out" 2>&1
check_rc "fit --include-excluded" 0 $?
grep -q "^sets            8192 usable" "$tmp/keep.out" && grep -q "40 sets of the map's mask .* kept" "$tmp/keep.out" &&
  ok "--include-excluded keeps them" || bad "include: $(cat "$tmp/keep.out")"
jcheck "fit file records the mask, left out" "$tmp/mask.fit.json" 'd["exclusion"] == {"masked_sets": 40, "kept": False}'
jcheck "fit file records the mask, kept" "$tmp/keep.fit.json" 'd["exclusion"] == {"masked_sets": 40, "kept": True}'
jcheck "--include-excluded fits every set" "$tmp/keep.fit.json" \
  'abs(d["families"][0]["params"]["mu"]-sum(json.load(open(sys.argv[1].replace("keep.fit","mask.map")))["sets"]["misses"])/8192)<1e-6*d["families"][0]["params"]["mu"]'
"$python" -c "import json,sys; d=json.load(open(sys.argv[1])); d['exclusion']=None; json.dump(d,open(sys.argv[2],'w'))" \
  "$tmp/g.map.json" "$tmp/nomask.map.json"
"$bin" fit "$tmp/nomask.map.json" --no-plots -o "$tmp/nomask" >"$tmp/nomask.out" 2>&1
grep -q "^exclusion       none" "$tmp/nomask.out" && grep -q "^sets            8192 usable" "$tmp/nomask.out" &&
  ok "no mask, none left out" || bad "no mask: $(cat "$tmp/nomask.out")"
jcheck "fit file: no mask, none" "$tmp/nomask.fit.json" 'd["exclusion"] == {"masked_sets": 0, "kept": False}'

# Usage errors: exit 2.
"$bin" fit >/dev/null 2>&1; check_rc "no file" 2 $?
"$bin" fit "$tmp/g.map.json" --mode middle >/dev/null 2>&1; check_rc "bad --mode" 2 $?
"$bin" fit "$tmp/g.map.json" --points 6 >/dev/null 2>&1; check_rc "bad --points" 2 $?
"$bin" fit --help | grep -q "^usage: llcprobe fit" && ok "--help" || bad "--help"

# Bad input: exit 1 and exactly one line naming the file and the field.
one_line() { # NAME FILE EXPECTED-SUBSTRING
  "$bin" fit "$2" --no-plots -o "$tmp/x" >/dev/null 2>"$tmp/e"; local rc=$?
  if [ $rc = 1 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -qF -- "$3" "$tmp/e"; then ok "$1"
  else bad "$1: exit $rc, stderr: $(cat "$tmp/e")"; fi
}
mutate() { # OUT PYTHON-STATEMENTS over d
  "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); $2; json.dump(d,open(sys.argv[3],'w'))" \
    "$tmp/g.map.json" "$2" "$1"
}
one_line "missing file" "$tmp/none.json" "$tmp/none.json"
printf '{"format": "llcprobe-map", "version": 1,' >"$tmp/trunc.json"
one_line "truncated JSON" "$tmp/trunc.json" "$tmp/trunc.json: line"
one_line "foreign format (a fit file)" "$tmp/g.fit.json" "$tmp/g.fit.json: format: 'llcprobe-fit' is not llcprobe-map"
echo '{"name": "pkg", "version": "1.0", "dependencies": {}}' >"$tmp/pkg.json"
one_line "another tool's JSON" "$tmp/pkg.json" "$tmp/pkg.json: format: missing: not an llcprobe-map file"
echo '[1,2,3]' >"$tmp/arr.json"; one_line "not an object" "$tmp/arr.json" "$tmp/arr.json: not a JSON object"
mutate "$tmp/v2.json" 'd["version"]=2'; one_line "future version" "$tmp/v2.json" "$tmp/v2.json: version: 2 is not supported"
mutate "$tmp/nw.json" 'del d["llc"]["ways"]'; one_line "missing field" "$tmp/nw.json" "$tmp/nw.json: llc.ways: missing"
mutate "$tmp/sw.json" 'd["llc"]["ways"]="16"'; one_line "wrong type" "$tmp/sw.json" "$tmp/sw.json: llc.ways: not a whole number"
mutate "$tmp/len.json" 'd["sets"]["misses"].pop()'; one_line "short array" "$tmp/len.json" "$tmp/len.json: sets.misses: 8191 entries, expected 8192"
mutate "$tmp/neg.json" 'd["sets"]["misses"][7]=-1'; one_line "negative count" "$tmp/neg.json" "$tmp/neg.json: sets.misses: entry 7"
mutate "$tmp/huge.json" 'd["sets"]["misses"][3]=1e300'
one_line "count beyond 2^53" "$tmp/huge.json" "$tmp/huge.json: sets.misses: entry 3 (1e+300) is not a count"
mutate "$tmp/frac.json" 'd["sets"]["accesses"][2]=2.5'
one_line "fractional count" "$tmp/frac.json" "$tmp/frac.json: sets.accesses: entry 2 (2.5) is not a count"
mutate "$tmp/rate.json" 'd["probe"]["rate"]=-4e6'; one_line "negative rate" "$tmp/rate.json" "$tmp/rate.json: probe.rate: -4e+06 is not a positive number"
mutate "$tmp/geo.json" 'd["llc"]["sets"]=1000'; one_line "inconsistent geometry" "$tmp/geo.json" "$tmp/geo.json: llc.sets"
mutate "$tmp/sweep.json" 'd["sets"]["sweep_misses"][1]=d["sets"]["sweep_misses"][1][:10]'
one_line "short sweep" "$tmp/sweep.json" "$tmp/sweep.json: sets.sweep_misses[1]"
# Found by fuzzing: a header claiming 2^28 sets made the reader allocate for them before checking the arrays.
mutate "$tmp/big.json" 'd["llc"].update(sets_per_slice=1<<24, slices=16, sets=1<<28); d["sweeps"]=64'
one_line "geometry larger than the arrays" "$tmp/big.json" "$tmp/big.json: sets.measured: not an array of 268435456 booleans"
mutate "$tmp/zero.json" 'd["sets"]["misses"]=[0]*8192; d["sets"]["sweep_misses"]=[[0]*8192]*2'
one_line "no signal (mu = 0)" "$tmp/zero.json" "$tmp/zero.json:"
mutate "$tmp/xs.json" 'd["exclusion"]={"sets":[{"set":8192}]}'
one_line "excluded set out of range" "$tmp/xs.json" "$tmp/xs.json: exclusion.sets[0].set: not a set of this map (0..8191)"
mutate "$tmp/xa.json" 'd["exclusion"]={"sets":5}'
one_line "exclusion.sets not an array" "$tmp/xa.json" "$tmp/xa.json: exclusion.sets: missing or not an array"
exit $fail
