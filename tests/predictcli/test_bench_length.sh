#!/usr/bin/env bash
# scripts/bench-predict-length.sh end to end at short lengths: a line per
# length and the summary line last, and its refusals.
. "$(dirname "$0")/../cli_lib.sh"
script=$(cd "$(dirname "$0")/../.." && pwd)/scripts/bench-predict-length.sh
build=$(dirname "$bin")

BENCH_LENGTHS="1e6 2e6" bash "$script" "$build" >"$tmp/out" 2>"$tmp/err"
check_rc "bench-predict-length at 1e6 and 2e6" 0 $?
check "a speed-up per length" \
  'grep -Eq "^predict_length_1000000_speedup_x: [0-9]+ x$" "$tmp/out" && grep -Eq "^predict_length_2000000_speedup_x: [0-9]+ x$" "$tmp/out"'
check "the longest length's speed-up last" \
  '[ "$(tail -1 "$tmp/out" | cut -d" " -f2)" = "$(grep "^predict_length_2000000" "$tmp/out" | cut -d" " -f2)" ] && tail -1 "$tmp/out" | grep -Eq "^predict_length_speedup_x: [0-9]+ x$"'

BENCH_LENGTHS="1e6 soon" bash "$script" "$build" >/dev/null 2>"$tmp/err"
check_rc "a length that is not a number" 2 $?
check "says which" 'grep -q "length .soon. is not a number >= 1e6" "$tmp/err"'
BENCH_PAIR="uniform:size=1M" bash "$script" "$build" >/dev/null 2>"$tmp/err"
check_rc "one workload, not a pair" 2 $?
exit $fail
