#!/usr/bin/env bash
# scripts/eval-mrc-real.sh --quick (what scripts/eval-mrc.sh --quick runs):
# the real-program accuracy check against cachegrind runs end to end with
# the qemu sampler and the runtime and ends with its five headline lines;
# a program that cannot run fails it with no headline; eval-mrc.sh shares
# its option parsing.
. "$(dirname "$0")/../cli_lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(dirname "$bin")
script=$root/scripts/eval-mrc-real.sh
command -v valgrind >/dev/null || { echo "skip: valgrind is not installed (cachegrind is the reference)"; exit 77; }
command -v qemu-x86_64 >/dev/null || { echo "skip: qemu-x86_64 is not installed (Debian package qemu-user)"; exit 77; }
[ -f "$build/lib/libllcprobe-qemu.so" ] || { echo "skip: libllcprobe-qemu.so was not built"; exit 77; }
[ -n "${LLCPROBE_RT_LIB:-}" ] || export LLCPROBE_RT_LIB=$build/lib/libllcprobe-rt.a

"$script" --quick "$build" >"$tmp/out" 2>"$tmp/err"
check_rc "eval-mrc-real --quick" 0 $?
check "the last five lines are the headline" \
  "tail -5 '$tmp/out' | awk 'NR == 1 && /^mrc_rel_err_pct_real_qemu_misses: [0-9.]+ %\$/ { e = 1 }
     NR == 2 && /^mrc_rel_err_pct_real_qemu: [0-9.]+ %\$/ { a = 1 }
     NR == 3 && /^mrc_rel_err_pct_real_rt_misses: [0-9.]+ %\$/ { d = 1 }
     NR == 4 && /^mrc_rel_err_pct_real_rt: [0-9.]+ %\$/ { b = 1 }
     NR == 5 && /^mrc_rel_err_pct_real: [0-9.]+ %\$/ { c = 1 } END { exit !(a && b && c && d && e) }'"
check "xz and the walk against cachegrind, the walk with both samplers" \
  "grep -q '^xz  *cachegrind' '$tmp/out' && grep -q '^walk  *cachegrind' '$tmp/out' &&
   [ \$(grep -c '^  *qemu ' '$tmp/out') = 2 ] && [ \$(grep -c '^  *rt ' '$tmp/out') = 1 ]"
# Measured sizes: cachegrind's ratio at 512 KiB is a few percent for both;
# the walk is built by clang both ways, so both samplers see its references.
check "errors are percentages of cachegrind's ratio; each sampler sees over half its references" \
  "awk '\$1 == \"qemu\" || \$1 == \"rt\" { if (\$5 == \"-\" || \$5 < 0 || \$3 < 50) exit 1; n++ } END { exit n != 3 }' '$tmp/out'"

# A program of the suite that cannot run: loud failure, no headline.
"$script" --quick --no-suite --program 'broken=false' "$build" >"$tmp/out2" 2>"$tmp/err2"
check_rc "a failing --program fails the script" 1 $?
check "no headline then" "! grep -q '^mrc_rel_err' '$tmp/out2'"
check "the failure names the program" "grep -q 'broken' '$tmp/err2'"
"$script" --quick --no-suite --program 'gone=/nonexistent/prog' "$build" >"$tmp/out3" 2>"$tmp/err3"
check_rc "a missing --program fails the script" 1 $?
"$script" --quick --no-suite --rt-program 'x=true' "$build" >/dev/null 2>"$tmp/err4"
check_rc "--rt-program without its --program fails" 1 $?
"$script" --quick --samplers cpu "$build" >/dev/null 2>"$tmp/err5"
check_rc "--samplers takes qemu and rt only" 2 $?
"$root/scripts/eval-mrc.sh" --quick --program >/dev/null 2>"$tmp/err6"
check_rc "eval-mrc.sh parses the same options (--program without its value)" 2 $?
"$script" --bogus >/dev/null 2>&1
check_rc "unknown option: usage error" 2 $?
exit $fail
