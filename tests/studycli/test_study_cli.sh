#!/usr/bin/env bash
# llcprobe study end to end on synthetic profiles (tests/predictcli's
# gen_profile): the files and their header, the best / median / worst
# co-schedules against a brute force over groups.csv for every metric
# (exhaustive path), branch and bound against dynamic programming (16
# programs in pairs: 2,027,025 co-schedules), a remainder group, and bad
# input: fewer programs than K, a damaged profile, another machine, a
# duplicate, usage errors.
. "$(dirname "$0")/../cli_lib.sh"
gen=${LLCPROBE_GEN_PROFILE:?LLCPROBE_GEN_PROFILE names tests/predictcli/gen_profile}
here=$(cd "$(dirname "$0")" && pwd)

mkdir -p "$tmp/p6" "$tmp/p16"
ok_gen=0
for i in 1 2 3 4 5 6; do
  "$gen" "$tmp/p6/prog$i.profile.json" "prog$i" intel8 2 "$((10 + i))" || ok_gen=1
done
for i in $(seq 1 16); do
  "$gen" "$tmp/p16/q$i.profile.json" "q$i" intel8 1 "$((100 + i))" windows=1 || ok_gen=1
done
check_rc "synthetic profiles written" 0 $ok_gen

# close A B: |A - B| <= 1e-6 |B|
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(d <= 1e-6 * m + 1e-12) }'; }
# field FILE NAME: the number after "NAME " in FILE
field() { awk -v n="$2" '$1 == n { print $2 }' "$1"; }
# jval FILE EXPR
jval() { "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); print(repr($2))" "$1"; }

# --- 6 programs in pairs: every metric against the brute force ---------------
for metric in throughput worst fairness misses; do
  out=$tmp/s6_$metric
  "$bin" study --cores 2 --metric "$metric" --profiles "$tmp/p6" -o "$out" >"$out.stdout" 2>"$out.stderr"
  check_rc "study K=2 --metric $metric" 0 $?
  "$python" "$here/brute.py" "$out/groups.csv" "$metric" 2 >"$out.brute"
  for what in best median worst; do
    want=$(field "$out.brute" "$what")
    case $what in
      best) got=$(jval "$out/study.json" 'd["ranked"][0]["value"]') ;;
      *) got=$(jval "$out/study.json" "d[\"$what\"][\"value\"]") ;;
    esac
    check "$metric: $what = brute force ($got vs $want)" 'close "$got" "$want"'
  done
done
out=$tmp/s6_throughput
jcheck "study.json header and counts" "$out/study.json" \
  'd["format"]=="llcprobe-study" and d["version"]==1 and d["programs_n"]==6 and d["cores"]==2 and d["groups_n"]==15 and d["search"]["method"]=="exhaustive" and d["search"]["co_schedules"]==15 and d["search"]["best_exact"]'
jcheck "pairwise heatmap 6 x 6, diagonal empty, slowdowns >= 1" "$out/study.json" \
  'len(d["pairwise_slowdown"])==6 and all(len(r)==6 for r in d["pairwise_slowdown"]) and all((v is None)==(i==j) for i,r in enumerate(d["pairwise_slowdown"]) for j,v in enumerate(r)) and all(v>=1 for r in d["pairwise_slowdown"] for v in r if v is not None)'
jcheck "best co-schedule: 3 groups of 2, every program once" "$out/study.json" \
  'len(d["ranked"][0]["groups"])==3 and sorted(p["name"] for g in d["ranked"][0]["groups"] for p in g["programs"])==["prog%d"%i for i in range(1,7)]'
jcheck "ranked values in order, worst >= 0% from best" "$out/study.json" \
  'all(a["value"]>=b["value"] for a,b in zip(d["ranked"],d["ranked"][1:])) and d["worst_vs_best_pct"]>=0 and d["median_vs_best_pct"]>=0'
"$python" - "$out/study.json" "$out/groups.csv" <<'PY' && ok "pairwise heatmap = the pairs' slowdowns in groups.csv" || bad "heatmap vs groups.csv"
import csv, json, sys
d = json.load(open(sys.argv[1])); names = [p["name"] for p in d["programs"]]
g = {}
for r in csv.DictReader(open(sys.argv[2])):
    g.setdefault(r["group"], []).append((r["program"], float(r["slowdown"])))
for mem in g.values():
    (a, sa), (b, sb) = mem
    i, j = names.index(a), names.index(b)
    assert abs(d["pairwise_slowdown"][i][j] - sa) <= 1e-6 * sa and abs(d["pairwise_slowdown"][j][i] - sb) <= 1e-6 * sb
