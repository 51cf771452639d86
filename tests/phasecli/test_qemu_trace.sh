#!/usr/bin/env bash
# phase --trace on a trace of the qemu recorder (trace --recorder qemu:
# instruction records, so instruction windows), and against exp-bbv's
# vectors of the same program with a different interval size: the windows
# are paired by instruction count, the gap between the two emulators'
# totals is printed, and a BBV of another run is refused.
. "$(dirname "$0")/../cli_lib.sh"
. "$(dirname "$0")/grain_lib.sh"
src=${LLCPROBE_SOURCE_DIR:?}
if ! command -v "${LLCPROBE_QEMU:-qemu-x86_64}" >/dev/null; then
  echo "skip: qemu-x86_64 is not installed (Debian package qemu-user; scripts/setup.sh installs it)"
  exit 77
fi
if [ -z "${LLCPROBE_QEMU_PLUGIN:-}" ] && [ ! -f "$(dirname "$bin")/lib/libllcprobe-qemu.so" ]; then
  echo "skip: libllcprobe-qemu.so was not built (qemu-plugin.h missing: run scripts/setup.sh)"
  exit 77
fi
cc -O1 -fno-pie -no-pie -o "$tmp/alt" "$src/tests/phasecli/alternate.c" || { bad "cc"; exit 1; }
"$bin" trace -o "$tmp/q.trace" --recorder qemu -- "$tmp/alt" 100000 6 >"$tmp/rec.out" 2>&1
check_rc "qemu recorder" 0 $? || cat "$tmp/rec.out"
"$bin" phase --trace "$tmp/q.trace" --window 100000 --no-dynamic-rate -o "$tmp/q" --no-plot \
  >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
check_rc "qemu trace classified" 0 $rc
check "instruction windows stated" \
  'grep -q "^trace: .* (recorder qemu), 100000 instructions per window, 400 samples per window$" "$tmp/out"'
jcheck "json: unit, recorder, exact windows" "$tmp/q.phase.json" \
  'd["trace"]["window_unit"] == "instructions" and d["trace"]["recorder"] == "qemu" and all(w["instructions"] == 100000 for w in d["windows"][:-1])'
check "two phases in turn" 'alternates "$tmp/q.phase.json"'

if ! command -v valgrind >/dev/null; then
  echo "skip: no valgrind: the exp-bbv comparison is left out"
  exit $fail
fi
# exp-bbv at twice the window: 2 of our windows per interval.
valgrind --tool=exp-bbv --interval-size=200000 --bb-out-file="$tmp/q.bb" "$tmp/alt" 100000 6 \
  >/dev/null 2>"$tmp/bbv.log" || { bad "exp-bbv: $(tail -3 "$tmp/bbv.log")"; exit 1; }
"$bin" phase --trace "$tmp/q.trace" --window 100000 --no-dynamic-rate --bbv "$tmp/q.bb" \
  -o "$tmp/b" --no-plot >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
check_rc "aligned with exp-bbv" 0 $rc
check "alignment printed" 'grep -q "^  aligned by instructions (.*as exp-bbv counts): trace [0-9]*, exp-bbv [0-9]* (" "$tmp/out"'
"$python" - "$tmp/b.phase.json" "$tmp/b.phase.csv" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
b, n = d["bbv"], len(d["windows"])
print("bbv:", {k: b[k] for k in ("windows", "compared", "trace_instructions", "bbv_instructions", "total_diff", "ari")})
assert b["aligned_by"] == "instructions"
# about half as many intervals as windows, and every window paired but
# those past exp-bbv's end
assert abs(b["windows"] - n / 2) <= 2, (b["windows"], n)
assert b["compared"] + b["unmatched"] == n and b["unmatched"] <= 1, b
assert b["gap"] <= 0.02, b
# paired by position, the two phases agree (exp-bbv's full-dimension
# vectors also split off the start-up and exit intervals); paired by index
# (window i with interval i), they could not: the intervals are twice as long
assert b["ari"] > 0.7, b
import csv
lab = [r["bbv_phase"] for r in csv.DictReader(open(sys.argv[2]))]  # "" if unpaired
assert all(lab[2 * k] == lab[2 * k + 1] != "" for k in range(1, n // 2 - 1)), lab
print("ok   bbv alignment")
PY
# A BBV of another run (a third of the program) is refused, with numbers.
head -n 5 "$tmp/q.bb" >"$tmp/part.bb"
"$bin" phase --trace "$tmp/q.trace" --window 100000 --bbv "$tmp/part.bb" -o "$tmp/p" \
  --no-plot >"$tmp/out" 2>&1
check_rc "other run refused" 1 $?
check "with both totals" 'grep -q "^llcprobe: phase: --bbv: .*part.bb counts [0-9]* instructions, the trace [0-9]*: [0-9.]*% apart beyond exp-bbv.s unwritten last interval (up to [0-9]*), more than --bbv-tolerance 2.00%" "$tmp/out"'
exit $fail
