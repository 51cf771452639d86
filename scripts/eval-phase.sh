#!/usr/bin/env bash
# Evaluates llcprobe's ScarPhase phase detection on real programs (Debian
# packages): a compressor (xz), a compiler on a real source file (cc1 on one
# of llcprobe's own sources), a database (sqlite3) and an interpreter (perl).
#
# Per program:
#   1. trace it with `llcprobe trace` (valgrind lackey) and record exp-bbv
#      basic-block vectors with the same interval (valgrind --tool=exp-bbv);
#   2. `llcprobe phase --trace` classifies the sampled instruction addresses,
#      clusters the BBVs with the same algorithm and compares (adjusted Rand
#      index, similarity-matrix difference), and replays the trace in the
#      simulator co-run with a noise workload: CoV / CCoV of the per-window
#      LLC miss ratio within phases vs the whole program's CoV;
#   3. overhead: a longer native run (seconds, so the dynamic rate matters),
#      REPS times plain and REPS times under live `llcprobe phase` (default
#      settings), interleaved; medians of CPU time (user + sys, from
#      /usr/bin/time: the machine is shared, wall time is noise). The live
#      figure includes llcprobe's own CPU time, not only the target's.
# Traced runs are kept short (lackey is ~4000x slower than native). Inputs
# are fixed, never tuned. Also reported: the ARI with the dynamic rate off
# (ari_full: every window classified from 400 samples), to show how much of
# the disagreement is low-rate windows being matched with theta_dsr.
# Last lines: phase_overhead_pct, phase_ccov_over_cov, phase_ari_vs_bbv.
# Usage: scripts/eval-phase.sh [BUILD_DIR]   (env: REPS=7, WINDOW=1000000,
#        PRESET=intel8, NOISE=uniform:size=16M, KEEP=dir to keep the outputs)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$(realpath "$build")/llcprobe   # absolute: runs are timed from a scratch dir
reps=${REPS:-7}
window=${WINDOW:-1000000}
preset=${PRESET:-intel8}
noise=${NOISE:-uniform:size=16M}
[ -x "$bin" ] || { echo "eval-phase: $bin missing (scripts/setup.sh builds it)" >&2; exit 1; }
for t in valgrind xz sqlite3 perl gcc python3 /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "eval-phase: $t missing (scripts/setup.sh installs it)" >&2; exit 1; }
done
work=${KEEP:-$(mktemp -d /tmp/llc-eval-phase-XXXXXX)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cc1=$(gcc -print-prog-name=cc1)

# Inputs: fixed files from this tree and the system.
cat /usr/share/common-licenses/GPL-3 /usr/share/common-licenses/Apache-2.0 >"$work/text"
head -c 100000 "$work/text" >"$work/text100k"
# 5 MB of text for the long xz run: words of the licences in a seeded
# random order (a repeated file would compress trivially fast).
python3 - "$work/text" "$work/text5m" <<'PY'
import random, sys
random.seed(1)
words = open(sys.argv[1]).read().split()
with open(sys.argv[2], "w") as f:
    n = 0
    while n < 5000000:
        line = " ".join(random.choice(words) for _ in range(12)) + " %d\n" % random.randint(0, 10**6)
        f.write(line)
        n += len(line)
PY
gcc -E -I include phase/signature.c -o "$work/signature.i"
# The long compiler run: gcc -O2 on llcprobe's own pure modules (a driver
# forking cc1 and as per file), copied so concurrent edits cannot change it.
mkdir -p "$work/src" "$work/obj"
cp -r include phase statmodel fit "$work/src/"
cat >"$work/q.sql" <<'SQL'
CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000)
  INSERT INTO t SELECT x, hex(randomblob(8)) FROM c;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(a) FROM t WHERE b > '8';
SELECT a % 7, count(*), max(b) FROM t GROUP BY a % 7 ORDER BY 2;
SQL
sed 's/3000/1500000/' "$work/q.sql" >"$work/q_long.sql"
perl_small='my %h; for my $i (1..20000) { $h{$i % 997} .= chr(65 + $i % 26) } my $s = 0; $s += length($h{$_}) for sort { $a <=> $b } keys %h; my @w = map { scalar reverse $_ } values %h; print $s + @w, "\n"'
perl_long=${perl_small/20000/15000000}

