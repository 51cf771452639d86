#!/usr/bin/env bash
# eval-rt-coverage.sh: how much of a real program's data references the
# instrumented runtime sees, and how close its miss-ratio curve comes to
# cachegrind's, with and without the libc wrappers (LLCPROBE_RT_LIBC).
#
#     scripts/eval-rt-coverage.sh [BUILD_DIR]      (default build/)
#
# Programs: those of scripts/build-instrumented.sh found in
# BUILD_DIR/instrumented (bzip2, xz-utils, zstd, gawk, sqlite3), each run on
# the same input as the system's own (gcc-built) binary of that package
# under `valgrind --tool=cachegrind --cache-sim=yes` with LL = 2, 4, 8, 16
# and 32 MiB (16-way, 64-byte lines).
#   coverage  = runtime references / cachegrind's D refs (Dr + Dw)
#   before    = LLCPROBE_RT_LIBC=0 and the profile's exact distinct-line
#               count dropped: what main's runtime saw and modelled
#   after     = the libc wrappers and the exact cold misses
#   rel_err   = mean over those sizes where cachegrind's LL miss ratio
#               (LLd misses / D refs) is >= 1e-3 of |mrc - cg| / cg, in %,
#               mrc = the runtime's curve (mrc_rel_err_pct_real), StatStack
#               (LRU, as cachegrind's LL) unless MODEL=statcache,
#   rel_err_n = the same with the runtime's misses per cachegrind reference
#               (mrc x runtime refs / D refs): the runtime counts one
#               reference per line a libc call touches, cachegrind one per
#               instruction (a vector copy touches a line in 1-2 of them, a
#               rep movsb byte by byte).
# Environment: RATE (default 1e-3), SEEDS (default "1 2 3"), PROGRAMS,
# MODEL (statstack or statcache).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
bin=$build/llcprobe
inst=$build/instrumented
rate=${RATE:-1e-3}
seeds=${SEEDS:-1 2 3}
case "${MODEL:-statstack}" in
  statstack) col=7 ;;
  statcache) col=3 ;;
  *) echo "eval-rt-coverage: MODEL is statstack or statcache" >&2; exit 2 ;;
esac
work=$(mktemp -d /tmp/llcprobe-rtcov-XXXXXX)
trap 'rm -rf "$work"' EXIT
die() { echo "eval-rt-coverage: $*" >&2; exit 1; }
[ -x "$bin" ] || die "$bin missing: build llcprobe first"
command -v valgrind >/dev/null || die "valgrind not found"

