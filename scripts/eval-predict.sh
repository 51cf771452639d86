#!/usr/bin/env bash
# The acceptance of `llcprobe predict`: every program is profiled alone
# (llcprobe profile --backend sim), every pair and 10 mixes of 4 are
# predicted (llcprobe predict, and again with --no-probe) and run as a timed
# co-run in the simulator (llcprobe sim --corun, the ground truth), on each
# preset and replacement policy. scripts/predict-compare.py scores them:
# per policy, preset, kind (synthetic / real) and overall, the mean and
# maximum slowdown error (percent of solo time), the miss ratio error (LLC
# misses per reference), the occupancy error (percent of the LLC), the same
# for the FOA and SDC baselines and the model without the probe combination,
# the per-window CDF error of the first pair and mix, and the speedup of the
# prediction over the co-run simulation (CPU time of each; the jobs run side
# by side, and a prediction of a few ms loses scheduler slices to them in
# wall time). Headline lines last.
#
# Programs: 6 synthetic workloads (virtual-address uniform, zipf and stream,
# the set-skewed hotsets and gaussian, and a phased one) and 4 real programs
# traced by llcprobe itself: gzip and sqlite3 under valgrind lackey (short
# runs), bzip2 and xz rebuilt with clang's instrumentation
# (scripts/build-workloads.sh, run here when missing) traced in the
# runtime's full-trace mode (LLCPROBE_RT_MODE=trace) on larger inputs.
# Nothing is ever left out: if any step fails the script stops with status 1
# and names it.
#
# usage: scripts/eval-predict.sh [--quick] [--jobs N] [--preset P]... [--policies LIST]
#                                [--program NAME=CMD]... [--trace NAME=FILE]...
#                                [--backend sim|timing|pmu] [--bin PATH] [--out DIR] [--dry-run]
#   --quick        fewer instructions per synthetic run (2M instead of 10M), same suite
#   --jobs N       runs at once (default: nproc)
#   --preset P     intel8 and/or amd32 (repeatable; default both)
#   --policies L   comma list of LLC policies (default lru,random,drrip)
#   --program N=C  add a real program: C (split into words as the shell does,
#                  run without a shell: no pipes) is traced under lackey (keep it short)
#   --trace N=F    add a real program from a trace recorded by llcprobe
#   --backend B    sim (default); timing or pmu run the programs natively,
#                  pinned to cores sharing the LLC (hwloc), and compare the
#                  prediction with measured CPU time; a backend that cannot
#                  run here stops the script before any run, with its reason
#   --dry-run      print the plan (every command), run nothing
#   --subset LIST  only these programs (comma list of names), every pair of
#                  them and mixes of 4 when there are 4; for tests: the
#                  output says it is not the acceptance suite
#   --instructions N  instructions per synthetic run (overrides --quick)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/llcprobe
out=
quick=0
jobs=$(nproc)
presets=()
policies=lru,random,drrip
backend=sim
dry=0
user_programs=()
user_traces=()
subset=
instr=
die() { echo "eval-predict.sh: $*" >&2; exit 1; }
usage() { echo "eval-predict.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --jobs) jobs=${2:-}; shift ;;
    --preset) presets+=("${2:-}"); shift ;;
    --policies) policies=${2:-}; shift ;;
    --program) user_programs+=("${2:-}"); shift ;;
    --trace) user_traces+=("${2:-}"); shift ;;
    --backend) backend=${2:-}; shift ;;
    --bin) bin=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --dry-run) dry=1 ;;
    --subset) subset=${2:-}; shift ;;
    --instructions) instr=${2:-}; shift ;;
    -h|--help) sed -n 2,40p "$0"; exit 0 ;;
    *) usage "unknown option $1" ;;
  esac
  shift
done
[ -z "$instr" ] || [[ $instr =~ ^[1-9][0-9]{3,11}$ ]] || usage "--instructions wants 1000..1e12, not '$instr'"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || usage "--jobs wants a positive number, not '$jobs'"
case $backend in sim|timing|pmu) ;; *) usage "--backend is sim, timing or pmu, not '$backend'" ;; esac
[ ${#presets[@]} -gt 0 ] || presets=(intel8 amd32)
for p in "${presets[@]}"; do
  case $p in intel8|amd32) ;; *) usage "--preset is intel8 or amd32, not '$p'" ;; esac
