#!/usr/bin/env bash
# phase --trace on a trace written by the clang runtime (LLCPROBE_RT_MODE=
# trace): no instruction records, so the windows count references and the
# signature samples the accesses' code addresses; the output says so. The
# two-phase program (alternate.c) gives two phases in turn. A BBV cannot be
# paired with reference windows, and instruction windows are refused with
# the way out.
. "$(dirname "$0")/../cli_lib.sh"
. "$(dirname "$0")/grain_lib.sh"
src=${LLCPROBE_SOURCE_DIR:?}
command -v clang >/dev/null || { echo "skip: no clang (scripts/setup.sh installs it)"; exit 77; }
[ -f "${LLCPROBE_RT_LIB:-}" ] || { echo "skip: libllcprobe-rt.a not built"; exit 77; }

"$src/scripts/llcprobe-cc" -O1 -fno-pie -no-pie -o "$tmp/alt" "$src/tests/phasecli/alternate.c" \
  2>"$tmp/cc.err" || { bad "llcprobe-cc: $(cat "$tmp/cc.err")"; exit 1; }
# 100000 iterations a run: 100k references in phase_a, 200k in phase_b.
LLCPROBE_RT_MODE=trace LLCPROBE_RT_OUTPUT=$tmp/alt.trace "$tmp/alt" 100000 6 >/dev/null ||
  { bad "runtime trace run"; exit 1; }
"$bin" phase --trace "$tmp/alt.trace" --window 20000 --no-dynamic-rate -o "$tmp/a" --no-plot \
  >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
check_rc "runtime trace classified" 0 $rc
check "the unit is stated" \
  'grep -q "^trace: .* (recorder llcprobe-rt), 20000 references per window, 400 samples per window (code addresses of the accesses)" "$tmp/out"'
jcheck "json: unit, recorder" "$tmp/a.phase.json" \
  'd["trace"]["window_unit"] == "references" and d["trace"]["recorder"] == "llcprobe-rt" and d["trace"]["window_instructions"] is None'
# 3 x 100k + 3 x 200k references and a few of the C library's start-up.
jcheck "json: windows of 20000 references, no instruction counts" "$tmp/a.phase.json" \
  '45 <= len(d["windows"]) <= 47 and all(w["progress"] == 20000 for w in d["windows"][:-1]) and all(w["instructions"] is None for w in d["windows"])'
check "two phases in turn" 'alternates "$tmp/a.phase.json"'
check "csv x axis in references" '[ "$(awk -F, "NR == 3 { print \$2 }" "$tmp/a.phase.csv")" = 0.020000 ]'
# Same trace with the simulator: windows cut by references there too.
"$bin" phase --trace "$tmp/alt.trace" --window 20000 --sim intel8 -o "$tmp/s" --no-plot \
  >"$tmp/out" 2>&1
check_rc "with --sim" 0 $?
# (a last window shorter than the simulator's step joins the one before)
jcheck "sim miss ratios on every window" "$tmp/s.phase.json" \
  'all("llc_miss_ratio" in w for w in d["windows"][:-1]) and d["sim"]["cov_program"] > 0'

# Refusals, each with its reason.
printf 'T:1:20000\n' >"$tmp/x.bb"
"$bin" phase --trace "$tmp/alt.trace" --window 20000 --bbv "$tmp/x.bb" -o "$tmp/b" >"$tmp/out" 2>&1
check_rc "--bbv with reference windows refused" 1 $?
check "says why" 'grep -q "^llcprobe: phase: --bbv: .* has no instruction records (recorder llcprobe-rt)" "$tmp/out"'
"$bin" phase --trace "$tmp/alt.trace" --window-unit instructions -o "$tmp/c" >"$tmp/out" 2>&1
check_rc "instruction windows refused" 1 $?
check "points at --window-unit references" 'grep -q "no instruction records (recorder llcprobe-rt; --window-unit references" "$tmp/out"'
"$bin" phase --trace "$tmp/alt.trace" --window-unit lines >"$tmp/out" 2>&1
check_rc "bad unit: usage" 2 $?
"$bin" phase --window-unit references -- true >"$tmp/out" 2>&1
check_rc "--window-unit live: usage" 2 $?
exit $fail
