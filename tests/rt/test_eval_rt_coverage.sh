#!/usr/bin/env bash
# scripts/eval-rt-coverage.sh --quick: coverage of a small program built
# here (clang -O2 under cachegrind and lackey; llcprobe-cc for the
# runtime) with the split of what the runtime does not see, ending with
# its headline lines.
. "$(dirname "$0")/../cli_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(dirname "$bin")
script=$root/scripts/eval-rt-coverage.sh
command -v valgrind >/dev/null || { echo "skip: valgrind is not installed"; exit 77; }
command -v clang >/dev/null || { echo "skip: no clang"; exit 77; }
[ -f "${LLCPROBE_RT_LIB:-}" ] || { echo "skip: libllcprobe-rt.a not built"; exit 77; }

"$script" --quick "$build" >"$tmp/out" 2>"$tmp/err"
check_rc "eval-rt-coverage --quick" 0 $?
check "the last lines are the headline" \
  "tail -7 '$tmp/out' | awk 'NR == 1 && /^rt_coverage_pct_quick: [0-9.]+ %\$/ { a++ }
     NR >= 2 && NR <= 5 && /^rt_unseen_(stack|libc|otherlib|prog)_pct: -?[0-9.]+ %\$/ { a++ }
     NR == 6 && /^rt_coverage_min_pct: [0-9.]+ %\$/ { a++ }
     NR == 7 && /^rt_coverage_mean_pct: [0-9.]+ %\$/ { a++ } END { exit a != 7 }'"
# quick  drefs  refs0  refs  cov0  cov | stack prog libc ld other | rt_stack | unseen x4
read -r _ d r0 r1 cov0 cov _ st pr lc ld ot _ rs _ u1 u2 u3 u4 < <(grep '^quick ' "$tmp/out")
check "cachegrind and the runtime counted references ($d, $r0, $r1)" "[ '${d:-0}' -gt 100000 ] && [ '${r0:-0}' -gt 0 ]"
# Each line the program reads is copied, measured and searched by libc.
check "the wrappers add references ($r0 -> $r1)" "[ '$r1' -gt '$r0' ]"
check "coverage is the runtime's references over cachegrind's ($cov)" \
  "awk -v d='$d' -v r='$r1' -v c='$cov' 'BEGIN { exit !(c - 100 * r / d < 0.06 && 100 * r / d - c < 0.06) }'"
check "lackey's split sums to 100 ($st + $pr + $lc + $ld + $ot)" \
  "awk 'BEGIN { s = $st + $pr + $lc + $ld + $ot; exit !(s > 99.9 && s < 100.1) }'"
# The recursion's return addresses and saved registers are on the stack:
# cachegrind counts them, the runtime does not.
check "stack references cachegrind counts that the runtime does not ($st% of cg, rt $rs% of its own)" \
  "awk 'BEGIN { exit !($st > 5 && $u1 > 1) }'"
check "the unseen parts sum to 100 - coverage ($u1 + $u2 + $u3 + $u4)" \
  "awk 'BEGIN { s = $u1 + $u2 + $u3 + $u4; exit !(s - (100 - $cov) < 0.3 && (100 - $cov) - s < 0.3) }'"

"$script" --quick --no-split "$build" >"$tmp/out2" 2>"$tmp/err2"
check_rc "eval-rt-coverage --quick --no-split" 0 $?
check "--no-split: coverage only" \
  "grep -q '^rt_coverage_pct_quick: ' '$tmp/out2' && ! grep -q '^rt_unseen' '$tmp/out2'"
"$script" --bogus >/dev/null 2>&1
check_rc "unknown option: usage error" 2 $?
exit $fail
