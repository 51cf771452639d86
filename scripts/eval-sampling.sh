#!/usr/bin/env bash
# The Gaussian set-sampling paper's evaluation (Table 1 / Fig. 4 method; docs/METHODS.md §5)
# in the simulator: for every workload and preset, a profiling map picks the
# Gaussian-25 sets (llcprobe map + llcprobe fit); then, at each probe
# intensity, a Global map (every set probed at once at that per-set rate)
# gives the reference G and the per-set counts every method is scored on:
#   Global, Continuous-128/25 (every aligned window), Random-128/25 (100
#   seeds), Gaussian-25 (the estimator fit records as its default, on fit's
#   default keys, auto) and beside it every estimator on the same 25 sets
#   (stratified-ratio, stratified means, ratio, the paper's scale-up), and
#   Gaussian-25 sigma2 (the sigma2 keys on every workload).
# D = |T - G| / G * 100 (paper eq. 8). Methods are compared at equal per-set
# rate because the simulator attributes every probe access to its set: the
# counts a subset would see alone are the Global run's counts of that subset
# (the probe of one set does not touch another set's lines).
# Placement: profile and measurement runs use the same simulator seed (same
# page placement: "same run" case) unless --restart, which changes the seed
# of the measurement runs (a restarted small-page target, docs/METHODS.md §5.4).
#
# On hardware (--backend timing|pmu|auto) the same method runs on this
# machine's LLC: the real programs run natively (larger inputs, restarted
# until each map is complete), the profile is a sweep map, each intensity a
# Global map at that clock-paced rate (timing: --mode global; pmu, which
# counts one set at a time, a sweep), and the occupancy part is left out
# (no ground truth). A backend that cannot map here stops the script before
# anything runs, with the backend's own measured reason.
#
# usage: scripts/eval-sampling.sh [options]
#   --quick        reduced configuration: synthetic workloads only, preset intel8
#                  only (the full suite traces 12 real programs under valgrind and
#                  runs amd32 too: hours on a shared machine); on hardware: xz and sqlite3
#   --restart      measurement maps with another page placement (simulator seed 2)
#   --restart-rates "R..."  beside the same-placement maps, measurement maps at these
#                  intensities with another page placement (seed 2): the restart
#                  case (docs/METHODS.md §5.4) in the same report
#   --program NAME=CMD  one more real program (repeatable): traced by `llcprobe
#                  trace` in the simulator, run natively on hardware; CMD is shell
#                  words (quotes are honoured)
#   --trace NAME=FILE   one more recorded trace (repeatable; simulator only)
#   --workload NAME=SPEC  one more synthetic workload, as `llcprobe map
#                  --workload` (repeatable; simulator only)
#   --no-suite     only the --program and --trace workloads
#   --synthetic-only  the suite's synthetic workloads only (no tracing)
#   --preset P     simulator preset (repeatable; default intel8, amd32)
#   --rates "R..." probe intensities, total probe accesses per simulated second
#                  (default "2.5e7 5e7 1e8 2e8 4e8")
#   --profile-rate R  rate of the profiling map: a number (default in the
#                  simulator 2.5e7), linear (the linear-regime search) or auto
#   --input-bytes N  size of the text the real programs read (default 60000)
#   --big-input-bytes N  size of the text that gzip, zstd and lz4 compress: their
#                  working set grows with it (default 1000000; on 60 KB they stay in
#                  amd32's 1 MiB L2 and the LLC never sees them)
#   --sort-lines N numbers sorted by sort -n (default 40000: ~1.7 MB of lines and
#                  line records, past amd32's L2; its trace grows ~1500 accesses a line)
#   --max-trace-accesses N  map only the first N data accesses of a longer trace
#                  (default 0: all): every map of a trace is simulated in full, ~10 maps
#                  per trace and preset, so a long trace costs hours on a shared machine
#   --recorder R   how the real programs are traced: lackey (default) or qemu
#                  (llcprobe trace --recorder: qemu is far faster, x86-64 only)
#   --setup-only   make the inputs and trace every real program, then stop
#   --no-occupancy leave out the occupancy part (calibrate + sample per workload)
#   --bin PATH     the llcprobe binary; --out DIR: where everything goes (reused)
#   --backend      sim (default) or a hardware backend, as `llcprobe map`
#   --map-args     extra options of every hardware map, e.g. "--llc 16x2048x8 --reserve 64"
#   --dry-run      print the commands of the mapping and fitting steps, run nothing
# Any part of the suite that cannot run (a program that cannot be traced, a
# map, a fit or a sample that fails) stops the evaluation with exit status 1:
# it never shrinks silently. A workload with no LLC signal at all (nothing
# to fit, docs/METHODS.md §2.5) is a result: it is listed and counted in the headline.
# Prints per workload the table and the in-sample check (each estimator
# applied to the profile map it was fitted from, against that map's own
# total), results per preset and per kind (synthetic / real), and ends
# with the headline lines.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/llcprobe
out=
quick=0
restart=0
backend=sim
map_args=()
dry=0
suite=1
setup_only=0
synthetic_only=0
occupancy=1
input_bytes=60000
big_input_bytes=1000000
sort_lines=40000
recorder=lackey
restart_rates=()
max_trace=0
profile_rate=
user_presets=()
user_progs=()
user_traces=()
user_workloads=()
rates=(2.5e7 5e7 1e8 2e8 4e8)
die() { echo "eval-sampling.sh: $*" >&2; exit 1; }
usage_err() { echo "eval-sampling.sh: $*" >&2; exit 2; }
need() { [ $# -ge 2 ] || usage_err "$1 needs a value"; }
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --restart) restart=1 ;;
    --bin) need "$@"; bin=$2; shift ;;
    --out) need "$@"; out=$2; shift ;;
    --backend) need "$@"; backend=$2; shift ;;
    --map-args) need "$@"; read -ra map_args <<<"$2"; shift ;;
    --dry-run) dry=1 ;;
    --no-suite) suite=0 ;;
    --synthetic-only) synthetic_only=1 ;;
    --setup-only) setup_only=1 ;;
    --no-occupancy) occupancy=0 ;;
    --preset) need "$@"; user_presets+=("$2"); shift ;;
    --rates) need "$@"; read -ra rates <<<"${2//,/ }"; shift; [ ${#rates[@]} -gt 0 ] || usage_err "--rates: no rate given" ;;
    --profile-rate) need "$@"; profile_rate=$2; shift ;;
    --input-bytes) need "$@"; input_bytes=$2; shift
      [[ $input_bytes =~ ^[1-9][0-9]*$ ]] || usage_err "--input-bytes: '$input_bytes' is not a positive whole number" ;;
    --big-input-bytes) need "$@"; big_input_bytes=$2; shift
      [[ $big_input_bytes =~ ^[1-9][0-9]*$ ]] || usage_err "--big-input-bytes: '$big_input_bytes' is not a positive whole number" ;;
    --max-trace-accesses) need "$@"; max_trace=$2; shift
      [[ $max_trace =~ ^[0-9]+$ ]] || usage_err "--max-trace-accesses: '$max_trace' is not a whole number" ;;
    --sort-lines) need "$@"; sort_lines=$2; shift
      [[ $sort_lines =~ ^[1-9][0-9]*$ ]] || usage_err "--sort-lines: '$sort_lines' is not a positive whole number" ;;
    --recorder) need "$@"; recorder=$2; shift
      case $recorder in lackey|qemu) ;; *) usage_err "--recorder: '$recorder' is lackey or qemu" ;; esac ;;
    --restart-rates) need "$@"; read -ra restart_rates <<<"${2//,/ }"; shift
      [ ${#restart_rates[@]} -gt 0 ] || usage_err "--restart-rates: no rate given" ;;
    --program|--trace|--workload)
      need "$@"
      [[ $2 =~ ^[A-Za-z0-9_.-]+=.+ ]] || usage_err "$1: '$2' is not NAME=VALUE (NAME: letters, digits, _ . -)"
      case $1 in --program) user_progs+=("$2") ;; --trace) user_traces+=("$2") ;; *) user_workloads+=("$2") ;; esac
      shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) usage_err "unknown option $1" ;;
  esac
  shift
