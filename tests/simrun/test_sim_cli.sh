#!/usr/bin/env bash
# llcprobe sim end to end: outputs exist, the JSON parses and is consistent
# (per-set sums equal the totals, the CSV agrees), equal seeds give equal
# files, and a trace of a real program (lackey) replays, when valgrind is
# there.
. "$(dirname "$0")/../cli_lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 needed to read the JSON"; exit 77; }

# Checks one output pair: format, totals against per-set sums, occupancy
# within the ways, CSV against JSON, time series against the interval.
check_outputs() { # JSON CSV
  "$python" - "$1" "$2" <<'PY'
import csv, json, sys
doc = json.load(open(sys.argv[1]))
errors = []
def need(cond, what):
    if not cond:
        errors.append(what)
need(doc["format"] == "llcprobe-sim" and doc["version"] == 1, "format/version")
cfg = doc["config"]
sets, ways = cfg["llc"]["sets"], cfg["llc"]["ways"]
need(sets == cfg["llc"]["slices"] * cfg["llc"]["sets_per_slice"], "sets = slices x sets_per_slice")
agents, per_set = doc["agents"], doc["per_set"]
need(len(agents) == len(per_set), "one per_set entry per agent")
occ_total = [0] * sets
for a, p in zip(agents, per_set):
    t = p["agent"]
    need(p["agent"] == a["name"], t + ": per_set order")
    tot = a["totals"]
    for f in ("accesses", "hits", "misses", "occupancy"):
        need(len(p[f]) == sets, f"{t}: {f} has {len(p[f])} entries")
    need(sum(p["hits"]) == tot["llc_hits"], t + ": sum of hits")
    need(sum(p["misses"]) == tot["llc_misses"], t + ": sum of misses")
    need(sum(p["accesses"]) == tot["llc_accesses"], t + ": sum of accesses")
    need(tot["llc_accesses"] == tot["llc_hits"] + tot["llc_misses"], t + ": lookups")
    need(all(x == h + m for x, h, m in zip(p["accesses"], p["hits"], p["misses"])), t + ": per set")
    need(sum(p["occupancy"]) == tot["llc_occupancy_lines"], t + ": sum of occupancy")
    need(tot["llc_occupancy_bytes"] == 64 * tot["llc_occupancy_lines"], t + ": bytes")
    need(tot["llc_accesses"] <= tot["accesses"], t + ": lookups <= accesses")
    if cfg["l2"]:
        need(tot["l2_hits"] + tot["l2_misses"] == tot["accesses"], t + ": L2 lookups")
    for i, o in enumerate(p["occupancy"]):
        occ_total[i] += o
need(max(occ_total) <= ways, "occupancy of a set above the ways")
target = [a for a in agents if a["role"] == "target"]
need(len(target) == 1 and target[0]["totals"]["accesses"] == doc["run"]["target_accesses"],
     "target accesses")
need(sum(a["totals"]["accesses"] for a in agents) == doc["run"]["total_accesses"], "total")
rows = list(csv.reader(open(sys.argv[2])))
need(len(rows) == sets + 1, "CSV rows")
head = rows[0]
need(head[:3] == ["set", "slice", "index"], "CSV header")
for a, p in zip(agents, per_set):
    for f in ("accesses", "hits", "misses", "occupancy"):
        col = head.index(f'{a["name"]}_{f}')
        need([int(r[col]) for r in rows[1:]] == p[f], f'CSV {a["name"]}_{f}')
spp = cfg["llc"]["sets_per_slice"]
need(all(int(r[1]) == int(r[0]) // spp and int(r[2]) == int(r[0]) % spp for r in rows[1:]),
     "CSV slice/index")
ts = doc.get("time_series")
if cfg["interval"]:
    frames = ts["frames"]
    n = doc["run"]["target_accesses"] // cfg["interval"]
    need(len(frames) == n, f"{len(frames)} frames, expected {n}")
    need([f["target_accesses"] for f in frames] == [cfg["interval"] * (i + 1) for i in range(n)],
         "frame times")
    last = frames[-1]["agents"][0]
    if frames[-1]["target_accesses"] == doc["run"]["target_accesses"]:
        need(last["occupancy"] == per_set[0]["occupancy"], "last frame = final state")
for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
PY
}

run_sim() { # NAME ARGS...
  local name=$1; shift
  "$bin" sim "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"; local rc=$?
  if [ $rc != 0 ]; then bad "$name: exit $rc: $(cat "$tmp/$name.err")"; return 1; fi
  [ -s "$tmp/$name.err" ] && bad "$name: stderr not empty (no TTY): $(cat "$tmp/$name.err")"
  return 0
}

# Workload + two noise agents, time series, intel8 (inclusive, L2).
if run_sim a --preset intel8 --workload zipf:size=16M,alpha=0.99 --noise uniform:size=32M \
     --noise gaussian:size=8M,cv=0.3 --noise-rate 0.5 --duration 300000 --interval 100000 \
     --seed 7 -o "$tmp/a.json"; then
  [ -s "$tmp/a.json" ] && [ -s "$tmp/a.csv" ] && ok "outputs written" || bad "outputs missing"
  check_outputs "$tmp/a.json" "$tmp/a.csv" && ok "intel8 outputs consistent" || bad "intel8 outputs"
  grep -q "^target .* 300000 " "$tmp/a.out" && grep -q "^noise1 " "$tmp/a.out" &&
    grep -q "accesses/s" "$tmp/a.out" && ok "summary" || bad "summary: $(cat "$tmp/a.out")"
  ls "$tmp" | grep -q tmp && bad "temporary files left behind"
fi

# Same seed, identical files; another seed, different ones.
if run_sim b --preset intel8 --workload zipf:size=16M,alpha=0.99 --noise uniform:size=32M \
     --noise gaussian:size=8M,cv=0.3 --noise-rate 0.5 --duration 300000 --interval 100000 \
     --seed 7 -o "$tmp/b.json"; then
  cmp -s "$tmp/a.json" "$tmp/b.json" && cmp -s "$tmp/a.csv" "$tmp/b.csv" &&
    ok "same seed, same output" || bad "same seed, different output"
fi
if run_sim c --preset intel8 --workload zipf:size=16M,alpha=0.99 --noise uniform:size=32M \
     --noise gaussian:size=8M,cv=0.3 --noise-rate 0.5 --duration 300000 --interval 100000 \
     --seed 8 -o "$tmp/c.json"; then
  cmp -s "$tmp/a.csv" "$tmp/c.csv" && bad "another seed, same output" || ok "seed matters"
fi

# amd32 victim L3, other policies, no L2, 2 MiB pages.
n=0
for args in "--policy drrip" "--policy srrip --inclusion nine" "--no-l2 --inclusion nine --policy plru --page-size 2M" \
            "--inclusion victim --policy random"; do
  name=p$((++n))
  # shellcheck disable=SC2086
  if run_sim $name --preset amd32 $args --workload phased:stream:size=64M@50000\;uniform:size=4M@50000 \
       --noise hotsets:size=16M,frac=0.2,weight=0.8 --duration 200000 --quiet -o "$tmp/$name.json"; then
    check_outputs "$tmp/$name.json" "$tmp/$name.csv" && ok "amd32 $args" || bad "amd32 $args"
  fi
done
"$python" -c "
import json,sys; d=json.load(open('$tmp/p1.json'))
sys.exit(0 if d['config']['llc']['policy']=='drrip' and d['config']['inclusion']=='exclusive' else 1)" &&
  ok "config recorded" || bad "config not recorded"
"$python" -c "
import json,sys; d=json.load(open('$tmp/p3.json'))
sys.exit(0 if d['config']['l2'] is None and d['config']['page_size']==2097152 else 1)" &&
  ok "--no-l2 / --page-size recorded" || bad "--no-l2 / --page-size not recorded"

"$bin" sim --list-workloads | grep -q "gaussian:size=S,cv=C" && ok "--list-workloads" || bad "--list-workloads"
"$bin" sim --help | grep -q "intel8" && "$bin" sim --help | grep -q "drrip" &&
  "$bin" sim --help | grep -q "hotsets:" && ok "--help lists presets, policies, specs" || bad "--help"

# A real program's lackey trace replays through the simulator.
if command -v valgrind >/dev/null && cc=$(command -v cc || command -v gcc); then
  cat >"$tmp/prog.c" <<'C'
#include <stdlib.h>
static volatile long a[1 << 16];
int main(void)
{
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < (1 << 16); i += 3)
            a[i] += a[(i * 7) & 0xffff];
    return 0;
}
C
  if "$cc" -O1 -o "$tmp/prog" "$tmp/prog.c" && "$bin" trace -q -o "$tmp/p.trace" -- "$tmp/prog" \
       >"$tmp/rec.out" 2>"$tmp/rec.err"; then
    if run_sim t --preset intel8 --trace "$tmp/p.trace" --noise uniform:size=8M -o "$tmp/t.json"; then
      check_outputs "$tmp/t.json" "$tmp/t.csv" && ok "trace outputs consistent" || bad "trace outputs"
      "$python" - "$tmp/t.json" "$tmp/rec.out" <<'PY' && ok "trace replayed whole" || bad "trace replay counts"
