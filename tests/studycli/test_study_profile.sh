#!/usr/bin/env bash
# llcprobe study with programs to profile (after --, split by ';;'): each is
# profiled by `llcprobe profile` (simulator workloads here, so the test
# needs no valgrind), a failed profiling is reported with its log and the
# study goes on, the same program twice is profiled once, a rerun reuses
# every profile, and SIGINT keeps the finished profiles for the rerun.
. "$(dirname "$0")/../cli_lib.sh"
cd "$tmp" || exit 1
S=(--backend sim --preset intel8 --instructions 1e6)
items=("${S[@]}" --workload uniform:size=2M ';;' "${S[@]}" --workload zipf:size=16M,alpha=1 ';;'
       "${S[@]}" --workload stream:size=64M ';;' "${S[@]}" --workload bogus:size=1M ';;'
       "${S[@]}" --workload uniform:size=2M)

"$bin" study -k 2 -j 2 -o s -- "${items[@]}" >out 2>err
check_rc "study of 5 items, one failing" 0 $?
check "the failure is named with its log" 'grep -q "study: bogus: profiling failed (exit [12]); log s/profiles/bogus-[0-9a-f]*\.log" err'
check "its log says why" 'grep -q "bogus" s/profiles/bogus-*.log'
jcheck "4 programs studied (the duplicate as a second instance), the failure in study.json" s/study.json \
  'd["programs_n"]==4 and sorted(p["name"] for p in d["programs"])==["stream","uniform","uniform#2","zipf"] and len(d["failed"])==1 and "bogus" in d["failed"][0]'
check "the same program twice was profiled once" '[ "$(ls s/profiles/uniform-*.profile.json | wc -l)" = 1 ]'
check "profiles and logs in s/profiles" '[ "$(ls s/profiles/*.profile.json | wc -l)" = 3 ] && [ "$(ls s/profiles/*.log | wc -l)" = 4 ]'

"$bin" study -k 2 -o s -- "${items[@]}" >out2 2>err2
check_rc "rerun" 0 $?
check "rerun reuses the 3 profiles" 'grep -q "3 of 5 profiles reused" err2'
check "rerun: the same best co-schedule" 'diff <(grep "^best" out) <(grep "^best" out2) >/dev/null'

# Per-stratum reuse, as predict uses it: the sim profiles carry strata
# (zipf's sets are used unevenly), the study solves those phases per
# stratum and says so; --no-strata does not, and the figures move.
"$bin" study -k 2 --profiles s/profiles -o st -q >/dev/null && "$bin" study -k 2 --profiles s/profiles \
  --no-strata -o ns -q >/dev/null
check_rc "study of the profiles, with and without --no-strata" 0 $?
"$python" - st/study.json ns/study.json s/profiles <<'PY' && ok "strata used and reported; --no-strata moves the figures" || bad "strata in study"
import glob, json, re, sys
st, ns = (json.load(open(f)) for f in sys.argv[1:3])
n = sum(len([q for q in json.load(open(f))["phases"] if q.get("strata")])
        for f in glob.glob(sys.argv[3] + "/*.profile.json"))
def used(d):
    m = [re.match(r"(\d+) of \d+ phases solved per stratum", a) for a in d["assumptions"]]
    return [int(x.group(1)) for x in m if x]
assert n > 0 and used(st) == [n] and used(ns) == [0], (n, used(st), used(ns))
assert st["pairwise_slowdown"] != ns["pairwise_slowdown"]
PY

# SIGINT: one quick program, then slower ones one at a time (without the
# probe readings, which would replay each long run twice more). Slow means
# seconds of wall time: the sanitizer build simulates about 5x slower, so
# it runs a fifth of the instructions for the same time to interrupt.
slow_instr=6e7
[ "${LLCPROBE_SANITIZED:-0}" = 1 ] && slow_instr=1.2e7
B=(--backend sim --preset intel8 --instructions $slow_instr --no-probe)
slow=("${S[@]}" --workload uniform:size=1M ';;' "${B[@]}" --workload uniform:size=3M ';;'
      "${B[@]}" --workload zipf:size=8M,alpha=1 ';;' "${B[@]}" --workload stream:size=32M)
"$bin" study -k 2 -j 1 -o i -- "${slow[@]}" >/dev/null 2>ierr &
pid=$!
for _ in $(seq 600); do
  ls i/profiles/uniform-*.profile.json >/dev/null 2>&1 && [ "$(ls i/profiles/*.log 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"
check_rc "SIGINT: exit 130" 130 $?
check "SIGINT: one line saying what was kept" 'grep -q "interrupted: 1 of 4 profiles finished and kept in i/profiles" ierr'
check "SIGINT: no temporary left behind" '[ -z "$(ls i/profiles | grep -vE "\.(profile\.json|profile\.csv|log)$")" ]'
check "SIGINT: no study written" '[ ! -e i/study.json ]'
"$bin" study -k 2 -j 2 -o i -- "${slow[@]}" >/dev/null 2>ierr2
check_rc "rerun after SIGINT" 0 $?
check "the rerun continues from the kept profile" 'grep -q "1 of 4 profiles reused" ierr2'
jcheck "the rerun studies all 4" i/study.json 'd["programs_n"]==4 and not d["failed"]'

"$bin" study -k 2 -o x -- a ';;' ';;' b 2>err
check_rc "an empty item between ;;" 1 $?
"$bin" study -k 2 -o x -- /nonexistent/prog ';;' /nonexistent/other 2>err
check_rc "programs that do not exist: fewer than K left" 1 $?
check "named on stderr" 'grep -q "/nonexistent/prog: not found" err'
exit $fail