done
for r in "${rates[@]}" "${restart_rates[@]}"; do [[ $r =~ ^[0-9.]+([eE][+-]?[0-9]+)?$ ]] || usage_err "--rates: '$r' is not a number"; done
case $backend in sim|timing|pmu|auto) ;; *) usage_err "unknown backend $backend (sim, timing, pmu, auto)" ;; esac
[ "$backend" = sim ] || [ $restart = 0 ] || usage_err "--restart is for the simulator (every hardware run is a restart)"
[ "$backend" = sim ] || [ ${#restart_rates[@]} = 0 ] || usage_err "--restart-rates is for the simulator (every hardware run is a restart)"
[ $restart = 0 ] || [ ${#restart_rates[@]} = 0 ] || usage_err "--restart and --restart-rates: give one"
[ "$backend" != sim ] || [ ${#map_args[@]} = 0 ] || usage_err "--map-args is for hardware backends"
[ "$backend" = sim ] || [ ${#user_traces[@]} = 0 ] || usage_err "--trace is for the simulator (hardware runs programs)"
[ "$backend" = sim ] || [ ${#user_workloads[@]} = 0 ] || usage_err "--workload is for the simulator"
[ "$backend" = sim ] || [ ${#user_presets[@]} = 0 ] || usage_err "--preset is for the simulator"
[ $suite = 1 ] || [ $((${#user_progs[@]} + ${#user_traces[@]} + ${#user_workloads[@]})) -gt 0 ] \
  || usage_err "--no-suite needs --program, --trace or --workload"
[ -x "$bin" ] || die "$bin: not built (scripts/setup.sh)"
# The profile's rate: the evaluation's lowest intensity. The linear-regime
# search (--profile-rate linear) lands near 2e9-4e9 on intel8's zipf
# (q p95 0.16 at 1.8e9), where a map simulates ~100x the probe accesses
# of one at 2.5e7: hours per suite on a shared machine.
[ "$backend" != sim ] || profile_rate=${profile_rate:-2.5e7}
out=${out:-$(mktemp -d /tmp/eval-sampling.XXXXXX)}
mkdir -p "$out"
rm -f "$out/skipped.txt"
echo "# results in $out" >&2
exec 3>&1 # the dry run's plan goes here, whatever a step redirects
run() { # the command, or with --dry-run its words
  if [ $dry = 1 ]; then { printf '%q ' "$@"; echo; } >&3; else "$@"; fi
}

# Probe intensities: total probe accesses per simulated second over all sets
# (per-set rate = rate / sets).
synthetic=(
  "gauss30=gaussian:size=16M,cv=0.3"
  "gauss50=gaussian:size=16M,cv=0.5"
  "zipf=zipf:size=32M,alpha=0.8"
  "hotsets=hotsets:size=16M,frac=0.2,weight=0.6"
  "uniform=uniform:size=12M"
  "stream=stream:size=24M"
)
workloads=()
declare -A kind=()
add() { # NAME=SPEC KIND
  local name=${1%%=*}
  [ -z "${kind[$name]:-}" ] || usage_err "workload name $name given twice"
  kind[$name]=$2
  workloads+=("$1")
}
presets=(intel8)
if [ "$backend" != sim ]; then
  # This machine's LLC, one "preset"; the programs natively, on inputs
  # large enough to reach the LLC (8 MB: the first bytes of llcprobe itself
  # and the license texts; 200 000 rows).
  presets=(hw)
  input=$out/input.bin
  if [ ! -s "$input" ]; then
    cat "$bin" /usr/share/common-licenses/* 2>/dev/null | head -c 8000000 >"$input" || true
    [ -s "$input" ] || die "could not write the program input $input"
  fi
  echo "create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c limit 200000)
insert into t select x, hex(randomblob(40)) from c; select count(*), sum(length(b)) from t where a % 7 = 3;" >"$out/sqlite.sql"
  if [ $suite = 1 ]; then
    add "xz=prog:xz -1 -c -T1 $input" real
    add "sqlite3=prog:sqlite3 -batch -init $out/sqlite.sql :memory: .quit" real
    [ $quick = 1 ] || { add "gzip=prog:gzip -1 -c $input" real; add "bzip2=prog:bzip2 -1 -c $input" real
                        add "zstd=prog:zstd -1 -c -T1 $input" real; }
  fi
  for p in "${user_progs[@]}"; do add "${p%%=*}=prog:${p#*=}" real; done
else
  [ $quick = 1 ] || presets=(intel8 amd32)
  [ ${#user_presets[@]} = 0 ] || presets=("${user_presets[@]}")
  # Real programs from Debian packages, each traced once by llcprobe
  # itself (short runs: the tracer is ~4000x slower than native). Chosen
  # to cover the kinds of program users run: compression (xz, gzip,
  # bzip2, zstd, lz4), a database (sqlite3: a table scan; an index build
  # and a join), sorting (sort -n), interpreters (perl, tclsh), text
  # processing (awk, jq).
  input=$out/input.txt
  if [ ! -s "$input" ] || [ "$(stat -c %s "$input")" != "$input_bytes" ]; then
    # head closes the pipe after N bytes: the writer's SIGPIPE (141) is expected
    for f in /usr/share/common-licenses/*; do cat "$f"; done 2>/dev/null | head -c "$input_bytes" >"$input" || true
    [ -s "$input" ] || die "no text in /usr/share/common-licenses for the program inputs"
  fi
  trace() { # NAME -- PROGRAM...
    local name=$1; shift 2
    if [ ! -s "$out/$name.trace" ]; then
      echo "# tracing $name: $*" >&2
      if ! run "$bin" trace --recorder "$recorder" -o "$out/$name.trace" -- "$@" >"$out/$name.trace.out" 2>"$out/$name.trace.err" </dev/null; then
        die "tracing $name failed ($*): $(tail -1 "$out/$name.trace.err")"
      fi
    fi
    add "$name=trace:$out/$name.trace" real
  }
  if [ $suite = 1 ] && [ $quick = 0 ] && [ $synthetic_only = 0 ]; then
    # The streaming compressors (gzip, zstd, lz4) and sort keep a working
    # set that grows with their input: on --input-bytes of text they stay
    # in amd32's 1 MiB L2 (no LLC signal), so they read --big-input-bytes:
    # text of the licences' words in a seeded random order (not the
    # licences repeated, which a long window would find as one match), and
    # --sort-lines 9-digit numbers. zstd runs in one thread (the qemu
    # recorder traces one). The rest keep the short input (their traces
    # grow 100-1300 accesses per byte).
    big=$out/big.txt
    if [ ! -s "$big" ] || [ "$(stat -c %s "$big")" != "$big_input_bytes" ]; then
      cat /usr/share/common-licenses/* 2>/dev/null | tr -s ' \t\n' '\n\n\n' | awk -v n="$big_input_bytes" '
        NF { w[k++] = $1 } END { srand(1); s = 0; c = 0
          while (s < n) { x = w[int(rand() * k)]; sep = (++c % 12 == 0) ? "\n" : " "; printf "%s%s", x, sep; s += length(x) + 1 } }' \
        | head -c "$big_input_bytes" >"$big" || true
      [ "$(stat -c %s "$big")" = "$big_input_bytes" ] || die "could not write $big_input_bytes bytes of text to $big"
    fi
    nums=$out/numbers.txt
    if [ ! -s "$nums" ] || [ "$(stat -c %s "$nums")" != $((sort_lines * 10)) ]; then
      awk -v n="$sort_lines" 'BEGIN { srand(1); for (i = 0; i < n; i++) printf "%09d\n", int(rand() * 1e9) }' >"$nums"
    fi
    trace xz -- xz -1 -c "$input"
    trace gzip -- gzip -1 -c "$big"
    trace bzip2 -- bzip2 -1 -c "$input"
    trace sqlite3 -- sqlite3 :memory: "create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c limit 3000) insert into t select x, hex(randomblob(40)) from c; select count(*), sum(length(b)) from t where a % 7 = 3;"
    trace zstd -- zstd -3 -c --single-thread --no-asyncio "$big"
    trace lz4 -- lz4 -1 -c "$big"
    trace sort -- sort -n "$nums"
    trace sqlite-join -- sqlite3 :memory: "create table a(k integer, v text); create table b(k integer, w real); with recursive c(x) as (select 1 union all select x+1 from c limit 2000) insert into a select x, hex(randomblob(16)) from c; insert into b select k * 7 % 2000, k * 0.5 from a; create index ib on b(k); select count(*), sum(w) from a join b on a.k = b.k group by a.k % 10 order by 2 desc;"
    trace perl -- perl -e 'my %c; while (<>) { $c{lc $_}++ for /\w+/g } my @k = sort { $c{$b} <=> $c{$a} || $a cmp $b } keys %c; print "$_ $c{$_}\n" for @k[0..19];' "$input"
    [ -s "$out/words.tcl" ] || printf '%s\n' 'set f [open [lindex $argv 0]]' \
      'foreach w [split [read $f] " \n\t"] { if {$w ne ""} { dict incr d [string tolower $w] } }' 'puts [dict size $d]' >"$out/words.tcl"
    trace tclsh -- tclsh "$out/words.tcl" "$input"
    trace awk -- awk '{ for (i = 1; i <= NF; i++) c[tolower($i)]++ } END { n = 0; for (w in c) n++; print n }' "$input"
    trace jq -- jq -R -s 'split("\n") | map(select(length > 0) | length) | {lines: length, max: max, total: add}' "$input"
  fi
  # Synthetic workloads after the real programs: a run cut short has the
  # programs first.
  if [ $suite = 1 ]; then
    for w in "${synthetic[@]:0:$([ $quick = 1 ] && echo 4 || echo 6)}"; do add "$w" synthetic; done
  fi
  for p in "${user_workloads[@]}"; do add "$p" synthetic; done
  for p in "${user_traces[@]}"; do
    f=${p#*=}
    [ -s "$f" ] || die "--trace ${p%%=*}: $f: no such trace (or empty)"
    add "${p%%=*}=trace:$f" real
  done
  for p in "${user_progs[@]}"; do
    eval "words=(${p#*=})" || usage_err "--program ${p%%=*}: cannot split '${p#*=}' into words"
    trace "${p%%=*}" -- "${words[@]}"
  done
fi
[ ${#workloads[@]} -gt 0 ] || usage_err "no workload to evaluate"
if [ $setup_only = 1 ]; then
  echo "set-up done: ${#workloads[@]} workloads (${workloads[*]%%=*}), presets ${presets[*]}"
  exit 0
fi

target_args() { # SPEC -> the llcprobe target options
  case $1 in
    trace:*) echo "--trace ${1#trace:}" ;;
    prog:*) echo "--repeat --target-output /dev/null -- ${1#prog:}" ;;
    *) echo "--workload $1" ;;
  esac
}
# MAP PREFIX SPEC OPTS...: one map of SPEC's target on the chosen backend
map() {
  local prefix=$1 spec=$2; shift 2
  # shellcheck disable=SC2046
  if [ "$backend" = sim ]; then
    run "$bin" map --backend sim --preset "$preset" "$@" -o "$prefix" -q $(target_args "$spec") >/dev/null
  else
    run "$bin" map --backend "$backend" "${map_args[@]}" "$@" -o "$prefix" -q $(target_args "$spec") >/dev/null
  fi
}

# On hardware: can the backend map here at all? Its self-test says why not,
# in one line, before an hour of runs is started.
global_args=()
if [ "$backend" != sim ]; then
  if [ $dry = 0 ]; then
    if ! "$bin" map --backend "$backend" "${map_args[@]}" --mode sets --sets 0 --sweeps 1 --dwell 0.01 -o "$out/preflight" \
         -q -- sleep 2 >/dev/null 2>"$out/preflight.err"; then
      echo "eval-sampling.sh: the $backend backend cannot map on this machine: $(tail -1 "$out/preflight.err")" >&2
      exit 1
    fi
    backend=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["backend"]["name"])' "$out/preflight.map.json")
  fi
  [ "$backend" = pmu ] || global_args=(--mode global)
fi

prof_args=()
[ -z "$profile_rate" ] || prof_args=(--rate "$profile_rate")
# A map done by an earlier run is reused only when complete (a stopped map
# leaves its partial map behind).
have_map() { [ -s "$1.map.json" ] && grep -q '"complete": *true' "$1.map.json"; }
# --max-trace-accesses: a trace longer than the cap is mapped over its first
# N accesses by giving the dwell the simulator would give a trace of N
# accesses (0.98 N over the sweeps at the default target rate, 1e7 accesses
# per simulated second; probe/session/sim.c), so the profile and every
# measurement see the same part of the program.
cap_args() { # SPEC SWEEPS -> --dwell S, or nothing
  local f n
  case $1 in trace:*) f=${1#trace:} ;; *) return 0 ;; esac
  [ "$max_trace" -gt 0 ] || return 0
  n=$("$bin" trace --show "$f" | awk '/^(loads|stores|modifies):/ { s += $2 } END { printf "%d", s }')
  [ -n "$n" ] || die "trace --show $f: no access counts"
  [ "$n" -gt "$max_trace" ] || return 0
  awk -v n="$max_trace" -v s="$2" 'BEGIN { printf "--dwell %.9g\n", 0.98 * n / s / 1e7 }'
}
for preset in "${presets[@]}"; do
  for w in "${workloads[@]}"; do
    name=${w%%=*}; spec=${w#*=}
    base=$out/$preset-$name
    # shellcheck disable=SC2046
    have_map "$base.prof" || map "$base.prof" "$spec" --seed 1 "${prof_args[@]}" $(cap_args "$spec" 2)
    # A target whose lines never reach the LLC (a small footprint under
    # amd32's 1 MiB L2) gives no probe misses and nothing to fit (spec
    # docs/METHODS.md §2.5): that is a result, listed and counted; any other failure of
    # fit stops the evaluation.
    if ! run "$bin" fit "$base.prof.map.json" -o "$base" -q --no-plots 2>"$base.fit.err"; then
      grep -q "no measurable probe misses" "$base.fit.err" || die "fit $base.prof.map.json failed: $(tail -1 "$base.fit.err")"
      echo "$preset $name (${kind[$name]}): no LLC signal: $(tail -1 "$base.fit.err")" >>"$out/skipped.txt"
      echo "# $preset $name: no LLC signal, nothing to fit" >&2
      rm -f "$base.fit.json" "$base.sigma2.fit.json"
      continue
    fi
    # The sigma2 keys on every workload, scored beside fit's default (auto:
    # sigma2 where the Gaussian fits, R² > 0.85, else quantile keys, spec
    # docs/METHODS.md §3.1), on the same maps.
    run "$bin" fit "$base.prof.map.json" --mode sigma2 -o "$base.sigma2" -q --no-plots 2>"$base.sigma2.fit.err" \
      || die "fit --mode sigma2 $base.prof.map.json failed: $(tail -1 "$base.sigma2.fit.err")"
    # Both ways of picking a key's sets (nearest the key; nearest its
    # stratum's mean), whichever fit takes by default.
    for pick in key mean; do
      run "$bin" fit "$base.prof.map.json" --pick $pick -o "$base.pick$pick" -q --no-plots 2>"$base.pick$pick.fit.err" \
        || die "fit --pick $pick $base.prof.map.json failed: $(tail -1 "$base.pick$pick.fit.err")"
    done
    seed=1; [ $restart = 1 ] && seed=2
    for rate in "${rates[@]}"; do
      m=$base.r$rate; [ $restart = 0 ] || m=$base.restart.r$rate
      # shellcheck disable=SC2046
      have_map "$m" || map "$m" "$spec" --seed $seed --rate "$rate" --sweeps 1 "${global_args[@]}" $(cap_args "$spec" 1)
    done
    for rate in "${restart_rates[@]}"; do
      m=$base.restart.r$rate
      # shellcheck disable=SC2046
      have_map "$m" || map "$m" "$spec" --seed 2 --rate "$rate" --sweeps 1 "${global_args[@]}" $(cap_args "$spec" 1)
    done
    echo "# $preset $name done" >&2
  done
done

[ $dry = 0 ] || exit 0
rm -f "$out/headline.txt"
kinds=(); for w in "${workloads[@]}"; do kinds+=("${w%%=*}:${kind[${w%%=*}]}"); done
python3 - "$out" "$restart" "${presets[*]}" "${rates[*]}" "${kinds[*]}" "$backend" "${restart_rates[*]}" <<'PY'
import json, random, sys, statistics, os
out, restart, presets, rates = sys.argv[1], sys.argv[2] == "1", sys.argv[3].split(), sys.argv[4].split()
kind = dict(w.rsplit(":", 1) for w in sys.argv[5].split())
names = list(kind)
backend = sys.argv[6]
restart_rates = sys.argv[7].split()
nan = float("nan")
# Gaussian-25 is the estimator fit records as its default (the headline
# row); every estimator of the same selection is scored beside it.
EST = ["stratified-ratio", "stratified", "ratio", "scale-up"]
methods = ["Global", "Continuous-128", "Random-128", "Gaussian-25"] + ["G-25 " + e for e in EST] + [
    "G-25 key-pick st-ratio", "G-25 key-pick strat", "G-25 mean-pick st-ratio", "G-25 mean-pick strat", "G-25 sigma2",
    "Continuous-25", "Random-25"]
D = {m: [] for m in methods}
DR = {m: [] for m in methods}  # the restart case (--restart-rates)
perR = {}
per, r2, keys, default_est, insample = {}, {}, {}, {}, {}
def dev(t, g): return abs(t - g) / g * 100 if g else nan
def merged(sel):
    """Strata after the weight of each stratum without selected sets went
    to its neighbour towards the centre (as fit/estimate.c): per surviving
    group its weight, its profile sum and its selected units."""
    st = sel["strata"]; cnt = len(st["pi"]); centre = st["centre"]
    pi = list(st["pi"]); ps = list(st.get("profile_sum") or [nan] * cnt)
    groups = [[] for _ in range(cnt)]
    for u in sel["units"]: groups[u["stratum"]].append(u)
    for g in sorted(range(cnt), key=lambda g: -abs(g - centre)):
        if not groups[g] and g != centre:
            nb = g + 1 if g < centre else g - 1
            pi[nb] += pi[g]; ps[nb] += ps[g]; pi[g] = ps[g] = 0
    if not groups[centre] and pi[centre] > 0:
        for d in range(1, cnt):
            nb = [g for g in (centre - d, centre + d) if 0 <= g < cnt and groups[g]]
            if nb:
                pi[nb[0]] += pi[centre]; ps[nb[0]] += ps[centre]; pi[centre] = ps[centre] = 0
                break
    return [(pi[g], ps[g], groups[g]) for g in range(cnt) if groups[g]]
def estimate(est, sel, x):
    """x: unit -> value in the run scored."""
    units = sel["units"]; N = sel["n_usable"]
    if est == "scale-up":
        return N / len(units) * sum(x[u["unit"]] for u in units)
    if est == "ratio":
        sp = sum(u["profile"] for u in units)
        return sel["profile_total"] * sum(x[u["unit"]] for u in units) / sp if sp else nan
    tot = 0.0
    for pi, ps, us in merged(sel):
        mx = sum(x[u["unit"]] for u in us) / len(us)
        mp = sum(u["profile"] for u in us) / len(us)
        # per-stratum ratio to the profile; a stratum whose chosen sets all
        # read 0 in the profile falls back to its mean
        tot += ps * mx / mp if est == "stratified-ratio" and mp > 0 else N * pi * mx
    return tot
def fitted(path):
    return json.load(open(path))["selection"] if os.path.exists(path) else None
for preset in presets:
    for name in names:
        base = f"{out}/{preset}-{name}"
        sel = fitted(base + ".fit.json")
        if not sel: continue
        fit = json.load(open(base + ".fit.json"))
        r2[(preset, name)] = fit["families"][0]["r2"]
        keys[(preset, name)] = sel["mode"]
        default_est[(preset, name)] = sel.get("estimator", "stratified")
        sel2 = fitted(base + ".sigma2.fit.json")
        picks = {p: fitted(f"{base}.pick{p}.fit.json") for p in ("key", "mean")}
        # In-sample: each estimator on the profile map it was fitted from
        # must give back that map's own total.
        prof = {u["unit"]: u["profile"] for u in sel["units"]}
        insample[(preset, name)] = {e: dev(estimate(e, sel, prof), sel["profile_total"]) for e in EST}
        for p, sp in picks.items():
            if sp:
                insample[(preset, name)][p + "-pick strat"] = dev(
                    estimate("stratified", sp, {u["unit"]: u["profile"] for u in sp["units"]}), sp["profile_total"])
        runs = [(f"{base}.restart.r{r}.map.json" if restart else f"{base}.r{r}.map.json", D, per) for r in rates]
        runs += [(f"{base}.restart.r{r}.map.json", DR, perR) for r in restart_rates]
        for mp, D_, per_ in runs:
            m = json.load(open(mp)); x = m["sets"]["misses"]; N = len(x); G = sum(x)
            if G == 0: continue
            row = {"Global": 0.0}
            for e in EST: row["G-25 " + e] = dev(estimate(e, sel, x), G)
            row["Gaussian-25"] = row["G-25 " + default_est[(preset, name)]]
            if sel2: row["G-25 sigma2"] = dev(estimate(default_est[(preset, name)], sel2, x), G)
            for p, sp in picks.items():
                if sp:
                    row[f"G-25 {p}-pick st-ratio"] = dev(estimate("stratified-ratio", sp, x), G)
                    row[f"G-25 {p}-pick strat"] = dev(estimate("stratified", sp, x), G)
            for n in (128, 25):
                ws = [dev(N / n * sum(x[j * n:(j + 1) * n]), G) for j in range(N // n)]
                row[f"Continuous-{n}"] = statistics.mean(ws)
                rs = []
                for seed in range(100):
                    pick = random.Random(seed).sample(range(N), n)
                    rs.append(dev(N / n * sum(x[k] for k in pick), G))
                row[f"Random-{n}"] = statistics.mean(rs)
            for k, v in row.items():
                D_[k].append(v); per_.setdefault((preset, name, k), []).append(v)
def mean(v): return statistics.mean(v) if v else nan
placement = ("restarted target: another page placement than the profile's" if restart
             else "same page placement as the profile")
if backend == "sim":
    print(f"the Gaussian set-sampling paper Table 1 method, simulator ({placement});")
else:
    print(f"the Gaussian set-sampling paper Table 1 method, this machine's LLC, {backend} backend (every map a new run of the program);")
print("D = |T - G| / G in %%, over workloads x %d intensities (%s) x presets %s" % (len(rates), " ".join(rates), ",".join(presets)))
print("(Continuous: mean over aligned windows; Random: mean over 100 seeds; Gaussian-25: the estimator fit")
print(" records as its default, %s; G-25 <estimator>: every estimator on the same 25 sets)" %
      ",".join(sorted(set(default_est.values()))))
print()
print("per workload (average D over the intensities; in-sample: the estimator on its own profile map):")
short = {"Continuous-128": "Cont-128", "Random-128": "Rand-128", "Gaussian-25": "G-25",
         "G-25 stratified-ratio": "G25 st-ratio", "G-25 stratified": "G25 strat", "G-25 ratio": "G25 ratio",
         "G-25 scale-up": "G25 scaleup", "G-25 sigma2": "G25 sigma2", "G-25 mean-pick st-ratio": "G25 mp-ratio",
         "G-25 mean-pick strat": "G25 mp-strat", "G-25 key-pick st-ratio": "G25 kp-ratio",
         "G-25 key-pick strat": "G25 kp-strat", "Continuous-25": "Cont-25", "Random-25": "Rand-25"}
cols = methods[1:]
print(f"{'preset':7s} {'workload':12s} {'kind':9s} {'R2':>6s} {'keys':>8s} {'in-s D':>7s} {'in-s strat':>10s} {'in-s kp-st':>10s} {'in-s mp-st':>10s} "
      + " ".join(f"{short[k]:>12s}" for k in cols) + f" {'G25/R128':>8s}")
ratios = {}
for (p, n) in sorted(r2):
    v = r2[(p, n)]
    avg = {k: mean(per.get((p, n, k), [])) for k in cols}
    ratios[(p, n)] = avg["Gaussian-25"] / avg["Random-128"] if avg["Random-128"] else nan
    ins = insample[(p, n)]
    print(f"{p:7s} {n:12s} {kind[n]:9s} {v if v is not None else nan:6.3f} {keys[(p, n)]:>8s} "
          f"{ins[default_est[(p, n)]]:7.3f} {ins['stratified']:10.3f} {ins.get('key-pick strat', nan):10.3f} "
          f"{ins.get('mean-pick strat', nan):10.3f} " + " ".join(f"{avg[k]:12.2f}" for k in cols)
          + f" {ratios[(p, n)]:8.2f}")
skipped = f"{out}/skipped.txt"
nosig = sorted(set(l for l in open(skipped).read().splitlines() if l.split()[:1] and l.split()[0] in presets)
               if os.path.exists(skipped) else [])
for line in nosig: print(f"no LLC signal, nothing to fit (docs/METHODS.md §2.5): {line}")
print()
print("per preset and kind (average D %; worst D of Gaussian-25; worst G-25/Rand-128 ratio of a workload):")
main = ["Gaussian-25", "Random-128", "Continuous-128", "G-25 stratified-ratio", "G-25 stratified", "G-25 ratio",
        "G-25 scale-up", "G-25 key-pick st-ratio", "G-25 key-pick strat", "G-25 mean-pick st-ratio",
        "G-25 mean-pick strat", "Random-25"]
print(f"{'preset':7s} {'kind':9s} {'n':>3s} " + " ".join(f"{short[k]:>12s}" for k in main) + f" {'G25 worst':>9s} {'R128 worst':>10s} {'max ratio':>9s}")
groups = [(p, k) for p in presets for k in ("synthetic", "real", "all")]
summary = {}
for p, k in groups:
    ws = [(pp, n) for (pp, n) in r2 if pp == p and (k == "all" or kind[n] == k)]
    if not ws: continue
    vals = {m: [v for (pp, n) in ws for v in per.get((pp, n, m), [])] for m in main}
    worst = max(vals["Gaussian-25"]) if vals["Gaussian-25"] else nan
    worst_r = max(vals["Random-128"]) if vals["Random-128"] else nan
    mr = max(ratios[w] for w in ws)
    summary[(p, k)] = (mean(vals["Gaussian-25"]), mean(vals["Random-128"]), worst, mr, worst_r)
    print(f"{p:7s} {k:9s} {len(ws):3d} " + " ".join(f"{mean(vals[m]):12.2f}" for m in main)
          + f" {worst:9.2f} {worst_r:10.2f} {mr:9.2f}")
summaryR = {}
if restart_rates:
    print()
    print("restart case: measurement maps with another page placement (seed 2) than the profile's, at %s" % " ".join(restart_rates))
    # beside the default, the estimators that do not lean on each chosen
    # set's own profile value (which a new placement makes another set's)
    rm = ("Gaussian-25", "G-25 stratified", "G-25 scale-up", "Random-128", "Random-25")
    rh = "".join(f" {short[k]:>11s}" for k in rm)
    print(f"{'preset':7s} {'workload':12s} {'kind':9s}{rh} {'G25/R128':>8s}")
    for (p, n) in sorted(r2):
        v = {k: mean(perR.get((p, n, k), [])) for k in rm}
        print(f"{p:7s} {n:12s} {kind[n]:9s}" + "".join(f" {v[k]:11.2f}" for k in rm)
              + f" {v['Gaussian-25'] / v['Random-128'] if v['Random-128'] else nan:8.2f}")
    print(f"{'preset':7s} {'kind':9s} {'n':>3s}{rh} {'G25 worst':>9s} {'R128 worst':>10s}")
    for p, k in groups:
        ws = [(pp, n) for (pp, n) in r2 if pp == p and (k == "all" or kind[n] == k)]
        vals = {m: [v for (pp, n) in ws for v in perR.get((pp, n, m), [])] for m in rm}
        if not vals["Gaussian-25"]: continue
        summaryR[(p, k)] = (mean(vals["Gaussian-25"]), mean(vals["Random-128"]), max(vals["Gaussian-25"]))
        print(f"{p:7s} {k:9s} {len(ws):3d}" + "".join(f" {mean(vals[m]):11.2f}" for m in rm)
              + f" {max(vals['Gaussian-25']):9.2f} {max(vals['Random-128']):10.2f}")
print()
print("all workloads and presets pooled:")
print(f"{'method':24s} {'avg D %':>9s} {'worst D %':>10s}")
for k in methods:
    if D[k]: print(f"{k:24s} {mean(D[k]):9.2f} {max(D[k]):10.2f}")
with open(f"{out}/table.dat", "w") as f:
    for i, k in enumerate(k for k in methods[1:] if D[k]):
        f.write(f"{i} \"{k}\" {mean(D[k]):.4f} {max(D[k]):.4f}\n")
print()
lines = []
for (p, k), (g, r, w, mr, wr) in sorted(summary.items()):
    if k == "all": continue
    lines += [f"D_avg_gaussian25_{p}_{k}: {g:.2f} %", f"D_avg_random128_{p}_{k}: {r:.2f} %",
              f"D_worst_gaussian25_{p}_{k}: {w:.2f} %", f"D_worst_random128_{p}_{k}: {wr:.2f} %",
              f"ratio_max_g25_r128_{p}_{k}: {mr:.2f}"]
for (p, k), (g, r, w) in sorted(summaryR.items()):
    if k == "all": continue
    lines += [f"D_avg_gaussian25_restart_{p}_{k}: {g:.2f} %", f"D_avg_random128_restart_{p}_{k}: {r:.2f} %",
              f"D_worst_gaussian25_restart_{p}_{k}: {w:.2f} %"]
ins_max = max(v[default_est[w]] for w, v in insample.items()) if insample else nan
lines += [f"D_avg_gaussian25_sigma2: {mean(D['G-25 sigma2']):.2f} %",
          f"D_avg_continuous128: {mean(D['Continuous-128']):.2f} %", f"D_avg_continuous25: {mean(D['Continuous-25']):.2f} %",
          f"D_avg_random25: {mean(D['Random-25']):.2f} %",
          f"R2_median: {statistics.median([v for v in r2.values() if v is not None] or [nan]):.3f}",
          f"workloads_no_signal: {len(nosig)}",
          f"D_insample_max_gaussian25: {ins_max:.3f} %",
          f"D_worst_gaussian25: {max(D['Gaussian-25'] or [nan]):.2f} %",
          f"D_avg_random128: {mean(D['Random-128']):.2f} %",
          f"D_avg_gaussian25: {mean(D['Gaussian-25']):.2f} %"]
open(f"{out}/headline.txt", "w").write("\n".join(lines) + "\n")
PY
gnuplot -e "set terminal pngcairo size 900,500; set output '$out/eval-sampling.png'; set style fill solid 0.6; set boxwidth 0.4; set ylabel 'deviation D (%)'; set title 'the Gaussian set-sampling paper method in the simulator: average and worst D per method'; set xtics rotate by -20; plot '$out/table.dat' using (\$1-0.2):3:xtic(2) with boxes title 'average', '' using (\$1+0.2):4 with boxes title 'worst'" 2>/dev/null \
  || echo "# no PNG (gnuplot failed)" >&2
echo "# plot: $out/eval-sampling.png" >&2
cat "$out/headline.txt"
if [ "$backend" != sim ] || [ $occupancy = 0 ]; then
  # no ground truth of the target's occupancy on hardware
  [ $occupancy = 0 ] || echo "occupancy_mae_pct_llc: n/a % (hardware: no true occupancy to compare with)"
  exit 0
fi
# Occupancy: one calibration per preset (llcprobe calibrate: the
# walk-length search against a co-runner holding k lines), then `sample
# --random 25 --calibration` per workload against the simulator's true
# occupancy over the search; MAE in % of the LLC over workloads x presets.
# A trace replays from its start whenever it ends (sample --calibration).
for preset in "${presets[@]}"; do
  [ -s "$out/$preset.calib.json" ] || "$bin" calibrate --backend sim --preset "$preset" -o "$out/$preset" -q >/dev/null
  for w in "${workloads[@]}"; do
    name=${w%%=*}; spec=${w#*=}
    # shellcheck disable=SC2046
    [ -s "$out/$preset-$name.occ.sample.json" ] || "$bin" sample --backend sim --preset "$preset" \
      $(target_args "$spec") --random 25 --intervals 4 --calibration "$out/$preset.calib.json" \
      -o "$out/$preset-$name.occ" -q >/dev/null 2>"$out/$preset-$name.occ.err" \
      || die "occupancy: sample of $preset $name failed: $(tail -1 "$out/$preset-$name.occ.err")"
  done
done
python3 - "$out" "${presets[*]}" "$(printf '%s ' "${workloads[@]%%=*}")" <<'PY'
import json, sys
out, presets, names = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
err = []
for p in presets:
    for n in names:
        try:
            t = json.load(open(f"{out}/{p}-{n}.occ.sample.json"))["total"]
        except OSError:
            continue
        t = json.load(open(f"{out}/{p}-{n}.occ.sample.json"))["total"]
        err.append(abs(t["occupancy_pct_llc"] - t["true_occupancy_pct_llc"]))
        print(f"# occupancy {p} {n}: estimate {t['occupancy_pct_llc']:.2f} %, true {t['true_occupancy_pct_llc']:.2f} %",
              file=sys.stderr)
print(f"occupancy_mae_pct_llc: {sum(err) / len(err):.2f} %" if err else "occupancy_mae_pct_llc: n/a %")
PY
