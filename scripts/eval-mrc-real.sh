#!/usr/bin/env bash
# eval-mrc-real.sh: miss-ratio curves of real programs against valgrind
# cachegrind (part 3 of scripts/eval-mrc.sh, which runs it last).
#
#  Real programs against cachegrind (the "_real" lines): each program
#   of the suite (or --program) runs under `valgrind --tool=cachegrind
#   --cache-sim=yes --LL=S,16,64` for S = 512 KiB .. 32 MiB (7 runs, kept
#   in BUILD_DIR/eval-mrc-cg/ keyed by binary, command and input); the
#   reference is cachegrind's data-side LL miss ratio, LLd misses / D refs.
#   Against it: `mrc --sampler qemu` on the same (uninstrumented) binary,
#   and `mrc --sampler rt` on the program rebuilt with llcprobe-cc where
#   the suite has a rebuild (scripts/build-instrumented.sh; built when
#   missing), both with the tool's default rate choice, StatStack with
#   --ways 16 (cachegrind's LL is a 16-way LRU here), EVAL_REAL_SEEDS
#   seeds (default 1,2,3). Error per program and sampler: the mean over
#   seeds and over the sizes where cachegrind's ratio is >= 1e-3 of
#   |mrc - cg| / cg, in %. mrc_rel_err_pct_real is the mean over all
#   (program, sampler) pairs. What differs between the two models is
#   listed under the table (docs/RESULTS.md §6).
#   Suite (chosen to vary the kind of program: three compressors with
#   different match structures, a database, a sort utility, three
#   interpreters' hash tables and a JSON processor; every one with a
#   working set above 512 KiB on the generated inputs): xz -1, bzip2 -9,
#   zstd -9, sqlite3, sort, perl, gawk, jq, tclsh; instrumented rebuilds
#   of xz-utils, bzip2, zstd (libzstd), gawk and sqlite3. Inputs are made
#   here: 4 MiB of words drawn from a skewed 20000-word vocabulary
#   (seeded awk), a 60000-record JSON array, an SQL script.
#   A program of the suite that fails (or whose rebuild cannot be built)
#   fails the script: no headline from part of the suite.
#
# Usage: scripts/eval-mrc-real.sh [--quick] [--no-suite] [--program NAME=CMD]...
#            [--rt-program NAME=CMD]... [--samplers LIST] [--headlines FILE]
#            [BUILD_DIR]
#   --quick        a small suite: xz -1 on 1 MiB (qemu) and a pointer walk
#                  built here with cc and with llcprobe-cc (qemu and rt);
#                  sizes 512 KiB, 2 MiB, 8 MiB; one seed (ctest runs this)
#   --no-suite     only the programs given with --program
#   --program NAME=CMD     also measure CMD (a shell-quoted command line, run
#                  with stdin /dev/null) with the qemu sampler
#   --rt-program NAME=CMD  CMD runs NAME's build with libllcprobe-rt: also
#                  measured with the rt sampler against NAME's reference
#   --samplers LIST  qemu, rt or qemu,rt (default): the samplers measured
#                  (qemu alone builds no instrumented package)
#   --headlines FILE  write the headline lines there instead of printing them
# Environment: EVAL_REAL_SEEDS (default 1,2,3), EVAL_REAL_RATE (default: the
# tool's own choice), EVAL_REAL_WAYS (default 16; 0: fully associative
# StatStack against the same 16-way cachegrind), EVAL_REAL_MODEL
# (statstack or statcache), EVAL_REAL_PHASES (default 1: mrc --phases; 0:
# one histogram per run), EVAL_REAL_RT_LIBS (LD_LIBRARY_PATH of the rt runs
# only, for --rt-program builds with their own rebuilt libraries).
# Last lines: mrc_rel_err_pct_real_qemu_misses (the qemu sampler's miss
#             counts, as _rt_misses), mrc_rel_err_pct_real_qemu,
#             mrc_rel_err_pct_real_rt_misses (the runtime's miss counts),
#             mrc_rel_err_pct_real_rt, mrc_rel_err_pct_real.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "eval-mrc-real: $*" >&2; exit 1; }
headlines=
. "$root/scripts/eval-mrc-opts.sh"
while (($#)); do
  real_opt "$@" && { shift "$real_shift"; continue; }
  case "$1" in
    --headlines) headlines=${2:?--headlines needs a file}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "eval-mrc-real: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
build=$(cd "${1:-$root/build}" && pwd)
bin=$build/llcprobe
[ -x "$bin" ] || die "$bin missing: build llcprobe first"
command -v valgrind >/dev/null || die "valgrind not found (cachegrind is the reference)"
seeds=${EVAL_REAL_SEEDS:-1,2,3}
ways=${EVAL_REAL_WAYS:-16}
model=${EVAL_REAL_MODEL:-statstack}
case $model in statstack|statcache) ;; *) die "EVAL_REAL_MODEL is statstack or statcache" ;; esac
sizes_k=(512 1024 2048 4096 8192 16384 32768)
if ((quick)); then
  seeds=${EVAL_REAL_SEEDS:-1}
  sizes_k=(512 2048 8192)