done
IFS=, read -ra pols <<<"$policies"
[ ${#pols[@]} -gt 0 ] || usage "--policies is empty"
for p in "${pols[@]}"; do
  case $p in lru|random|plru|srrip|brrip|drrip) ;; *) usage "--policies: unknown policy '$p'" ;; esac
done
for a in "${user_programs[@]}" "${user_traces[@]}"; do
  [[ $a =~ ^[A-Za-z0-9_.-]+=.+ ]] || usage "'$a' is not NAME=VALUE (NAME: letters, digits, _ . -)"
done
[ -x "$bin" ] || die "$bin: not built (scripts/setup.sh)"
made_out=
if [ -z "$out" ]; then
  out=$(mktemp -d /tmp/eval-predict.XXXXXX)
  made_out=$out
  # A directory of its own making goes when nothing worth keeping is in it:
  # after a usage error (exit 2) or a dry run. A failed run keeps its logs.
  trap 'rc=$?; if [ $rc = 2 ] || [ $dry = 1 ]; then rm -rf "$made_out"; fi; exit $rc' EXIT
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
echo "# results in $out" >&2

exec 3>&1 # the plan goes here in a dry run
plan() { printf '%q ' "$@" >&3; echo >&3; }

# ---------------------------------------------------------------- hardware
if [ "$backend" != sim ]; then
  # The programs run natively: the real ones only.
  hw_programs=("${user_programs[@]}")
  if [ ${#hw_programs[@]} = 0 ]; then
    input=$out/input.bin
    hw_programs=("xz=xz -1 -c -T1 $input" "gzip=gzip -1 -c $input" "bzip2=bzip2 -1 -c $input"
                 "sqlite3=sqlite3 :memory: 'create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c limit 200000) insert into t select x, hex(randomblob(40)) from c; select count(*) from t where a % 7 = 3;'")
  fi
  if [ $dry = 1 ]; then
    echo "# plan: backend $backend: preflight (map self-test), cores sharing the LLC from hwloc," >&3
    echo "# each program profiled live, then every pair: solo and co-run pinned, CPU time measured" >&3
    plan "$bin" map --backend "$backend" --mode sets --sets 0 --sweeps 1 --dwell 0.01 -o "$out/preflight" -q -- sleep 2
    plan hwloc-calc --number-of core l3cache:0
    for p in "${hw_programs[@]}"; do
      eval "words=(${p#*=})"
      plan "$bin" profile -o "$out/hw/${p%%=*}" -q --name "${p%%=*}" -- "${words[@]}"
    done
    n=${#hw_programs[@]}
    for ((i = 0; i < n; i++)); do for ((j = i + 1; j < n; j++)); do
      a=${hw_programs[i]%%=*} b=${hw_programs[j]%%=*}
      plan "$bin" predict "$out/hw/$a.profile.json" "$out/hw/$b.profile.json" -o "$out/hw/$a+$b/pred" --no-plot -q
      echo "# $a alone on l3cache:0.core:0, $b alone on l3cache:0.core:1, then together (hwloc-bind; CPU time of each)" >&3
    done; done
    exit 0
  fi
  # Can the backend measure here at all? Its self-test says why not, before any run.
  if ! "$bin" map --backend "$backend" --mode sets --sets 0 --sweeps 1 --dwell 0.01 -o "$out/preflight" \
       -q -- sleep 2 >/dev/null 2>"$out/preflight.err"; then
    die "the $backend backend cannot run co-runs on this machine: $(tail -1 "$out/preflight.err")"
  fi
  command -v hwloc-bind >/dev/null && command -v hwloc-calc >/dev/null ||
    die "hwloc-bind/hwloc-calc not found (apt-get install hwloc): cannot pin to cores sharing the LLC"
  ncores=$(hwloc-calc --number-of core l3cache:0 2>/dev/null || echo 0)
  [ "$ncores" -ge 2 ] || die "hwloc finds $ncores cores under the first L3: no two cores share an LLC"
  cores=(l3cache:0.core:0 l3cache:0.core:1)
  [ -s "$out/input.bin" ] || cat "$bin" /usr/share/common-licenses/* 2>/dev/null | head -c 8000000 >"$out/input.bin" || true
  mkdir -p "$out/hw"
  cputime() { # LOCATION CMD -> user+sys seconds of CMD bound to the hwloc LOCATION
    local TIMEFORMAT='%3U %3S' t words
    eval "words=($2)"
    t=$( { time hwloc-bind "$1" -- "${words[@]}" >/dev/null 2>&1; } 2>&1 ) || return 1
    awk '{ print $1 + $2 }' <<<"$t"
  }
  for p in "${hw_programs[@]}"; do
    eval "words=(${p#*=})"
    "$bin" profile -o "$out/hw/${p%%=*}" -q --name "${p%%=*}" -- "${words[@]}" >/dev/null ||
      die "profile of ${p%%=*} failed"
  done
  n=${#hw_programs[@]}
  printf '%-20s %-8s %10s %10s\n' pair program predicted measured
  errs=()
  for ((i = 0; i < n; i++)); do for ((j = i + 1; j < n; j++)); do
    a=${hw_programs[i]%%=*} b=${hw_programs[j]%%=*}
    mkdir -p "$out/hw/$a+$b"
    "$bin" predict "$out/hw/$a.profile.json" "$out/hw/$b.profile.json" -o "$out/hw/$a+$b/pred" --no-plot -q \
      >/dev/null || die "predict $a+$b failed"
    sa=$(cputime "${cores[0]}" "${hw_programs[i]#*=}") || die "$a alone failed"
    sb=$(cputime "${cores[1]}" "${hw_programs[j]#*=}") || die "$b alone failed"
    cputime "${cores[0]}" "${hw_programs[i]#*=}" >"$out/hw/$a+$b/a.cpu" & pa=$!
    cputime "${cores[1]}" "${hw_programs[j]#*=}" >"$out/hw/$a+$b/b.cpu" & pb=$!
    wait $pa || die "co-run $a+$b: $a failed"
    wait $pb || die "co-run $a+$b: $b failed"
    for k in 0 1; do
      name=$([ $k = 0 ] && echo "$a" || echo "$b")
      solo=$([ $k = 0 ] && echo "$sa" || echo "$sb")
      co=$(cat "$out/hw/$a+$b/$([ $k = 0 ] && echo a || echo b).cpu")
      pred=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['programs'][$k]['model']['slowdown'])" \
             "$out/hw/$a+$b/pred.prediction.json")
      meas=$(awk -v c="$co" -v s="$solo" 'BEGIN { printf "%.4f", s > 0 ? c / s : 0 }')
      printf '%-20s %-8s %10.4f %10s\n' "$a+$b" "$name" "$pred" "$meas"
      errs+=("$(awk -v p="$pred" -v m="$meas" 'BEGIN { d = p - m; printf "%.4f", (d < 0 ? -d : d) * 100 }')")
    done
  done; done
  printf '%s\n' "${errs[@]}" | awk '{ s += $1; if ($1 > m) m = $1 } END {
    printf "predict_hw_slowdown_mae_pct: %.3f %%\npredict_hw_slowdown_max_pct: %.3f %%\n", s / NR, m }'
  exit 0
fi

# ---------------------------------------------------------------- simulator
budget=10000000
[ $quick = 0 ] || budget=2000000
[ -z "$instr" ] || budget=$instr
window=100000   # instructions per co-run window: the profile's window

names=() kinds=() specs=()
add() { names+=("$1"); kinds+=("$2"); specs+=("$3"); }
add uniform6 synthetic "wl:uniform:size=6M"
add zipf32 synthetic "wl:zipf:size=32M,alpha=0.8"
add stream24 synthetic "wl:stream:size=24M"
add hotsets16 synthetic "wl:hotsets:size=16M,frac=0.2,weight=0.6"
add gauss16 synthetic "wl:gaussian:size=16M,cv=0.5"
add phased synthetic "wl:phased:uniform:size=2M@200000;zipf:size=32M,alpha=0.8@200000"

# Real programs, traced once into $out/traces (kept across runs of one --out).
mkdir -p "$out/traces" "$out/logs"
tdir=$out/traces
record=()   # NAME<TAB>shell command that writes $tdir/NAME.trace
input=$tdir/input.txt
rt_bin=$here/build/workloads/bin
# gzip and sqlite3: short runs under lackey; bzip2 and xz: the runtime's
# full trace (no instruction records: the co-run counts 3 instructions per
# reference, as profile does). Inputs sized for about 3 M references each
# (bzip2 -9 on 25 kB: 3.3 M; xz -6 on 12 kB), which the co-runs replay whole.
# Each program runs directly, never through sh -c: lackey follows no child.
record+=("gzip	$(printf '%q ' "$bin" trace -q -o "$tdir/gzip.trace" -- gzip -6 -c "$tdir/input-30k.txt")")
record+=("sqlite3	$(printf '%q ' "$bin" trace -q -o "$tdir/sqlite3.trace" -- sqlite3 :memory: \
  "create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c limit 2000) insert into t select x, hex(randomblob(40)) from c; select count(*), sum(length(b)) from t where a % 7 = 3;")")
# The runtime's programs run natively: with the address space laid out at
# random (ASLR) their stack lines differ from run to run, and so do their
# traces; setarch -R lays it out the same each time (checked: two bzip2
# traces byte-identical with it, different without). Lackey's layout is
# valgrind's own and repeats without it (gzip); sqlite3 seeds its own
# random numbers from the kernel and differs from run to run regardless.
if setarch "$(uname -m)" -R true 2>/dev/null; then
  fixed_layout="setarch $(uname -m) -R"
else
  fixed_layout=""
  echo "# setarch -R is refused here: the runtime's traces (bzip2, xz) differ from run to run" >&2
fi
record+=("bzip2	LLCPROBE_RT_MODE=trace LLCPROBE_RT_OUTPUT=$tdir/bzip2.trace $fixed_layout $rt_bin/bzip2 -9 -c $tdir/input-25k.txt")
record+=("xz	LLCPROBE_RT_MODE=trace LLCPROBE_RT_OUTPUT=$tdir/xz.trace $fixed_layout $rt_bin/xz -6 -T1 -c $tdir/input-12k.txt")
for r in "${record[@]}"; do add "${r%%	*}" real "trace:$tdir/${r%%	*}.trace"; done
for a in "${user_programs[@]}"; do
  # the shell's word splitting and quotes, but no shell: lackey would trace the shell
  eval "words=(${a#*=})" || usage "--program ${a%%=*}: cannot split '${a#*=}' into words"
  record+=("${a%%=*}	$(printf '%q ' "$bin" trace -q -o "$tdir/${a%%=*}.trace" -- "${words[@]}")")
  add "${a%%=*}" real "trace:$tdir/${a%%=*}.trace"
done
for a in "${user_traces[@]}"; do
  f=${a#*=}
  [ $dry = 1 ] || [ -s "$f" ] || die "--trace ${a%%=*}: $f: no such trace"
  add "${a%%=*}" real "trace:$(realpath -m -- "$f")"
done
declare -A seen=()
for n in "${names[@]}"; do
  [ -z "${seen[$n]:-}" ] || usage "program name '$n' given twice"
  seen[$n]=1
done
if [ -n "$subset" ]; then
  IFS=, read -ra want <<<"$subset"
  keep_n=() keep_k=() keep_s=() keep_r=()
  for w in "${want[@]}"; do
    [ -n "${seen[$w]:-}" ] || usage "--subset: no program '$w' (${names[*]})"
    for ((i = 0; i < ${#names[@]}; i++)); do
      [ "${names[i]}" != "$w" ] || { keep_n+=("$w"); keep_k+=("${kinds[i]}"); keep_s+=("${specs[i]}"); }
    done
    for r in "${record[@]}"; do [ "${r%%	*}" != "$w" ] || keep_r+=("$r"); done
  done
  names=("${keep_n[@]}") kinds=("${keep_k[@]}") specs=("${keep_s[@]}") record=("${keep_r[@]}")
  echo "# SUBSET RUN (--subset $subset): not the acceptance suite" | tee /dev/stderr
fi
np=${#names[@]}
[ "$np" -ge 2 ] || usage "need at least 2 programs"

# Groups: every pair, then 10 mixes of 4 spread evenly over all 4-subsets
# (the first is the first four programs).
mapfile -t groups < <(python3 - "$np" <<'EOF'
import itertools, sys
n = int(sys.argv[1])
for g in itertools.combinations(range(n), 2):
    print(" ".join(map(str, g)))
quads = list(itertools.combinations(range(n), 4))
for k in range(min(10, len(quads))):
    print(" ".join(map(str, quads[k * len(quads) // 10])))
EOF
)
nmix=0
for g in "${groups[@]}"; do [ "$(wc -w <<<"$g")" = 4 ] && nmix=$((nmix + 1)); done
if [ -z "$subset" ]; then
  [ "$np" -ge 8 ] || die "only $np programs (at least 8)"
  [ "$nmix" -ge 10 ] || die "only $nmix mixes of 4 (at least 10)"
fi

target_of() { # index -> sim --corun target, and profile source options
  local s=${specs[$1]}
  case $s in wl:*) echo "${s#wl:}" ;; trace:*) echo "${s#trace:}" ;; esac
}

# Every run is one line of shell in a job file; run_jobs runs a file with
# --jobs at once and stops the script naming each failed step.
run_jobs() { # FILE WHAT
  local file=$1 what=$2
  local n; n=$(wc -l <"$file")
  if [ $dry = 1 ]; then
    echo "# $what: $n runs" >&3
    cat "$file" >&3
    return 0
  fi
  echo "# $what: $n runs, $jobs at once" >&2
  rm -f "$out/failed.txt"
  # shellcheck disable=SC2016
  xargs -d '\n' -P "$jobs" -n 1 bash -c 'eval "$1"' _ <"$file" || true
  if [ -s "$out/failed.txt" ]; then
    echo "eval-predict.sh: $what: $(wc -l <"$out/failed.txt") of $n runs failed:" >&2
    sed 's/^/  /' "$out/failed.txt" >&2
    exit 1
  fi
}
job() { # LABEL CMD... -> a job line: runs CMD niced, logs, notes a failure
  local label=$1; shift
  local log=$out/logs/$label.log
  printf 'nice %s>%q 2>&1 || echo %q"$(tail -1 %q)" >>%q\n' "$(printf '%q ' "$@")" "$log" "$label: " "$log" "$out/failed.txt"
}

# 1. Real programs' traces.
: >"$out/jobs-trace.txt"
if [ $dry = 0 ] && [ ! -s "$input" ]; then
  for f in /usr/share/common-licenses/*; do cat "$f"; done 2>/dev/null | head -c 60000 >"$input" || true
  [ -s "$input" ] || die "no text in /usr/share/common-licenses for the program inputs"
fi
if [ $dry = 0 ]; then
  # the licence texts with line numbers, cut to size
  for k in 12 25 30; do
    [ -s "$tdir/input-${k}k.txt" ] || nl "$input" | head -c "${k}000" >"$tdir/input-${k}k.txt" || true
    [ -s "$tdir/input-${k}k.txt" ] || die "could not write the programs' input $tdir/input-${k}k.txt"
  done
fi
need_rt=0
for r in "${record[@]}"; do
  n=${r%%	*}
  [ "$dry" = 1 ] || [ ! -s "$tdir/$n.trace" ] || continue
  case ${r#*	} in *"$rt_bin"*) need_rt=1 ;; esac
  printf '%s >%q 2>&1 || echo %q >>%q\n' "${r#*	}" "$out/logs/trace-$n.log" "trace $n: see $out/logs/trace-$n.log" \
    "$out/failed.txt" >>"$out/jobs-trace.txt"
done
if [ $need_rt = 1 ]; then
  if [ $dry = 1 ]; then
    plan "$here/scripts/build-workloads.sh" "$here/build"
  elif [ ! -x "$rt_bin/bzip2" ] || [ ! -x "$rt_bin/xz" ]; then
    echo "# building the instrumented bzip2 and xz (scripts/build-workloads.sh)" >&2
    JOBS=$jobs nice "$here/scripts/build-workloads.sh" "$here/build" >"$out/logs/build-workloads.log" 2>&1 ||
      die "scripts/build-workloads.sh failed: $(tail -1 "$out/logs/build-workloads.log")"
  fi
fi
run_jobs "$out/jobs-trace.txt" "tracing the real programs"

# 2. Profiles; 3. predictions and co-runs.
: >"$out/jobs-profile.txt"
: >"$out/jobs-corun.txt"
: >"$out/manifest.tsv"
for preset in "${presets[@]}"; do
  for pol in "${pols[@]}"; do
    d=$out/$preset/$pol
    [ $dry = 1 ] || mkdir -p "$d/groups"
    for ((i = 0; i < np; i++)); do
      case ${specs[i]} in
        wl:*) src=(--workload "${specs[i]#wl:}" --instructions "$budget") ;;
        trace:*) src=(--trace "${specs[i]#trace:}") ;;
      esac
      job "profile-$preset-$pol-${names[i]}" "$bin" profile --backend sim --preset "$preset" --policy "$pol" \
        "${src[@]}" -o "$d/${names[i]}" --name "${names[i]}" -q >>"$out/jobs-profile.txt"
    done
    for g in "${groups[@]}"; do
      read -ra idx <<<"$g"
      gname=$(for i in "${idx[@]}"; do printf '%s+' "${names[i]}"; done); gname=${gname%+}
      gd=$d/groups/$gname
      [ $dry = 1 ] || mkdir -p "$gd"
      profs=() targets=() budgets=() knd=() pn=()
      for i in "${idx[@]}"; do
        pn+=("${names[i]}")
        profs+=("$d/${names[i]}.profile.json")
        targets+=("$(target_of "$i")")
        knd+=("${kinds[i]}")
        case ${specs[i]} in wl:*) budgets+=("$budget") ;; *) budgets+=(1e15) ;; esac
      done
      bl=$(IFS=,; echo "${budgets[*]}")
      {
        job "predict-$preset-$pol-$gname" "$bin" predict "${profs[@]}" --preset "$preset" --policy "$pol" \
          -o "$gd/pred" --no-plot -q
        job "noprobe-$preset-$pol-$gname" "$bin" predict "${profs[@]}" --preset "$preset" --policy "$pol" \
          --no-probe -o "$gd/noprobe" --no-plot -q
        job "corun-$preset-$pol-$gname" "$bin" sim --corun --preset "$preset" --policy "$pol" -q \
          --window "$window" --instructions "$bl" -o "$gd/corun.json" "${targets[@]}"
      } >>"$out/jobs-corun.txt"
      # sim --corun's stdout is its log (the co-run time line)
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$preset" "$pol" "$gname" \
        "$(IFS=,; echo "${pn[*]}")" "$(IFS=,; echo "${knd[*]}")" "$gd/corun.json" "$out/logs/corun-$preset-$pol-$gname.log" \
        "$gd/pred.prediction.json" "$gd/noprobe.prediction.json" >>"$out/manifest.tsv"
    done
  done
done
ngroups=${#groups[@]}
echo "# plan: $np programs (${names[*]}), $ngroups groups ($((ngroups - nmix)) pairs, $nmix mixes of 4)," \
  "presets ${presets[*]}, policies ${pols[*]}, $budget instructions per synthetic run" >&2
run_jobs "$out/jobs-profile.txt" "profiles"
run_jobs "$out/jobs-corun.txt" "predictions and co-runs"
[ $dry = 0 ] || exit 0
python3 "$here/scripts/predict-compare.py" "$out/manifest.tsv" || die "scoring failed (predict-compare.py)"