import json, re, sys
d = json.load(open(sys.argv[1]))
rec = dict(re.findall(r"^(\w+): (\d+)", open(sys.argv[2]).read(), re.M))
t = d["agents"][0]["totals"]
data = int(rec["loads"]) + int(rec["stores"]) + int(rec["modifies"])
# every data record is an access (two if it straddles a line), instructions none
ok = (t["instructions"] == int(rec["instructions"]) and data <= t["accesses"] <= 1.01 * data
      and t["writes"] >= int(rec["stores"]) + int(rec["modifies"]) and not d["run"]["ended_early"])
sys.exit(0 if ok else 1)
PY
    fi
  else
    echo "note: could not record a trace: $(cat "$tmp/rec.err")"
  fi
else
  echo "note: no valgrind or C compiler: trace replay not tested here"
fi

# A packaged real program (xz -1 from Debian's xz-utils) too: traced under
# lackey and replayed whole, with its exit status recorded.
if command -v valgrind >/dev/null && command -v xz >/dev/null; then
  "$python" -c "
import random
r = random.Random(7); words = [''.join(r.choice('abcdefgh') for _ in range(r.randint(2, 9))) for _ in range(300)]
open('$tmp/in.txt', 'w').write(' '.join(r.choice(words) for _ in range(3000)))"
  if "$bin" trace -o "$tmp/xz.trace" -- xz -1 -k -f "$tmp/in.txt" >"$tmp/xz.out" 2>"$tmp/xz.err" &&
     [ -s "$tmp/in.txt.xz" ]; then
    run_sim xzsim --preset amd32 --trace "$tmp/xz.trace" -o "$tmp/xz.json" &&
      "$python" - "$tmp/xz.json" "$tmp/xz.out" <<'PY' && ok "xz -1 trace replayed whole" || bad "xz trace replay"
import json, re, sys
d = json.load(open(sys.argv[1]))
rec = dict(re.findall(r"^(\w+): (\d+)", open(sys.argv[2], errors="replace").read(), re.M))
t = d["agents"][0]["totals"]
data = int(rec["loads"]) + int(rec["stores"]) + int(rec["modifies"])
sys.exit(0 if data > 100000 and data <= t["accesses"] <= 1.01 * data and not d["run"]["ended_early"] else 1)
PY
  else
    bad "xz trace: $(cat "$tmp/xz.err")"
  fi
else
  echo "note: no valgrind or xz: packaged-program trace not tested here"
fi
exit $fail
