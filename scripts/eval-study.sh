#!/usr/bin/env bash
# Validation of `llcprobe study` in the timed simulator: 8 workloads (sizes
# from a quarter to 8x the LLC, uniform, zipf, streaming, phased), profiled
# alone with `llcprobe profile --backend sim`, studied with K = 2 and K = 4
# (metric: throughput, weighted speedup) on presets intel8 and amd32 (sizes
# scaled 4x on amd32), then EVERY co-schedule (105 for K = 2, 35 for K = 4)
# run for real: each distinct group once through `llcprobe sim --corun
# --restart` (each program on its own core and clock; a program that ends
# starts again until every program has ended once, so the cores stay busy
# as the study's model assumes), the co-schedule's simulated
# metric from its groups' simulated slowdowns.
# Prints per case the Kendall tau-b of predicted vs simulated metric over all
# co-schedules, the simulated metric of the predicted best against the
# simulated best (gap, %), and the simulated worst against the simulated
# best (what a bad choice costs). Headline lines are the worst case over the
# four cases (lowest tau, largest gap) and the largest worst-vs-best.
# Usage: scripts/eval-study.sh [BUILD_DIR]   (default build/; must be built)
# Environment: EVAL_STUDY_INSTRUCTIONS (1e7 per program), EVAL_STUDY_PRESETS
# ("intel8 amd32"), EVAL_STUDY_KS ("2 4"), EVAL_STUDY_RESTART (1; 0 runs
# the co-runs once: a program that ends first leaves the others alone, a
# case the study does not model, kept to show what that costs),
# EVAL_STUDY_ARGS (more options for llcprobe study, e.g. --stationary).
# Last lines: study_kendall_tau, study_best_gap_pct, study_worst_vs_best_pct
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
bin=$build/llcprobe
[ -x "$bin" ] || { echo "eval-study: $bin missing: build first" >&2; exit 1; }
ins=${EVAL_STUDY_INSTRUCTIONS:-1e7}
presets=${EVAL_STUDY_PRESETS:-intel8 amd32}
ks=${EVAL_STUDY_KS:-2 4}
study_args=${EVAL_STUDY_ARGS:-}
restart=--restart
[ "${EVAL_STUDY_RESTART:-1}" = 0 ] && restart=
echo "# co-runs: ${restart:-once, without --restart}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base=('uniform:size=1M' 'uniform:size=6M' 'zipf:size=16M,alpha=1' 'stream:size=64M'
      'zipf:size=4M,alpha=0.6' 'uniform:size=12M' 'zipf:size=32M,alpha=1.2'
      'phased:uniform:size=2M@2e6;zipf:size=24M,alpha=0.8@2e6')
# scale SPEC F: every size=NM and @ count left alone, sizes times F
scale() { echo "$1" | perl -pe "s/size=(\d+)M/'size='.(\$1*$2).'M'/ge"; }

for preset in $presets; do
  f=1
  [ "$preset" = amd32 ] && f=4
  mkdir -p "$tmp/$preset/prof"
  : >"$tmp/$preset/specs"
  for i in "${!base[@]}"; do
    spec=$(scale "${base[$i]}" "$f")
    echo "w$((i + 1)) $spec" >>"$tmp/$preset/specs"
    "$bin" profile --backend sim --preset "$preset" --workload "$spec" --instructions "$ins" \
      --name "w$((i + 1))" -o "$tmp/$preset/prof/w$((i + 1))" -q >/dev/null
  done
  for k in $ks; do
    out=$tmp/$preset/k$k
    "$bin" study -k "$k" --profiles "$tmp/$preset/prof" -o "$out" -q $study_args >/dev/null
    # every distinct group of groups.csv, simulated once
    python3 - "$out/groups.csv" "$k" >"$out/groups.txt" <<'PY'
import csv, sys
g = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["size"] == sys.argv[2]:
        g.setdefault(r["group"], []).append(r["program"])
for k, v in g.items():
    print(k, " ".join(v))
PY
    : >"$out/sim.txt"
    while read -r gid members; do
      specs=()
      for m in $members; do specs+=("$(awk -v n="$m" '$1 == n { print $2 }' "$tmp/$preset/specs")"); done
      "$bin" sim --corun $restart --preset "$preset" --instructions "$ins" -q -o "$out/g$gid.json" "${specs[@]}" >/dev/null
      python3 -c 'import json,sys; print(sys.argv[2], " ".join("%s:%.9g" % (m, a["slowdown"]) for m, a in zip(sys.argv[3:], json.load(open(sys.argv[1]))["agents"])))' \
        "$out/g$gid.json" "$gid" $members >>"$out/sim.txt"
    done <"$out/groups.txt"
    python3 - "$out/groups.csv" "$out/sim.txt" "$k" "$preset" >>"$tmp/results" <<'PY'
import csv, itertools, sys
k = int(sys.argv[3])
pred, sim = {}, {}
for r in csv.DictReader(open(sys.argv[1])):
    pred.setdefault(r["group"], {})[r["program"]] = float(r["slowdown"])
for line in open(sys.argv[2]):
    gid, *rest = line.split()
    sim[gid] = {m.split(":")[0]: float(m.split(":")[1]) for m in rest}
by = {frozenset(v): g for g, v in pred.items() if len(v) == k}
names = sorted({n for v in pred.values() for n in v})
def parts(items):
    if not items:
        yield []
        return
    for o in itertools.combinations(items[1:], k - 1):
        rest = [x for x in items[1:] if x not in o]
        for p in parts(rest):
            yield [(items[0],) + o] + p
ws = lambda d, p: sum(1 / d[by[frozenset(g)]][n] for g in p for n in g)
P, S = [], []
for p in parts(names):
    P.append(ws(pred, p)); S.append(ws(sim, p))
n = len(P)
c = d = tp = ts = 0
for i in range(n):
    for j in range(i + 1, n):
        a, b = P[i] - P[j], S[i] - S[j]
        if a == 0 and b == 0: continue
        if a == 0: tp += 1
        elif b == 0: ts += 1
        elif (a > 0) == (b > 0): c += 1
        else: d += 1
tau = (c - d) / (((c + d + tp) * (c + d + ts)) ** 0.5)
best_sim = max(S); worst_sim = min(S)
pb = S[P.index(max(P))]
gap = 100 * (best_sim - pb) / best_sim
wvb = 100 * (best_sim - worst_sim) / best_sim
print(f"{sys.argv[4]} K={k}: {n} co-schedules, kendall_tau {tau:.4f}, best_gap_pct {gap:.4f}, worst_vs_best_pct {wvb:.4f}")
PY
    tail -1 "$tmp/results"
  done
done
awk '{ for (i = 1; i <= NF; i++) { if ($i == "kendall_tau") t = $(i + 1); if ($i == "best_gap_pct") g = $(i + 1); if ($i == "worst_vs_best_pct") w = $(i + 1) }
       gsub(",", "", t); gsub(",", "", g)
       if (NR == 1 || t < mt) mt = t; if (NR == 1 || g > mg) mg = g; if (NR == 1 || w > mw) mw = w }
     END { printf "study_kendall_tau: %s 1\nstudy_best_gap_pct: %s %%\nstudy_worst_vs_best_pct: %s %%\n", mt, mg, mw }' "$tmp/results"
