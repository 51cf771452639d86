#!/usr/bin/env bash
# llcprobe mrc end to end on a trace and a profile: outputs, their content,
# and one clear line with a non-zero exit for every kind of bad input.
. "$(dirname "$0")/../cli_lib.sh"
set -o pipefail

# expect CODE PATTERN -- ARGS: exit code and the single stderr line.
expect() {
  local code=$1 pattern=$2
  shift 3
  "$bin" mrc "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq "$code" ] || bad "mrc $*: exit $rc, wanted $code ($(cat "$tmp/err"))"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "mrc $*: wanted one line on stderr, got: $(cat "$tmp/err")"
  grep -q -- "$pattern" "$tmp/err" || bad "mrc $*: stderr '$(cat "$tmp/err")' lacks '$pattern'"
}

# A trace with a known curve: cyclic over 2000 lines (128 KiB), 30 rounds,
# from the runtime-independent synthetic writer in the sim command's tests?
# No: build it with a profile instead (exact histogram, known curve), and a
# small real trace from the lackey tracer when valgrind is present.
cat >"$tmp/cyc.profile" <<'P'
llcprobe-rt-profile 1
rate 0.01
seed 3
refs 60000
samples 600
threads 1
command cyclic 2000 lines
rdhist 1 inf=20 1984:580
P
"$bin" mrc --profile "$tmp/cyc.profile" --sizes 64K,120K,127K,129K,256K --model statstack \
  -o "$tmp/cyc" >"$tmp/out" 2>"$tmp/err" || bad "mrc --profile: $(cat "$tmp/err")"
[ -s "$tmp/cyc.mrc.json" ] && [ -s "$tmp/cyc.mrc.csv" ] || bad "outputs missing"
grep -q '"format": "llcprobe-mrc"' "$tmp/cyc.mrc.json" || bad "JSON lacks its format"
grep -q '"version": 1' "$tmp/cyc.mrc.json" || bad "JSON lacks its version"
# LRU on a cyclic stream of ~1985 distinct lines: all miss below, only the
# 20 cold of 600 samples above (1/30 = 0.0333).
awk -F, 'NR == 1 { if ($3 != "statstack_miss_ratio") bad = 1; next }
         $2 <= 1024 && $3 < 0.99 { bad = 1 }
         $2 >= 2064 && ($3 < 0.0333 || $3 > 0.0334) { bad = 1 }
         END { exit bad }' "$tmp/cyc.mrc.csv" || bad "cyclic curve wrong: $(cat "$tmp/cyc.mrc.csv")"
[ "$(wc -l <"$tmp/cyc.mrc.csv")" -eq 6 ] || bad "CSV should have a header and 5 rows"
if command -v gnuplot >/dev/null; then
  [ -s "$tmp/cyc.mrc.png" ] || bad "PNG missing though gnuplot is installed"
  head -c 8 "$tmp/cyc.mrc.png" | od -An -c | grep -q 'P   N   G' || bad "not a PNG"
fi
# gnuplot absent: a warning, still exit 0, no PNG.
"$bin" mrc --profile "$tmp/cyc.profile" --gnuplot /nonexistent/gnuplot -o "$tmp/nogp" \
  >"$tmp/out" 2>"$tmp/err" || bad "missing gnuplot should not fail"
grep -q 'warning: no PNG' "$tmp/err" || bad "no warning about gnuplot: $(cat "$tmp/err")"
[ ! -e "$tmp/nogp.mrc.png" ] && [ -s "$tmp/nogp.mrc.csv" ] || bad "PNG/CSV wrong without gnuplot"
# Band: lo <= miss ratio <= hi.
"$bin" mrc --profile "$tmp/cyc.profile" --band --replicates 20 --sizes 100K,200K -o "$tmp/band" \
  >/dev/null 2>"$tmp/err" || bad "--band: $(cat "$tmp/err")"
awk -F, 'NR > 1 && ($5 > $3 + 1e-12 || $6 < $3 - 1e-12 || $5 == "") { bad = 1 } END { exit bad }' \
  "$tmp/band.mrc.csv" || bad "band does not hold the curve: $(cat "$tmp/band.mrc.csv")"
# The machine's cache sizes are reported.
"$bin" mrc --profile "$tmp/cyc.profile" >"$tmp/out" 2>&1 || bad "plain run failed"
grep -q '^L1d' "$tmp/out" || bad "no L1d line: $(cat "$tmp/out")"

# Bad input: one line, exit 1 for failures, 2 for usage.
expect 1 'No such file' -- --profile "$tmp/none.profile"
expect 1 'No such file' -- --trace "$tmp/none.trace"
printf 'garbage\n' >"$tmp/bad.profile"
expect 1 'not an llcprobe-rt profile' -- --profile "$tmp/bad.profile"
sed 's/^samples 600/samples 601/' "$tmp/cyc.profile" >"$tmp/bad2.profile"
expect 1 'header says 601' -- --profile "$tmp/bad2.profile"
sed 's/1984:580/1984:x/' "$tmp/cyc.profile" >"$tmp/bad3.profile"
expect 1 'line 8' -- --profile "$tmp/bad3.profile"
printf 'not a trace' >"$tmp/bad.trace"
expect 1 '^llcprobe: mrc: [^:]*/bad.trace: not an llcprobe trace$' -- --trace "$tmp/bad.trace"
expect 2 'rate' -- --profile "$tmp/cyc.profile" --rate 2
expect 2 'rate' -- --profile "$tmp/cyc.profile" --rate abc
expect 2 'sizes' -- --profile "$tmp/cyc.profile" --sizes 1K,banana
expect 2 'sizes' -- --profile "$tmp/cyc.profile" --sizes 10
expect 2 'model' -- --profile "$tmp/cyc.profile" --model lru
expect 2 'exactly one' --
expect 2 'exactly one' -- --profile "$tmp/cyc.profile" --trace x
expect 2 'sampler' -- --sampler magic -- /bin/true
expect 1 'pmu' -- --sampler pmu -- /bin/true
expect 1 'wrote no profile' -- --sampler rt -- /bin/true

# A lackey trace of a real program, sampled at a high rate (small run).
if command -v valgrind >/dev/null; then
  "$bin" trace -q -o "$tmp/true.trace" -- /bin/true >/dev/null 2>&1 || bad "trace /bin/true"
  "$bin" mrc --trace "$tmp/true.trace" --rate 0.05 --sizes 1K,1M -o "$tmp/true" >"$tmp/out" 2>&1 \
    || bad "mrc --trace: $(cat "$tmp/out")"
  grep -q 'references' "$tmp/out" || bad "no summary: $(cat "$tmp/out")"
  # Miss ratio in [0,1] and non-increasing from 1K to 1M.
  awk -F, 'NR == 2 { a = $3 } NR == 3 { b = $3 } END { exit !(a >= b && a <= 1 && b >= 0) }' \
    "$tmp/true.mrc.csv" || bad "trace curve: $(cat "$tmp/true.mrc.csv")"
fi
[ "$fail" = 0 ] && echo "mrc cli: ok"
exit $fail
