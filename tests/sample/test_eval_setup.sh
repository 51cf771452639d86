#!/usr/bin/env bash
# scripts/eval-sampling.sh really runs its set-up: the full plan's real
# programs are traced (on a small input), a user's --program is traced, a
# program that cannot be traced stops the evaluation with exit 1 and its
# name (it used to be dropped with one line on stderr while the headline
# silently covered the rest), and a workload without LLC signal is listed
# and counted, not dropped.
. "$(dirname "$0")/../cli_lib.sh"
eval=${LLCPROBE_SOURCE_DIR:?}/scripts/eval-sampling.sh
command -v valgrind >/dev/null || { echo "skip: no valgrind"; exit 77; }

bash "$eval" --bin "$bin" --no-suite >/dev/null 2>&1; check_rc "--no-suite without programs" 2 $?
bash "$eval" --bin "$bin" --out "$tmp/w" --no-suite --workload "g=gaussian:size=16M,cv=0.3" --preset intel8 --rates 1e8 --dry-run >"$tmp/w.plan" 2>/dev/null
check_rc "--workload planned" 0 $?
check "a user's synthetic workload mapped at the profile rate and each intensity" 'grep -q -- "--preset intel8 --seed 1 --rate 2.5e7 -o $tmp/w/intel8-g.prof -q --workload gaussian:size=16M" "$tmp/w.plan" && grep -q -- "--rate 1e8 --sweeps 1 -o $tmp/w/intel8-g.r1e8" "$tmp/w.plan"'
bash "$eval" --bin "$bin" --out "$tmp/w" --no-suite --workload "g=gaussian:size=16M,cv=0.3" --preset intel8 --rates 1e8 --restart-rates "5e7" --dry-run >"$tmp/w2.plan" 2>/dev/null
check_rc "--restart-rates planned" 0 $?
check "the restart case mapped beside, with another placement" 'grep -q -- "--seed 1 --rate 1e8 --sweeps 1 -o $tmp/w/intel8-g.r1e8" "$tmp/w2.plan" && grep -q -- "--seed 2 --rate 5e7 --sweeps 1 -o $tmp/w/intel8-g.restart.r5e7" "$tmp/w2.plan"'
bash "$eval" --bin "$bin" --restart --restart-rates 1e8 --dry-run >/dev/null 2>&1; check_rc "--restart with --restart-rates" 2 $?
bash "$eval" --bin "$bin" --recorder pin --dry-run >/dev/null 2>&1; check_rc "--recorder other than lackey or qemu" 2 $?
bash "$eval" --bin "$bin" --program nocmd >/dev/null 2>&1; check_rc "--program without NAME=" 2 $?
bash "$eval" --bin "$bin" --rates "1e8 fast" --dry-run >/dev/null 2>&1; check_rc "--rates with a word" 2 $?

bash "$eval" --bin "$bin" --out "$tmp/bad" --no-suite --setup-only --program bad=/nonexistent/prog >"$tmp/bad.out" 2>"$tmp/bad.err"
check_rc "a program that cannot be traced stops the evaluation" 1 $?
check "its name and the tracer's reason on stderr" 'grep -q "^eval-sampling.sh: tracing bad failed (/nonexistent/prog): llcprobe: trace: " "$tmp/bad.err"'

bash "$eval" --bin "$bin" --out "$tmp/u" --no-suite --setup-only --program "hello=printf '%s\n' 'a b'" >"$tmp/u.out" 2>"$tmp/u.err"
check_rc "--program traced" 0 $?
check "its trace, with the program's own output kept apart" '[ -s "$tmp/u/hello.trace" ] && grep -qx "a b" "$tmp/u/hello.trace.out" && grep -q "1 workloads (hello)" "$tmp/u.out"'

# The user's program evaluated end to end on one preset and intensity: a
# program this small never reaches the LLC, which the table says (listed
# and counted), and the evaluation still ends with its headline lines.
bash "$eval" --bin "$bin" --out "$tmp/u" --no-suite --no-occupancy --preset intel8 --rates 1e8 \
  --program "hello=printf '%s\n' 'a b'" >"$tmp/e.out" 2>"$tmp/e.err"
check_rc "evaluation of a program without LLC signal" 0 $?
check "listed and counted as no signal" 'grep -q "^no LLC signal, nothing to fit.*intel8 hello (real)" "$tmp/e.out" && grep -q "^workloads_no_signal: 1$" "$tmp/e.out"'
check "headline last" '[ "$(tail -1 "$tmp/e.out" | cut -d: -f1)" = D_avg_gaussian25 ]'

# The restart case beside the same-placement one, end to end on a
# synthetic workload: its table and its headline lines per preset and kind.
bash "$eval" --bin "$bin" --out "$tmp/r" --no-suite --no-occupancy --preset intel8 --rates 1e8 --restart-rates 1e8 \
  --workload "g=gaussian:size=16M,cv=0.3" >"$tmp/r.out" 2>"$tmp/r.err"
check_rc "evaluation with the restart case" 0 $?
check "its maps with another placement" '[ -s "$tmp/r/intel8-g.restart.r1e8.map.json" ] && [ -s "$tmp/r/intel8-g.r1e8.map.json" ]'
check "the restart table and headline" 'grep -q "^restart case: .* (seed 2) .* at 1e8" "$tmp/r.out" && grep -q "^D_avg_gaussian25_restart_intel8_synthetic: [0-9.]* %$" "$tmp/r.out" && grep -q "^D_worst_gaussian25_intel8_synthetic: [0-9.]* %$" "$tmp/r.out"'

# The full plan's set-up: every real program of the suite traced, on 400
# bytes of input (and 400 bytes, 40 numbers for the big-input programs).
# The parts above trace with lackey (the default); this one traces with the
# QEMU recorder where it was built: 15 s against lackey's 3 minutes for the
# same 12 programs.
recorder=lackey
if command -v qemu-x86_64 >/dev/null && [ -f "$(dirname "$bin")/lib/libllcprobe-qemu.so" ]; then
  recorder=qemu
else
  echo "note: no QEMU recorder (scripts/setup.sh builds it): the full plan's set-up traces with lackey, 2-3 minutes"
fi
bash "$eval" --bin "$bin" --out "$tmp/f" --recorder $recorder --setup-only --input-bytes 400 --big-input-bytes 400 --sort-lines 40 --preset intel8 >"$tmp/f.out" 2>"$tmp/f.err"
check_rc "the full plan's set-up" 0 $?
for p in xz gzip bzip2 sqlite3 zstd lz4 sort sqlite-join perl tclsh awk jq; do
  [ -s "$tmp/f/$p.trace" ] || bad "no trace of $p: $(tail -2 "$tmp/f.err")"
done
check "18 workloads: 12 real programs and 6 synthetic" 'grep -q "^set-up done: 18 workloads" "$tmp/f.out"'
check "the big inputs at their sizes" '[ "$(stat -c %s "$tmp/f/big.txt")" = 400 ] && [ "$(wc -l <"$tmp/f/numbers.txt")" = 40 ]'
exit $fail