PY
check "coschedules.csv: best, median, worst rows" 'grep -q "^best," "$out/coschedules.csv" && grep -q "^median," "$out/coschedules.csv" && grep -q "^worst," "$out/coschedules.csv"'
check "timeline.csv: occupancy over time of all 6 programs" '[ "$(tail -n +2 "$out/timeline.csv" | cut -d, -f2 | sort -u | wc -l)" = 6 ]'
check "report.html written, no network resources" 'grep -q "<svg id=\"heatmap\"" "$out/report.html" && ! grep -Eo "(src|href)=\"[a-z]+:" "$out/report.html" | grep -q .'
check "report.html: 36 heatmap cells" '[ "$(grep -o "class=\"cell\"" "$out/report.html" | wc -l)" = 36 ]'
check "stdout: best, median, worst" 'grep -q "^best " "$out.stdout" && grep -q "^median " "$out.stdout" && grep -q "^worst " "$out.stdout"'

# --- 7 programs in threes: a remainder group of one ---------------------------
mkdir "$tmp/p7"
cp "$tmp"/p6/*.profile.json "$tmp/p7/"
"$gen" "$tmp/p7/prog7.profile.json" prog7 intel8 3 17
"$bin" study -k 3 --profiles "$tmp/p7" -o "$tmp/s7" -q >/dev/null
check_rc "study K=3 of 7" 0 $?
"$python" "$here/brute.py" "$tmp/s7/groups.csv" throughput 3 >"$tmp/s7.brute"
jcheck "7 in threes: 35 + 7 groups, 70 co-schedules" "$tmp/s7/study.json" \
  'd["groups_n"]==42 and d["search"]["co_schedules"]==70 and sorted(len(g["programs"]) for g in d["ranked"][0]["groups"])==[1,3,3]'
check "7 in threes: count and best = brute force" \
  '[ "$(field "$tmp/s7.brute" count)" = 70 ] && close "$(jval "$tmp/s7/study.json" "d[\"ranked\"][0][\"value\"]")" "$(field "$tmp/s7.brute" best)"'

# --- 16 programs in pairs: branch and bound against dynamic programming -------
for metric in throughput worst misses; do
  "$bin" study -k 2 --metric "$metric" --profiles "$tmp/p16" -o "$tmp/s16$metric" -q >/dev/null
  check_rc "study 16 in pairs, $metric" 0 $?
  "$python" "$here/brute.py" "$tmp/s16$metric/groups.csv" "$metric" 2 --dp >"$tmp/s16$metric.dp"
  jcheck "16 in pairs ($metric): branch and bound, proven" "$tmp/s16$metric/study.json" \
    'd["search"]["method"]=="branch-and-bound" and d["search"]["best_exact"] and d["search"]["worst_exact"] and d["search"]["optimality_gap_pct"]==0 and d["search"]["median_sampled"]'
  for what in best worst; do
    want=$(field "$tmp/s16$metric.dp" "$what")
    case $what in best) e='d["ranked"][0]["value"]' ;; *) e='d["worst"]["value"]' ;; esac
    got=$(jval "$tmp/s16$metric/study.json" "$e")
    check "16 in pairs ($metric): $what = dynamic programming ($got vs $want)" 'close "$got" "$want"'
  done
done
# A tiny node budget: the search stops, says so, and bounds the gap.
"$bin" study -k 2 --profiles "$tmp/p16" -o "$tmp/s16b" --budget 1000 -q >/dev/null
check_rc "study with --budget 1000" 0 $?
jcheck "budget ran out: not proven, gap = |value - bound| / value" "$tmp/s16b/study.json" \
  'not d["search"]["best_exact"] and d["search"]["best_bound"]>=d["ranked"][0]["value"] and abs(d["search"]["optimality_gap_pct"]-100*(d["search"]["best_bound"]-d["ranked"][0]["value"])/d["ranked"][0]["value"])<1e-9'

# --- phase runs shorter than T*: whole-program co-runners, --phase-local -------
mkdir -p "$tmp/pw"
for i in 1 2 3 4; do
  "$gen" "$tmp/pw/w$i.profile.json" "w$i" intel8 3 "$((20 + i))" window=300000 windows=1 || ok_gen=1
done
"$bin" study --cores 2 --profiles "$tmp/pw" -o "$tmp/sw" -q >/dev/null &&
  "$bin" study --cores 2 --profiles "$tmp/pw" --phase-local -o "$tmp/sl" -q >/dev/null
check_rc "study with and without --phase-local" 0 $?
"$python" - "$tmp/sw/study.json" "$tmp/sl/study.json" <<'PY' && ok "whole-program co-runners counted; --phase-local says so and moves the figures" || bad "study --phase-local"
import json, re, sys
w, l = (json.load(open(f)) for f in sys.argv[1:3])
m = [re.match(r"(\d+) of (\d+) groups: where T\* spans", a) for a in w["assumptions"]]
m = [x for x in m if x]
assert m and int(m[0].group(1)) > 0, w["assumptions"]
assert any(a.startswith("--phase-local") for a in l["assumptions"]), l["assumptions"]
assert not any("groups: where T* spans" in a for a in l["assumptions"])
assert w["pairwise_slowdown"] != l["pairwise_slowdown"]
PY

# --- bad input ----------------------------------------------------------------
mkdir "$tmp/two"
cp "$tmp/p6/prog1.profile.json" "$tmp/p6/prog2.profile.json" "$tmp/two/"
"$bin" study -k 3 --profiles "$tmp/two" -o "$tmp/sx" 2>"$tmp/err"
check_rc "fewer programs than K: exit 1" 1 $?
check "fewer programs than K: one line" '[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "2 readable profiles, fewer than --cores 3" "$tmp/err"'

mkdir "$tmp/dmg"
cp "$tmp"/p6/prog[1-4].profile.json "$tmp/dmg/"
echo '{"format": "llcprobe-profile", "version": 1}' >"$tmp/dmg/broken.profile.json"
"$bin" study -k 2 --profiles "$tmp/dmg" -o "$tmp/sd" >"$tmp/sd.out" 2>"$tmp/err"
check_rc "a damaged profile: the study goes on" 0 $?
check "the damaged profile is named on stderr" 'grep -q "left out: .*broken.profile.json" "$tmp/err"'
jcheck "the damaged profile is reported in study.json" "$tmp/sd/study.json" \
  'd["programs_n"]==4 and len(d["failed"])==1 and "broken.profile.json" in d["failed"][0]'

mkdir "$tmp/mix"
cp "$tmp"/p6/prog[1-3].profile.json "$tmp/mix/"
"$gen" "$tmp/mix/other.profile.json" other amd32 2 50
"$bin" study -k 2 --profiles "$tmp/mix" -o "$tmp/sm" 2>"$tmp/err"
check_rc "profiles from another machine: exit 1" 1 $?
check "another machine: one line naming the file" '[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "machine: preset .*other.profile.json (--force" "$tmp/err"'
"$bin" study -k 2 --profiles "$tmp/mix" -o "$tmp/sm" --force -q >/dev/null
check_rc "another machine with --force" 0 $?
jcheck "--force is recorded" "$tmp/sm/study.json" 'any(a.startswith("forced: ") for a in d["assumptions"])'

mkdir "$tmp/dup"
cp "$tmp"/p6/prog[1-3].profile.json "$tmp/dup/"
cp "$tmp/p6/prog1.profile.json" "$tmp/dup/prog1-again.profile.json"
"$bin" study -k 2 --profiles "$tmp/dup" -o "$tmp/su" >/dev/null 2>"$tmp/err"
check_rc "a duplicate program" 0 $?
check "the duplicate is named and warned about" 'grep -q "given more than once.*prog1#2" "$tmp/err"'
jcheck "the duplicate is a second instance" "$tmp/su/study.json" \
  'sorted(p["name"] for p in d["programs"])==["prog1","prog1#2","prog2","prog3"]'

# --- merge ---------------------------------------------------------------------
mkdir "$tmp/m" "$tmp/m/a" "$tmp/m/b"
cp "$tmp"/p6/prog[1-3].profile.* "$tmp/m/a/" && cp "$tmp"/p6/prog[3-6].profile.* "$tmp/m/b/"
"$bin" merge -o "$tmp/m/all" "$tmp/m/a" "$tmp/m/b" >"$tmp/m.out"
check_rc "merge two directories" 0 $?
check "merge: 6 copied (with their CSVs), 1 already there" 'grep -q "6 profiles copied into .*, 1 already there" "$tmp/m.out" && [ "$(ls "$tmp/m/all" | wc -l)" = 12 ]'
check "merged profiles are byte-identical" 'cmp -s "$tmp/p6/prog4.profile.json" "$tmp/m/all/prog4.profile.json"'
"$bin" merge -o "$tmp/m/all2" "$tmp/m/a" "$tmp/mix" 2>"$tmp/err"
check_rc "merge: another machine refused" 1 $?
check "merge: refused before anything is copied" '[ ! -e "$tmp/m/all2" ] || [ -z "$(ls "$tmp/m/all2")" ]'
mkdir "$tmp/m/c" && cp "$tmp/p6/prog1.profile.json" "$tmp/m/c/prog2.profile.json"
"$bin" merge -o "$tmp/m/all" "$tmp/m/c" 2>"$tmp/err"
check_rc "merge: a name with other content refused" 1 $?
check "merge: the conflict is named" 'grep -q "prog2.profile.json: already there with other content" "$tmp/err"'
"$bin" merge -o "$tmp/m/all3" "$tmp/m/a" "$tmp/mix" --force -q
check_rc "merge --force" 0 $?

"$bin" study -k 2 -o "$tmp/x" 2>/dev/null
check_rc "usage: no --profiles" 2 $?
"$bin" study -k 1 --profiles "$tmp/p6" -o "$tmp/x" 2>/dev/null
check_rc "usage: --cores 1" 2 $?
"$bin" study -k 2 --metric speed --profiles "$tmp/p6" -o "$tmp/x" 2>/dev/null
check_rc "usage: unknown metric" 2 $?
"$bin" study -k 2 --profiles "$tmp/nowhere" -o "$tmp/x" 2>"$tmp/err"
check_rc "missing profile directory: exit 1" 1 $?
exit $fail
