#!/usr/bin/env bash
# Evaluates llcprobe's ScarPhase phase detection on real programs (Debian
# packages): a compressor (xz), a compiler on a real source file (cc1 on one
# of llcprobe's own sources), a database (sqlite3) and an interpreter (perl).
#
# Any other program can be evaluated the same way: give it as NAME=COMMAND
# after the build directory (COMMAND is split as the shell would; NAME is
# [a-z0-9_]+). Then only the given programs run unless PROGS names others
# too; the command serves as both the traced and the overhead run.
#
# Per program:
#   1. trace it with `llcprobe trace` (valgrind lackey, or the qemu
#      recorder with RECORDER=qemu) and record exp-bbv basic-block vectors
#      with the same interval (valgrind --tool=exp-bbv), with the blocks'
#      addresses (--pc-out-file);
#   2. `llcprobe phase --trace` classifies the sampled instruction addresses,
#      clusters the BBVs with the same algorithm and compares (adjusted Rand
#      index, similarity-matrix difference) with each window paired with the
#      exp-bbv interval it overlaps most in instructions (exp-bbv's
#      intervals end at a block boundary past their size, so they are
#      longer than the trace's windows and pairing by index would drift);
#      the two instruction totals must agree within BBV_TOL percent (else
#      the program ran differently under the two tools, and the eval stops
#      saying so). The table gives the gap (gap%) and the windows paired
#      (cmp); then the trace is replayed in the
#      simulator co-run with a noise workload: CoV / CCoV of the per-window
#      LLC miss ratio within phases vs the whole program's CoV. ari is
#      against the full-dimension BBVs (bbvph phases); ari32 against the
#      32-entry BBVs of the ScarPhase paper (blocks hashed by address with the samples'
#      masks; bbv32 phases), to see what the 32-bucket hash itself merges;
#   3. window size: the same at WINDOW x each of MULTS (exp-bbv's vectors
#      summed over consecutive intervals, which is exp-bbv at the longer
#      interval up to block boundaries), to see whether longer windows (the
#      spec's are 100M instructions) change CCoV or agreement;
#   4. overhead (scripts/phase-overhead.py): a longer native run (seconds, so
#      the dynamic rate matters), REPS pairs of plain and live `llcprobe
#      phase` runs (default settings), alternating order, after a warm-up
#      pair. The target's CPU time (user + sys of its process tree, from
#      wait4's rusage) and wall time; overhead = median of the paired ratios
#      live/plain - 1 with a 95% bootstrap interval; the headline is the
#      CPU-time figure: the samples' cost is charged to the target's CPU
#      time, the machine's other tenants change its wall time. Cost model:
#      the cost of one sample, measured with the signal amplified (a
#      CPU-bound perl loop sampled at 4 kHz, same pairing), times the live
#      runs' timer expiries (est%); checked with each program's own cost per
#      sample, amplified the same way (CAL_REPS pairs), and a control at 1
#      sample/s (the fixed costs: launcher, perf events, monitor). With the
#      tick source "amplified" is only --no-dynamic-rate: its rate is HZ;
#   5. detour (phase-overhead.py detour): the direct cost seen from inside
#      a target that reads the clock in a loop and records every gap
#      (interrupts, VM exits, switches): plain, live (default source) and
#      live with cpu-clock in rotating order, DETOUR_REPS rounds of
#      DETOUR_S seconds; the time lost per CPU second and per sample.
# Traced runs are kept short (lackey is ~4000x slower than native). Inputs
# are fixed, never tuned. Also reported: the ARI with the dynamic rate off
# (ari_full: every window classified from 400 samples), to show how much of
# the disagreement is low-rate windows being matched with theta_dsr.
# Every step that fails stops the eval with the program, the step, its exit
# status and the end of its log: no part of the suite is skipped quietly.
# Also per program: the ARI of the same trace cut into windows of references
# (the runtime's only unit) of the same mean length, paired with exp-bbv by
# the instructions each holds (ari_refwin; mean: phase_ari_vs_bbv_refwin).
# Last lines: phase_overhead_pct, phase_ccov_over_cov, phase_ari_vs_bbv.
# Usage: scripts/eval-phase.sh [BUILD_DIR] [NAME=COMMAND]...
#        (env: REPS=21, CAL_REPS=7, RECORDER=lackey|qemu, BBV_TOL=2 (percent),
#        WINDOW=1000000, MULTS="2 4", PRESET=intel8, NOISE=uniform:size=16M,
#        PHASE_OPTS="--samples 200" for the offline classifications,
#        OLD=path of another llcprobe to measure in the same overhead rounds,
#        OLD_OPTS=options of its runs only (OLD=build/llcprobe
#        OLD_OPTS="--source cpu-clock": the tick against cpu-clock),
#        KEEP=dir to keep the outputs (traces and BBVs already in it are
#        reused); PARTS="offline overhead progcal control detour" and PROGS="xz sqlite3 perl
#        cc1" run only some. From scratch a full run takes ~45 min of
#        tracing (lackey on cc1 alone ~17 min) and 30-60 min of overhead
#        runs on a loaded machine)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [ $# -gt 0 ] && [[ "$1" != *=* ]]; then build=$1; shift; fi
bin=$(realpath "$build")/llcprobe   # absolute: runs are timed from a scratch dir
recorder=${RECORDER:-lackey}
bbv_tol=${BBV_TOL:-2}
die() { echo "eval-phase: $*" >&2; exit 1; }
case $recorder in lackey|qemu) ;; *) die "RECORDER is lackey or qemu, not '$recorder'" ;; esac
# The user's programs: NAME=COMMAND.
user_progs=()
for a in "$@"; do
  name=${a%%=*} command=${a#*=}
  [[ "$a" == *=* && "$name" =~ ^[a-z0-9_]+$ && -n "$command" ]] ||
    die "'$a' is not NAME=COMMAND (NAME of a-z, 0-9, _)"
  eval "cmd_$name=($command)" || die "$name: cannot split '$command' into words"
  eval "long_$name=(\"\${cmd_$name[@]}\")"
  user_progs+=("$name")
done
reps=${REPS:-21}
mults=${MULTS:-2 4}
parts=${PARTS:-offline overhead progcal control detour}
cal_reps=${CAL_REPS:-7}
window=${WINDOW:-1000000}
preset=${PRESET:-intel8}
noise=${NOISE:-uniform:size=16M}
# extra options of the offline classification (e.g. "--samples 200")
read -r -a phase_opts <<<"${PHASE_OPTS:-}"
[ -x "$bin" ] || die "$bin missing (scripts/setup.sh builds it)"
for t in valgrind gcc python3 bc; do
  command -v "$t" >/dev/null || die "$t missing (scripts/setup.sh installs it)"
done
if [ "$recorder" = qemu ]; then command -v qemu-x86_64 >/dev/null || die "RECORDER=qemu: qemu-x86_64 missing (Debian package qemu-user)"; fi
work=${KEEP:-$(mktemp -d /tmp/llc-eval-phase-XXXXXX)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cc1=$(gcc -print-prog-name=cc1)

# Inputs: fixed files from this tree and the system.
cat /usr/share/common-licenses/GPL-3 /usr/share/common-licenses/Apache-2.0 >"$work/text"
head -c 100000 "$work/text" >"$work/text100k"
# 3 MB of text for the long xz run: words of the licences in a seeded
# random order (a repeated file would compress trivially fast).
python3 - "$work/text" "$work/text3m" <<'PY'
import random, sys
random.seed(1)
words = open(sys.argv[1]).read().split()
with open(sys.argv[2], "w") as f:
    n = 0
    while n < 3000000:
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
default_progs="xz sqlite3 perl cc1"
[ ${#user_progs[@]} = 0 ] || default_progs="${user_progs[*]}"
read -r -a progs <<<"${PROGS:-$default_progs}"
cmd_xz=(xz -1 -c -T1 "$work/text100k")
long_xz=(xz -6 -c -T1 "$work/text3m")
cmd_sqlite3=(sqlite3 :memory: ".read $work/q.sql")
long_sqlite3=(sqlite3 :memory: ".read $work/q_long.sql")
cmd_perl=(perl -e "$perl_small")
long_perl=(perl -e "$perl_long")
cmd_cc1=("$cc1" -quiet -O1 "$work/signature.i" -o /dev/null)
long_cc1=(gcc -O2 -c -I"$work/src/include" "$work"/src/{phase,statmodel}/*.c)

# Every program of the suite must be runnable before any time is spent.
for p in "${progs[@]}"; do
  declare -p "cmd_$p" "long_$p" >/dev/null 2>&1 ||
    die "no program '$p' (built in: xz sqlite3 perl cc1; others as NAME=COMMAND)"
  declare -n cmd=cmd_$p long=long_$p
  command -v "${cmd[0]}" >/dev/null || die "$p: '${cmd[0]}' not found"
  command -v "${long[0]}" >/dev/null || die "$p: '${long[0]}' not found"
  unset -n cmd long
done
# step PROG WHAT LOG CMD...: CMD with its output in LOG; a failure stops the
# eval, naming the program and the step, with the end of the log.
step() {
  local p=$1 what=$2 log=$3 rc=0
  shift 3
  "$@" >"$log" 2>&1 </dev/null || rc=$?
  [ $rc = 0 ] && return 0
  echo "eval-phase: $p: $what failed (exit $rc); the end of $log:" >&2
  tail -n 5 "$log" >&2
  exit 1
}
jq_py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
has_part() { [[ " $parts " == *" $1 "* ]]; }
# exp-bbv vectors of k consecutive intervals summed into one (one 'T' line each).
merge_bbv() {
  python3 - "$1" "$2" "$3" <<'PY'
import collections, sys
src, k, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out, acc, n = [], collections.Counter(), 0
def flush():
    out.append("T" + "".join(":%d:%d   " % (b, c) for b, c in sorted(acc.items())) + "\n")
for line in open(src):
    if not line.startswith("T"):
        continue
    for f in line[1:].split():
        b, c = f.strip(":").split(":")
        acc[int(b)] += int(c)
    n += 1
    if n % k == 0:
        flush(); acc.clear()
if acc:
    flush()
open(dst, "w").writelines(out)
PY
}
# Offline classification of program $1 at window $2 (bbv file $3) with the
# simulator: prints windows phases bbv_phases bbv32_phases ari ari32 simdiff
# cov cov_phases ccov cov_bbv ccov_bbv ccov_bbv32 gap_pct compared.
offline() {
  local out=$work/$1.w$2
  step "$1" "phase --trace --window $2" "$out.txt" "$bin" phase --trace "$work/$1.trace" --window "$2" \
    --bbv "$3" --bbv-pc "$work/$1.pc" --bbv-tolerance "$bbv_tol" "${phase_opts[@]}" \
    --sim "$preset" --noise "$noise" -o "$out" --no-plot
  jq_py "$out.phase.json" '" ".join(str(x) for x in (d["summary"]["windows"], d["summary"]["phases"],
    d["bbv"]["phases"], d["bbv"]["bbv32"]["phases"], d["bbv"]["ari"], d["bbv"]["bbv32"]["ari"],
    d["bbv"]["similarity_diff"], d["sim"]["cov_program"], d["sim"]["cov_phases"],
    d["sim"]["ccov_phases"], d["sim"]["cov_bbv_phases"], d["sim"]["ccov_bbv_phases"],
    d["sim"]["ccov_bbv32_phases"], 100 * d["bbv"]["gap"], d["bbv"]["compared"]))'
}

# CCoV (docs/METHODS.md §10.9) of PREFIX.phase.csv's miss ratios split into its parts, for
# our phases and for the exp-bbv phases: within real phases, the virtual
# phase (windows whose phase differs from both neighbours, counted at the
# whole program's CoV) and the junk phase (unclassified/transition windows,
# CoV of their own). Prints real virtual junk n_virtual n_junk, twice.
ccov_parts() {
  python3 - "$1.phase.csv" <<'PY'
import csv, statistics, sys
# A last window shorter than the simulator's step has no miss ratio of its
# own (the command leaves it out of CoV and CCoV too).
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["llc_miss_ratio"] != ""]
m = [float(r["llc_miss_ratio"]) for r in rows]
n = len(m)
def cov(v):
    mu = statistics.fmean(v)
    return statistics.pstdev(v) / mu if mu else 0.0
out = []
for col in ("phase", "bbv_phase"):
    lab = [int(r[col]) if r[col] != "" else -2 for r in rows]
    groups = {}
    for t, g in enumerate(lab):
        if g < 0:
            g = "junk"
        elif not ((t > 0 and lab[t - 1] == g) or (t + 1 < n and lab[t + 1] == g)):
            g = "virtual"
        groups.setdefault(g, []).append(m[t])
    virt, junk = groups.pop("virtual", []), groups.pop("junk", [])
    out += ["%.3f" % sum(len(v) / n * cov(v) for v in groups.values()),
            "%.3f" % (len(virt) / n * cov(m)), "%.3f" % (len(junk) / n * cov(junk) if junk else 0),
            str(len(virt)), str(len(junk))]
print(" ".join(out))
PY
}

if has_part offline; then
  # CCoV: ours (sampled signatures) and the exp-bbv classification's on the
  # same windows and miss ratios; if they agree, the limit is the program.
  printf '%-8s %6s %7s %6s %6s %6s %5s %5s %6s %8s %6s %7s %6s %6s %6s %9s %6s %7s %7s %8s  %-27s %-27s\n' program window windows cmp gap% phases bbvph bbv32 ari ari_full ari32 simdiff cov cov_ph ccov ccov_full bbvcov bbvccov b32ccov ccov/cov \
    "ccov parts: real virt junk" "bbv ccov parts: real virt junk"
  sum_ari=0 sum_ari32=0 sum_ratio=0 sum_bratio=0 sum_b32ratio=0 n=0
  for p in "${progs[@]}"; do
    declare -n cmd=cmd_$p
    step "$p" "the program itself" "$work/$p.native.log" "${cmd[@]}"
    if [ -z "${KEEP:-}" ] || [ ! -s "$work/$p.trace" ]; then
      step "$p" "llcprobe trace --recorder $recorder" "$work/$p.trace.log" \
        "$bin" trace -q --recorder "$recorder" -o "$work/$p.trace" -- "${cmd[@]}"
    fi
    step "$p" "reading its trace" "$work/$p.show.log" "$bin" trace --show "$work/$p.trace"
    # (-1: the recorder does not know it, as the qemu recorder's traces)
    grep -qxE 'exit status: (0|-1)' "$work/$p.show.log" ||
      die "$p: the traced run did not exit 0 ($(grep '^exit status' "$work/$p.show.log"))"
    if [ -z "${KEEP:-}" ] || [ ! -s "$work/$p.pc" ]; then
      step "$p" "valgrind --tool=exp-bbv" "$work/$p.bbv.log" valgrind --tool=exp-bbv \
        --interval-size="$window" --bb-out-file="$work/$p.bb" --pc-out-file="$work/$p.pc" "${cmd[@]}"
    fi
    step "$p" "phase --trace --no-dynamic-rate" "$work/$p.full.txt" "$bin" phase --trace "$work/$p.trace" \
      --window "$window" --bbv "$work/$p.bb" --bbv-pc "$work/$p.pc" --bbv-tolerance "$bbv_tol" \
      "${phase_opts[@]}" --no-dynamic-rate --sim "$preset" --noise "$noise" -o "$work/$p.full" --no-plot
    ari_full=$(jq_py "$work/$p.full.phase.json" 'd["bbv"]["ari"]')
    ccov_full=$(jq_py "$work/$p.full.phase.json" 'd["sim"]["ccov_phases"]')
    for k in 1 $mults; do
      w=$((window * k))
      bb=$work/$p.bb
      if [ "$k" != 1 ]; then bb=$work/$p.x$k.bb; merge_bbv "$work/$p.bb" "$k" "$bb"; fi
      offline "$p" "$w" "$bb" >"$work/$p.w$w.row"
      read -r wins phs bph ph32 ari ari32 simdiff cov covph ccov bcov bccov b32ccov gap cmp <"$work/$p.w$w.row"
      af=$([ "$k" = 1 ] && printf '%8.3f' "$ari_full" || printf '%8s' -)
      cf=$([ "$k" = 1 ] && printf '%9.3f' "$ccov_full" || printf '%9s' -)
      read -r r v j nv nj br bv bj bnv bnj < <(ccov_parts "$work/$p.w$w")
      printf '%-8s %5dM %7s %6s %6.3f %6s %5s %5s %6.3f %s %6.3f %7.3f %6.3f %6.3f %6.3f %s %6.3f %7.3f %7.3f %8.3f  %5s %5s %5s (%2d, %2d)   %5s %5s %5s (%2d, %2d)\n' \
        "$p" $((w / 1000000)) "$wins" "$cmp" "$gap" "$phs" "$bph" "$ph32" "$ari" "$af" "$ari32" "$simdiff" "$cov" "$covph" "$ccov" "$cf" "$bcov" "$bccov" "$b32ccov" \
        "$(awk -v c="$cov" -v cc="$ccov" 'BEGIN { print (c > 0 ? cc / c : 1) }')" "$r" "$v" "$j" "$nv" "$nj" "$br" "$bv" "$bj" "$bnv" "$bnj"
      [ "$k" = 1 ] || continue
      sum_ari=$(echo "$sum_ari + $ari" | bc -l)
      sum_ari32=$(echo "$sum_ari32 + $ari32" | bc -l)
      sum_ratio=$(awk -v s="$sum_ratio" -v c="$cov" -v cc="$ccov" 'BEGIN { print s + (c > 0 ? cc / c : 1) }')
      sum_bratio=$(awk -v s="$sum_bratio" -v c="$cov" -v cc="$bccov" 'BEGIN { print s + (c > 0 ? cc / c : 1) }')
      sum_b32ratio=$(awk -v s="$sum_b32ratio" -v c="$cov" -v cc="$b32ccov" 'BEGIN { print s + (c > 0 ? cc / c : 1) }')
      n=$((n + 1))
    done
    unset -n cmd
  done
  echo "window: $window instructions (trace by $recorder; also x $mults), 400 samples per window${PHASE_OPTS:+ (options: $PHASE_OPTS)}; sim: $preset + $noise"
  echo "ari: against exp-bbv, each window paired with the interval it overlaps most in instructions; cmp: windows paired; gap%: trace vs exp-bbv instruction totals beyond the last interval exp-bbv leaves unwritten (at most $bbv_tol%)"
  # The same trace cut by references (the only windows a runtime trace
  # has), as many per window as the program makes per $window instructions
  # on average; paired with exp-bbv by the instructions each window holds.
  echo "ari per program (window $window instructions; refwin: windows of references of the same mean length):"
  printf '  %-10s %6s %9s %7s %6s\n' program ari refs/win refwins ari_refwin
  sum_ari_ref=0
  for p in "${progs[@]}"; do
    read -r _ _ _ _ a _ <"$work/$p.w$window.row"
    refs=$(awk -v w="$window" '$1 == "instructions:" { i = $2 } $1 ~ /^(loads|stores|modifies):$/ { d += $2 }
      END { r = int(w * d / i + 0.5); print (r < 1000 ? 1000 : r) }' "$work/$p.show.log")
    step "$p" "phase --trace --window-unit references" "$work/$p.refwin.txt" "$bin" phase --trace "$work/$p.trace" \
      --window-unit references --window "$refs" --bbv "$work/$p.bb" --bbv-tolerance "$bbv_tol" "${phase_opts[@]}" \
      -o "$work/$p.refwin" --no-plot
    read -r rw ra < <(jq_py "$work/$p.refwin.phase.json" '"%d %s" % (d["summary"]["windows"], d["bbv"]["ari"])')
    printf '  %-10s %6.3f %9s %7s %6.3f\n' "$p" "$a" "$refs" "$rw" "$ra"
    sum_ari_ref=$(echo "$sum_ari_ref + $ra" | bc -l)
  done
  echo "cov: whole program; cov_ph: weighted CoV within our phases; ccov: corrected (single-window runs count as the whole program); ccov_full: dynamic rate off; bbv*: the exp-bbv classification's, b32ccov: the 32-entry BBV's"
  echo "ccov parts: within real phases + virtual phase (its windows' share x cov) + junk phase (n_virtual, n_junk windows)"
fi

# The default live source decides the cost model: cpu-clock's per-sample
# cost shows when amplified (a loop sampled at 4 kHz); the tick's rate is
# the kernel's HZ, so its cost per sample comes from the detour meter.
src=cpu-clock
if has_part overhead || has_part progcal || has_part control || has_part detour; then
  "$bin" phase -q --no-plot -o "$work/source" -- /bin/true >/dev/null
  src=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sampling"]["source"])' "$work/source.phase.json")
  echo "live source: $src"
fi
if has_part detour || { has_part overhead && [ "$src" = tick ]; }; then
  LLCPROBE=$bin scripts/phase-overhead.py detour "$work" "${DETOUR_REPS:-15}" "${DETOUR_S:-3}" \
    "$(realpath "$build")/tests/phasecli/phasecli_detour" | tee "$work/detour.txt"
fi
if has_part overhead || has_part progcal || has_part control; then
  export LLCPROBE=$bin RUN_DIR=$work/obj
  ovh=scripts/phase-overhead.py
  amplified="--no-dynamic-rate --max-rate 4000"
  calib_loop=(perl -e 'my $s = 0; for my $i (1 .. 40000000) { $s += $i % 7 } print "$s\n"')
  calib=calib
  if [ "$src" = tick ]; then
    calib=detour
    if has_part progcal || has_part control; then
      echo "progcal, control: skipped (they vary cpu-clock's rate; the tick samples at HZ)"
    fi
  else
    has_part overhead && LLCPROBE_OLD= "$ovh" run calib "$work" "$reps" "$amplified" -- "${calib_loop[@]}"
  fi
  for p in "${progs[@]}"; do
    declare -n long=long_$p
    # OLD=another llcprobe (e.g. main's): run in the same rounds (triples)
    has_part overhead && LLCPROBE_OLD=${OLD:-} LLCPROBE_OLD_OPTS=${OLD_OPTS:-} "$ovh" run "$p" "$work" "$reps" "" -- "${long[@]}"
    if [ "$src" != tick ]; then
      # The cost model's check: the program's own cost per sample, amplified
      # like the loop's (what an interrupt evicts depends on the program).
      has_part progcal && LLCPROBE_OLD= "$ovh" run "$p.cal" "$work" "$cal_reps" "$amplified" -- "${long[@]}"
      # and the control: everything but the samples (launcher, events, monitor)
      has_part control && LLCPROBE_OLD= "$ovh" run "$p.ctl" "$work" "$cal_reps" "--no-dynamic-rate --max-rate 1" -- "${long[@]}"
    fi
    unset -n long
  done
  "$ovh" summary "$work" "$calib" "${progs[@]}" >"$work/overhead.txt"
  head -n -1 "$work/overhead.txt"
fi

# Headline lines, last.
if has_part offline; then
  printf 'phase_ari_vs_bbv32: %.3f\n' "$(echo "$sum_ari32 / $n" | bc -l)"
  printf 'phase_ccov_over_cov_bbv: %.3f\n' "$(echo "$sum_bratio / $n" | bc -l)"
  printf 'phase_ccov_over_cov_bbv32: %.3f\n' "$(echo "$sum_b32ratio / $n" | bc -l)"
fi
if has_part overhead || has_part progcal || has_part control; then tail -n 1 "$work/overhead.txt"; fi
if has_part offline; then
  printf 'phase_ccov_over_cov: %.3f\n' "$(echo "$sum_ratio / $n" | bc -l)"
  printf 'phase_ari_vs_bbv_refwin: %.3f\n' "$(echo "$sum_ari_ref / $n" | bc -l)"
  printf 'phase_ari_vs_bbv: %.3f\n' "$(echo "$sum_ari / $n" | bc -l)"
fi