fi
cache=$build/eval-mrc-cg
mkdir -p "$cache"
# Perl randomizes its hash seed per run (and so its references).
export PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0
tmp=$(mktemp -d /tmp/llcprobe-evalreal-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
in=$tmp/in
mkdir -p "$in"

# Inputs, the same on every machine (scripts/eval-inputs.sh).
. "$root/scripts/eval-inputs.sh"
eval_text $((quick ? 1048576 : 4194304)) "$in/text"
awk 'BEGIN { srand(7); printf "["
  for (i = 0; i < 60000; i++) printf "%s{\"id\":%d,\"k\":%d,\"name\":\"n%d\",\"v\":[%d,%d]}", i ? "," : "", i,
    int(rand() * 1000), int(rand() * 100000), i % 7, i % 13
  print "]" }' >"$in/data.json"
eval_sql 100000 "$in/db.sql"
cat >"$in/words.tcl" <<'TCL'
set f [open [lindex $argv 0]]
while {[gets $f line] >= 0} { foreach w $line { incr c($w) } }
puts [array size c]
TCL

# name / command (shell words; @IN@ is the input directory) / package of
# scripts/build-instrumented.sh and the rebuilt executable ("-": none).
specs=()
rt_specs=()
rt_libs=${EVAL_REAL_RT_LIBS:-}
declare -A rt_lib=()
inst=$build/instrumented
if ((quick)); then
  # Two phases, all in the program's own code (the runtime sees it all): a
  # random pointer walk over 2 MiB, then sweeps over both 2 MiB arrays.
  cat >"$tmp/walk.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    const size_t n = strtoul(argv[1], 0, 0);
    const long steps = strtol(argv[2], 0, 0);
    unsigned *next = malloc(n * sizeof *next), *perm = malloc(n * sizeof *perm);
    for (size_t i = 0; i < n; i++) perm[i] = (unsigned)i;
    unsigned long long x = 88172645463325252ull;
    for (size_t i = n - 1; i > 0; i--) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; size_t j = x % (i + 1); unsigned t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
    for (size_t i = 0; i < n; i++) next[perm[i]] = perm[(i + 1) % n];
    unsigned p = 0; unsigned long long sum = 0;
    for (long k = 0; k < steps; k++) { p = next[p]; sum += p; }
    for (int r = 0; r < 8; r++)
        for (size_t i = 0; i < n; i++) { sum += next[i] ^ perm[i]; perm[i] += (unsigned)r; }
    printf("%llu\n", sum);
    return 0;
}
C
  # The compiler llcprobe-cc wraps, so both builds make the same references.
  clang -O2 -o "$tmp/walk" "$tmp/walk.c" || die "clang failed on the walk program"
  LLCPROBE_RT_LIB=$build/lib/libllcprobe-rt.a "$root/scripts/llcprobe-cc" -O2 -o "$tmp/walk-rt" "$tmp/walk.c" ||
    die "llcprobe-cc failed on the walk program"
  if ((suite)); then
    specs+=("xz|xz -1 -T1 -c @IN@/text" "walk|$tmp/walk 524288 1000000")
    rt_specs+=("walk|$tmp/walk-rt 524288 1000000")
  fi