# Input: 4 MiB of C headers (text, the same on every run of this machine).
input=$work/input.txt
cat /usr/include/*.h /usr/include/linux/*.h 2>/dev/null | head -c 4194304 >"$input" || true
[ "$(stat -c %s "$input")" = 4194304 ] || die "could not make a 4 MiB input from /usr/include"
cat >"$work/db.sql" <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 250000)
  INSERT INTO t SELECT x, (x * 7919) % 10007, printf('row %d %d', x, x * x) FROM c;
CREATE INDEX tk ON t(k);
SELECT count(*), sum(length(v)) FROM t WHERE k BETWEEN 100 AND 5000;
SELECT k % 100, count(*) FROM t GROUP BY k % 100 ORDER BY 2 DESC LIMIT 3;
SQL

# name package program args... (stdin: sqlite3 reads the script)
programs=(
  "bzip2 bzip2 bzip2 -9 -c $input"
  "xz xz-utils xz -1 -T1 -c $input"
  "zstd libzstd zstd -3 -T1 -c $input"
  "gawk gawk gawk {for(i=1;i<=NF;i++)c[\$i]++}END{print(length(c))} $input"
  "sqlite3 sqlite3 sqlite3 :memory:"
)
sizes=(2 4 8 16 32)

run() { # stdin-file command... (stdout dropped)
  local in=$1; shift
  "$@" <"$in" >/dev/null
}

cg_summary() { # file -> "drefs m2 m4 ..." (LLd misses per size)
  awk '/D   refs:/ { gsub(",", "", $4); d = $4 } /LLd misses:/ { gsub(",", "", $4); m = m " " $4 }
       END { print d m }' "$@"
}

printf '%-8s %10s %12s %12s %8s %8s %9s %9s %10s %10s\n' program cg_drefs rt_refs_nolibc rt_refs \
  cov0_pct cov_pct err0_pct err_pct err0_n_pct err_n_pct
sum_cov=0 n_cov=0 sum_err=0 sum_err0=0 n_err=0 sum_errn=0 sum_errn0=0 min_cov=1000
for spec in "${programs[@]}"; do
  read -r name pkg prog _ <<<"$spec"
  args=${spec#"$name $pkg $prog"}
  [ -n "${PROGRAMS:-}" ] && [[ " $PROGRAMS " != *" $name "* ]] && continue
  ibin=$inst/$pkg/bin/$prog
  [ -x "$ibin" ] || { echo "$name: $ibin not built (scripts/build-instrumented.sh $pkg): skipped"; continue; }
  native=$(command -v "$prog") || { echo "$name: no system $prog: skipped"; continue; }
  stdin=/dev/null
  [ "$name" = sqlite3 ] && stdin=$work/db.sql
  # Split on spaces, without eval: no argument may hold a space.
  read -r -a argv <<<"$args"
  # cachegrind's summaries are kept (same binary and input: same counts).
  cg=$inst/cachegrind
  mkdir -p "$cg"
  key=$(cat "$native" "$input" "$work/db.sql" | cksum | cut -d' ' -f1)
  for s in "${sizes[@]}"; do
    out=$cg/$name.$key.cg$s
    [ -s "$out" ] && grep -q 'LLd misses:' "$out" && continue
    run "$stdin" valgrind --tool=cachegrind --cache-sim=yes --LL=$((s << 20)),16,64 \
      --cachegrind-out-file=/dev/null "$native" "${argv[@]}" 2>"$out.tmp" ||
      die "$name: cachegrind failed (see $out.tmp)"
    mv "$out.tmp" "$out"
  done
  read -r drefs misses <<<"$(cg_summary $(for s in "${sizes[@]}"; do echo "$cg/$name.$key.cg$s"; done))"
  read -r -a cg_m <<<"$misses"
  declare -A refs=() err=() errn=()
  for libc in 0 1; do
    e_sum=0 en_sum=0 e_n=0 r_sum=0 n_seed=0
    for seed in $seeds; do
      prof=$work/$name.$libc.$seed.profile
      LD_LIBRARY_PATH=$inst/$pkg/lib LLCPROBE_RT_OUTPUT=$prof LLCPROBE_RT_RATE=$rate \
        LLCPROBE_RT_SEED=$seed LLCPROBE_RT_LIBC=$libc LLCPROBE_RT_WINDOW=0 \
        run "$stdin" "$ibin" "${argv[@]}" || die "$name: instrumented run failed"
      r=$(awk '$1 == "refs" { print $2 }' "$prof")
      # Before: main's runtime, which had neither the libc wrappers nor the
      # exact count of distinct lines (its large-cache end was sampled).
      [ "$libc" = 0 ] && sed -i '/^lines /d' "$prof"
      "$bin" mrc --profile "$prof" --sizes 2M,4M,8M,16M,32M -o "$work/$name.$libc.$seed" \
        >/dev/null 2>&1 || die "$name: mrc --profile $prof failed"
      # The model's miss ratio (column col) per size, against cachegrind's.
      read -r e en k < <(awk -F, -v d="$drefs" -v r="$r" -v m="${cg_m[*]}" -v col="$col" '
        BEGIN { split(m, cg, " ") }
        NR > 1 { i++; c = cg[i] / d; if (c < 1e-3) next
                 e += ($col > c ? $col - c : c - $col) / c
                 x = $col * r / d; en += (x > c ? x - c : c - x) / c; k++ }
        END { if (k) print 100 * e / k, 100 * en / k, k; else print 0, 0, 0 }' \
        "$work/$name.$libc.$seed.mrc.csv")
      e_sum=$(echo "$e_sum + $e" | bc -l) en_sum=$(echo "$en_sum + $en" | bc -l)
      e_n=$k r_sum=$((r_sum + r)) n_seed=$((n_seed + 1))
    done
    refs[$libc]=$((r_sum / n_seed))
    err[$libc]=$(echo "$e_sum / $n_seed" | bc -l)
    errn[$libc]=$(echo "$en_sum / $n_seed" | bc -l)
  done
  cov0=$(echo "100 * ${refs[0]} / $drefs" | bc -l)
  cov=$(echo "100 * ${refs[1]} / $drefs" | bc -l)
  cg_ratios=$(for i in "${!sizes[@]}"; do printf '%s:%.2e ' "${sizes[$i]}M" "$(echo "${cg_m[$i]} / $drefs" | bc -l)"; done)
  if ((e_n)); then
    printf '%-8s %10d %12d %12d %8.1f %8.1f %9.1f %9.1f %10.1f %10.1f  (cg LL mr %s)\n' "$name" "$drefs" \
      "${refs[0]}" "${refs[1]}" "$cov0" "$cov" "${err[0]}" "${err[1]}" "${errn[0]}" "${errn[1]}" "$cg_ratios"
    sum_err=$(echo "$sum_err + ${err[1]}" | bc -l) sum_err0=$(echo "$sum_err0 + ${err[0]}" | bc -l)
    sum_errn=$(echo "$sum_errn + ${errn[1]}" | bc -l) sum_errn0=$(echo "$sum_errn0 + ${errn[0]}" | bc -l)
    n_err=$((n_err + 1))
  else
    printf '%-8s %10d %12d %12d %8.1f %8.1f %9s %9s %10s %10s  (cg LL mr %s)\n' "$name" "$drefs" \
      "${refs[0]}" "${refs[1]}" "$cov0" "$cov" - - - - "$cg_ratios"
  fi
  sum_cov=$(echo "$sum_cov + $cov" | bc -l) n_cov=$((n_cov + 1))
  min_cov=$(echo "if ($cov < $min_cov) $cov else $min_cov" | bc -l)
  unset refs err errn
done
((n_cov)) || die "no program measured (build them: scripts/build-instrumented.sh bzip2 xz-utils ...)"
printf 'rt_coverage_mean_pct: %.1f %%\n' "$(echo "$sum_cov / $n_cov" | bc -l)"
printf 'rt_coverage_min_pct: %.1f %%\n' "$min_cov"
if ((n_err)); then
  printf 'rt_mrc_rel_err_nolibc_pct: %.1f %%\n' "$(echo "$sum_err0 / $n_err" | bc -l)"
  printf 'rt_mrc_rel_err_norm_nolibc_pct: %.1f %%\n' "$(echo "$sum_errn0 / $n_err" | bc -l)"
  printf 'rt_mrc_rel_err_norm_pct: %.1f %%\n' "$(echo "$sum_errn / $n_err" | bc -l)"
  printf 'rt_mrc_rel_err_pct: %.1f %%\n' "$(echo "$sum_err / $n_err" | bc -l)"
fi