# name | traced command (short) | overhead command (longer native run)
progs=(xz sqlite3 perl cc1)
cmd_xz=(xz -1 -c -T1 "$work/text100k")
long_xz=(xz -6 -c -T1 "$work/text5m")
cmd_sqlite3=(sqlite3 :memory: ".read $work/q.sql")
long_sqlite3=(sqlite3 :memory: ".read $work/q_long.sql")
cmd_perl=(perl -e "$perl_small")
long_perl=(perl -e "$perl_long")
cmd_cc1=("$cc1" -quiet -O1 "$work/signature.i" -o /dev/null)
long_cc1=(gcc -O2 -c -I"$work/src/include" "$work"/src/{phase,statmodel,fit}/*.c)

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# CPU time (user + sys) of a command and its children, appended to file $1.
cpu() { local f=$1; shift; (cd "$work/obj" && /usr/bin/time -o "$f.t" -f '%U %S' "$@" >/dev/null 2>&1 </dev/null) || true
        awk '{print $1 + $2}' "$f.t" >>"$f"; }
jq_py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

printf '%-8s %8s %6s %6s %6s %8s %7s %7s %7s %7s %8s\n' program windows phases bbvph ari ari_full simdiff cov ccov bbvccov overhead%
sum_ari=0 sum_ratio=0 sum_ovh=0 n=0
for p in "${progs[@]}"; do
  declare -n cmd=cmd_$p long=long_$p
  "$bin" trace -q -o "$work/$p.trace" -- "${cmd[@]}" >"$work/$p.trace.log" 2>&1 </dev/null
  valgrind --tool=exp-bbv --interval-size="$window" --bb-out-file="$work/$p.bb" \
    --pc-out-file=/dev/null "${cmd[@]}" >/dev/null 2>"$work/$p.bbv.log" </dev/null
  "$bin" phase --trace "$work/$p.trace" --window "$window" --bbv "$work/$p.bb" \
    --sim "$preset" --noise "$noise" -o "$work/$p" --no-plot >"$work/$p.phase.txt" 2>&1
  j=$work/$p.phase.json
  ari=$(jq_py "$j" 'd["bbv"]["ari"]')
  simdiff=$(jq_py "$j" 'd["bbv"]["similarity_diff"]')
  cov=$(jq_py "$j" 'd["sim"]["cov_program"]')
  ccov=$(jq_py "$j" 'd["sim"]["ccov_phases"]')
  bccov=$(jq_py "$j" 'd["sim"]["ccov_bbv_phases"]')
  wins=$(jq_py "$j" 'd["summary"]["windows"]')
  "$bin" phase --trace "$work/$p.trace" --window "$window" --bbv "$work/$p.bb" --no-dynamic-rate \
    -o "$work/$p.full" --no-plot >"$work/$p.full.txt" 2>&1
  ari_full=$(jq_py "$work/$p.full.phase.json" 'd["bbv"]["ari"]')
  phs=$(jq_py "$j" 'd["summary"]["phases"]')
  bph=$(jq_py "$j" 'd["bbv"]["phases"]')
  # Overhead: interleaved plain and live-phase runs of the longer input.
  : >"$work/$p.plain" ; : >"$work/$p.live"
  for ((r = 0; r < reps; r++)); do
    cpu "$work/$p.plain" "${long[@]}"
    cpu "$work/$p.live" "$bin" phase -q --no-plot -o "$work/$p.live" -- "${long[@]}"
  done
  plain=$(median <"$work/$p.plain")
  live=$(median <"$work/$p.live")
  ovh=$(echo "($live - $plain) / $plain * 100" | bc -l)
  printf '%-8s %8s %6s %6s %6.3f %8.3f %7.3f %7.3f %7.3f %7.3f %8.2f   (CPU native %.2f s, live %.2f s; live: %s)\n' \
    "$p" "$wins" "$phs" "$bph" "$ari" "$ari_full" "$simdiff" "$cov" "$ccov" "$bccov" "$ovh" "$plain" "$live" \
    "$(jq_py "$work/$p.live.phase.json" '"%d windows, %d phases, rate %.2f, %s rate control" % (d["summary"]["windows"], d["summary"]["phases"], d["summary"]["mean_rate"], d["sampling"]["rate_control"])')"
  sum_ari=$(echo "$sum_ari + $ari" | bc -l)
  sum_ratio=$(awk -v s="$sum_ratio" -v c="$cov" -v cc="$ccov" 'BEGIN { print s + (c > 0 ? cc / c : 1) }')
  sum_ovh=$(echo "$sum_ovh + $ovh" | bc -l)
  n=$((n + 1))
  unset -n cmd long
done
echo "window: $window instructions (trace), default live settings; sim: $preset + $noise; reps: $reps; overhead: CPU time, median"
printf 'phase_overhead_pct: %.2f %%\n' "$(echo "$sum_ovh / $n" | bc -l)"
printf 'phase_ccov_over_cov: %.3f\n' "$(echo "$sum_ratio / $n" | bc -l)"
printf 'phase_ari_vs_bbv: %.3f\n' "$(echo "$sum_ari / $n" | bc -l)"