elif ((suite)); then
  specs+=(
    "xz|xz -1 -T1 -c @IN@/text"
    "bzip2|bzip2 -9 -c @IN@/text"
    "zstd|zstd -9 -T1 -c @IN@/text"
    "sqlite3|sqlite3 :memory: '.read @IN@/db.sql'"
    "sort|sort @IN@/text"
    "perl|perl -e 'while (<>) { \$c{\$_}++ for split } print scalar(keys %c), qq(\\n)' @IN@/text"
    "gawk|gawk '{ for (i = 1; i <= NF; i++) c[\$i]++ } END { print length(c) }' @IN@/text"
    "jq|jq -c 'group_by(.k) | map({k: .[0].k, n: length}) | length' @IN@/data.json"
    "tclsh|tclsh @IN@/words.tcl @IN@/text"
  )
  # Rebuilds: package, then the command with the rebuilt executable.
  pkgs=(xz-utils bzip2 libzstd gawk sqlite3)
  [[ ,$samplers, == *,rt,* ]] || pkgs=()
  missing=()
  for p in "${pkgs[@]}"; do [ -f "$inst/$p/.stamp" ] || missing+=("$p"); done
  if ((${#missing[@]})); then
    echo "eval-mrc-real: building the instrumented ${missing[*]} (scripts/build-instrumented.sh)" >&2
    "$root/scripts/build-instrumented.sh" --build "$build" "${missing[@]}" >&2 ||
      die "could not build the instrumented ${missing[*]}: the rt half of the suite cannot run"
  fi
  # Their own shared libraries (libsqlite3, libzstd) rebuilt too, each
  # program with its package's only: with another package's instrumented
  # library first in the search order (zstd loads liblzma) the runtime
  # recorded 1 reference of zstd.
  rt_lib=([xz]=$inst/xz-utils/lib [bzip2]=$inst/bzip2/lib [zstd]=$inst/libzstd/lib
          [sqlite3]=$inst/sqlite3/lib [gawk]=$inst/gawk/lib)
  rt_specs+=(
    "xz|$inst/xz-utils/bin/xz -1 -T1 -c @IN@/text"
    "bzip2|$inst/bzip2/bin/bzip2 -9 -c @IN@/text"
    "zstd|$inst/libzstd/bin/zstd -9 -T1 -c @IN@/text"
    "sqlite3|$inst/sqlite3/bin/sqlite3 :memory: '.read @IN@/db.sql'"
    "gawk|$inst/gawk/bin/gawk '{ for (i = 1; i <= NF; i++) c[\$i]++ } END { print length(c) }' @IN@/text"
  )
fi
for u in "${user[@]}"; do
  [[ $u == ?*=?* ]] || die "--program wants NAME=CMD, not '$u'"
  specs+=("${u%%=*}|${u#*=}")
done
for u in "${user_rt[@]}"; do
  [[ $u == ?*=?* ]] || die "--rt-program wants NAME=CMD, not '$u'"
  rt_specs+=("${u%%=*}|${u#*=}")
done
((${#specs[@]})) || die "no program to measure (--no-suite without --program)"

# words CMD -> the array argv (shell quoting honoured, @IN@ substituted).
words() {
  local c=${1//@IN@/$in}
  eval "argv=($c)"
}

sizes_b=$(for k in "${sizes_k[@]}"; do printf '%d,' $((k * 1024)); done)
sizes_b=${sizes_b%,}
col=3 # the model's miss ratio (one --model: bytes, lines, ratio, ...)
ways_opt=()
((ways > 0)) && [ "$model" = statstack ] && ways_opt=(--ways "$ways")
rate_opt=()
[ -n "${EVAL_REAL_RATE:-}" ] && rate_opt=(--rate "$EVAL_REAL_RATE")
# Per-phase curves by default (mrc --phases): one histogram for a whole
# run mixes phases whose reuse patterns differ, and StatStack's stack
# distances from a pooled histogram are those of no phase (a pointer walk
# then a sort: 0.003 pooled against cachegrind's 0.014 at 512 KiB).
phase_opt=(--phases)
[ "${EVAL_REAL_PHASES:-1}" = 0 ] && phase_opt=()

# cachegrind per size: "drefs r1 r2 ..." (LLd misses / D refs per size) for NAME's
# command, cached by the executable's, command's and inputs' checksums.
declare -A cg_line=()
reference() {
  local name=$1 cmd=$2 argv
  words "$cmd"
  local exe
  exe=$(command -v "${argv[0]}") || die "$name: ${argv[0]}: not found"
  local key
  key=$(cat "$exe" "$in"/* | cksum | cut -d' ' -f1)-$(printf '%s' "${cmd//$tmp/@TMP@}" | cksum | cut -d' ' -f1)
  local d= m=
  for k in "${sizes_k[@]}"; do
    local out=$cache/$name.$key.$k
    if ! { [ -s "$out" ] && grep -q 'LLd misses:' "$out"; }; then
      echo "  cachegrind $name, LL $k KiB" >&2
      (cd "$tmp" && valgrind --tool=cachegrind --cache-sim=yes --LL=$((k * 1024)),16,64 \
        --cachegrind-out-file=/dev/null "${argv[@]}" </dev/null >/dev/null 2>"$out.tmp") ||
        die "$name: cachegrind failed (see $out.tmp)"
      mv "$out.tmp" "$out"
    fi
    read -r dr mi < <(awk '/D   refs:/ { gsub(",", "", $4); d = $4 } /LLd misses:/ { gsub(",", "", $4); m = $4 }
      END { print d, m }' "$out")
    # Runs differ a little (zstd: a few hundred references; gawk 0.2% with
    # another environment); more than 1% is another run.
    [ -n "$d" ] && awk -v a="$d" -v b="$dr" 'BEGIN { exit !((a > b ? a - b : b - a) > 1e-2 * a) }' &&
      die "$name: cachegrind counted $d then $dr data references: the run is not repeatable"
    d=${d:-$dr}
    m="$m $(awk -v m="$mi" -v d="$dr" 'BEGIN { printf "%.6e", m / d }')"
  done
  cg_line[$name]="$d$m"
}

# One sampler on one program: mean over seeds of the mean relative error
# (in %) over the sizes with cachegrind ratio >= 1e-3; also the sizes
# counted and the mean of the curves (for the table).
declare -A err=() errn=() refs_pct=() curve=() nsz=() nsmp=()
measure() {
  local sampler=$1 name=$2 cmd=$3 argv
  words "$cmd"
  local sum=0 n=0 s
  : >"$tmp/curves"
  for s in ${seeds//,/ }; do
    local libs=${rt_lib[$name]:-$rt_libs}
    (cd "$tmp" && { [ "$sampler" != rt ] || [ -z "$libs" ] || export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; } &&
       "$bin" mrc --sampler "$sampler" "${rate_opt[@]}" "${phase_opt[@]}" --seed "$s" --sizes "$sizes_b" \
       --model "$model" "${ways_opt[@]}" --gnuplot "$tmp/no-gnuplot" -q -o "$tmp/m" -- "${argv[@]}" \
       </dev/null >"$tmp/m.out" 2>"$tmp/m.err") || { cat "$tmp/m.err" >&2; die "$name: mrc --sampler $sampler failed"; }
    # The references the sampler saw, then its curve.
    { grep -a -o ': [0-9]* references' "$tmp/m.out" | head -1 | tr -dc '0-9'
      awk -F, 'NR > 1 { printf " %s", $'"$col"' } END { print "" }' "$tmp/m.mrc.csv"; } >>"$tmp/curves"
    grep -a -o ', [0-9.]* samples' "$tmp/m.out" | head -1 | tr -dc '0-9.\n' >>"$tmp/samples"
  done
  # e: the miss ratio's error; en: the miss count's, per cachegrind
  # reference (the sampler's ratio times its references over cachegrind's).
  read -r e en cov k mean < <(awk -v cg="${cg_line[$name]}" '
    BEGIN { n = split(cg, c, " "); d = c[1] }
    { cv += $1 / d
      for (i = 2; i <= n; i++) { r = c[i]; m[i] += $i; if (r < 1e-3) continue
        x = $i - r; e += (x < 0 ? -x : x) / r; x = $i * $1 / d - r; en += (x < 0 ? -x : x) / r; k++ } s++ }
    END { for (i = 2; i <= n; i++) mc = mc sprintf("%.2e ", m[i] / s)
          if (k) printf "%.2f %.2f %.1f %d %s\n", 100 * e / k, 100 * en / k, 100 * cv / s, k / s, mc
          else printf "- - %.1f 0 %s\n", 100 * cv / s, mc }' "$tmp/curves")
  err[$sampler.$name]=$e errn[$sampler.$name]=$en refs_pct[$sampler.$name]=$cov
  nsz[$sampler.$name]=$k curve[$sampler.$name]=$mean
  nsmp[$sampler.$name]=$(awk '{ s += $1; n++ } END { printf "%.0f", s / n }' "$tmp/samples")
  rm -f "$tmp/samples"
}

echo "== real programs against cachegrind's LL (16-way, 64-byte lines; D1/I1 this machine's):"
rate_said=${EVAL_REAL_RATE:-"mrc's default choice"}
echo "   $model ${ways_opt[*]} ${phase_opt[*]}, seeds $seeds, rate $rate_said"
names=()
for sp in "${specs[@]}"; do
  name=${sp%%|*} cmd=${sp#*|}
  reference "$name" "$cmd"
  [[ ,$samplers, == *,qemu,* ]] && measure qemu "$name" "$cmd"
  names+=("$name")
done
[[ ,$samplers, == *,rt,* ]] || rt_specs=()
for sp in "${rt_specs[@]}"; do
  name=${sp%%|*} cmd=${sp#*|}
  [ -n "${cg_line[$name]:-}" ] || die "--rt-program $name: no --program $name (the reference runs the uninstrumented build)"
  measure rt "$name" "$cmd"
done

printf '%-8s %-10s %11s %8s %8s %7s %9s %s\n' program curve drefs refs_pct samples err_pct err_n_pct \
  "$(for k in "${sizes_k[@]}"; do if ((k >= 1024)); then printf '%9s' "$((k / 1024))M"; else printf '%9s' "${k}K"; fi; done)"
sum_q=0 n_q=0 sum_qn=0 sum_r=0 n_r=0 sum_rn=0
for name in "${names[@]}"; do
  read -r d ms <<<"${cg_line[$name]}"
  printf '%-8s %-10s %11s %8s %8s %7s %9s %s\n' "$name" cachegrind "$d" - - - - \
    "$(for m in $ms; do printf '%9.2e' "$m"; done)"
  for sampler in qemu rt; do
    [ -n "${curve[$sampler.$name]:-}" ] || continue
    printf '%-8s %-10s %11s %8s %8s %7s %9s %s\n' "" "$sampler" - "${refs_pct[$sampler.$name]}" \
      "${nsmp[$sampler.$name]}" "${err[$sampler.$name]}" "${errn[$sampler.$name]}" \
      "$(for m in ${curve[$sampler.$name]}; do printf '%9s' "$m"; done)"
    e=${err[$sampler.$name]}
    [ "$e" = - ] && continue
    if [ "$sampler" = qemu ]; then sum_q=$(awk -v a="$sum_q" -v b="$e" 'BEGIN { print a + b }'); n_q=$((n_q + 1))
      sum_qn=$(awk -v a="$sum_qn" -v b="${errn[$sampler.$name]}" 'BEGIN { print a + b }')
    else
      sum_r=$(awk -v a="$sum_r" -v b="$e" 'BEGIN { print a + b }'); n_r=$((n_r + 1))
      sum_rn=$(awk -v a="$sum_rn" -v b="${errn[$sampler.$name]}" 'BEGIN { print a + b }')
    fi
  done
done
echo "(err_pct: mean over seeds and over the sizes where cachegrind's ratio >= 1e-3 of |mrc - cg| / cg;"
echo " refs_pct: the references the sampler saw, % of cachegrind's D refs (the runtime sees its"
echo " clang build's instrumented loads and stores, not libc's internals or the stack spills"
echo " it adds); err_n_pct: the same error with the sampler's misses per cachegrind reference,"
echo " mrc x refs / D refs, i.e. the miss counts compared;"
echo " '-': no such size. The two models differ: cachegrind's LL sees only D1 and I1 misses"
echo " (its LRU order ignores D1 hits; instruction lines share it), a modify is one reference"
echo " in both, and an access that straddles two lines is one reference to cachegrind, two here;"
echo " the 16-way correction of StatStack assumes uniformly spread sets, cachegrind indexes"
echo " sets by address bits.)"
((n_q + n_r)) || die "no size with a cachegrind miss ratio >= 1e-3 in any program: no figure"
{
  ((n_q)) && awk -v a="$sum_qn" -v n="$n_q" 'BEGIN { printf "mrc_rel_err_pct_real_qemu_misses: %.1f %%\n", a / n }'
  ((n_q)) && awk -v a="$sum_q" -v n="$n_q" 'BEGIN { printf "mrc_rel_err_pct_real_qemu: %.1f %%\n", a / n }'
  ((n_r)) && awk -v a="$sum_rn" -v n="$n_r" 'BEGIN { printf "mrc_rel_err_pct_real_rt_misses: %.1f %%\n", a / n }'
  ((n_r)) && awk -v a="$sum_r" -v n="$n_r" 'BEGIN { printf "mrc_rel_err_pct_real_rt: %.1f %%\n", a / n }'
  awk -v a="$sum_q" -v b="$sum_r" -v n="$((n_q + n_r))" 'BEGIN { printf "mrc_rel_err_pct_real: %.1f %%\n", (a + b) / n }'
} >"$tmp/headlines"
if [ -n "$headlines" ]; then cp "$tmp/headlines" "$headlines"; else cat "$tmp/headlines"; fi
