#!/usr/bin/env bash
# llcprobe trace: usage errors and unreadable inputs give one line on stderr
# and the documented exit status; none of these needs valgrind.
. "$(dirname "$0")/../cli_lib.sh"

# expect NAME RC PATTERN -- ARGS...: exit status RC, exactly one stderr line matching PATTERN.
expect() {
  local name=$1 rc=$2 pattern=$3
  shift 4
  "$bin" trace "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local got=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$got" != "$rc" ]; then
    echo "FAIL $name: exit $got, expected $rc ($(cat "$tmp/err"))"; fail=1
  elif [ "$lines" != 1 ]; then
    echo "FAIL $name: $lines lines on stderr:"; cat "$tmp/err"; fail=1
  elif ! grep -q -- "$pattern" "$tmp/err"; then
    echo "FAIL $name: '$(cat "$tmp/err")' lacks '$pattern'"; fail=1
  else
    echo "ok   $name: $(cat "$tmp/err")"
  fi
}

"$bin" trace --help >"$tmp/out" || { echo "FAIL --help"; fail=1; }
grep -q "usage: llcprobe trace" "$tmp/out" || { echo "FAIL --help text"; fail=1; }

expect "missing -o"        2 "missing -o" -- -- /bin/true
expect "missing program"   2 "no program to trace" -- -o "$tmp/x.trace"
expect "unknown option"    2 "unknown or incomplete option" -- --frobnicate
expect "dump without show" 2 "go with --show" -- --dump 3
expect "bad dump count"    2 "--dump: .many. is not a whole number" -- --show x --dump many
expect "dump beyond 1e9"   2 "--dump: 2e9 is outside" -- --show x --dump 2e9
expect "program not found" 1 "command not found in PATH" -- -o "$tmp/x.trace" -- no-such-program-llc
expect "program path missing" 1 "No such file or directory" -- -o "$tmp/x.trace" -- ./no/such/prog
printf 'hello\n' >"$tmp/notexec"; chmod 644 "$tmp/notexec"
expect "program not executable" 1 "not executable" -- -o "$tmp/x.trace" -- "$tmp/notexec"
expect "program is a directory" 1 "is a directory" -- -o "$tmp/x.trace" -- "$tmp"
expect "valgrind missing"  1 "valgrind /no-such-valgrind: No such file" -- --valgrind /no-such-valgrind -o "$tmp/x.trace" -- /bin/true
PATH=/nonexistent "$bin" trace -o "$tmp/x.trace" -- /bin/true 2>"$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -q "valgrind not found in PATH" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ]; then
  echo "ok   valgrind not in PATH: $(cat "$tmp/err")"
else
  echo "FAIL valgrind not in PATH: exit $rc: $(cat "$tmp/err")"; fail=1
fi
expect "output dir missing" 1 "cannot create" -- -o "$tmp/nodir/x.trace" -- /bin/true
expect "output is a device" 1 "not a regular file" -- -o /dev/null -- /bin/true
[ -e "$tmp/nodir" ] && { echo "FAIL created the output directory"; fail=1; }

: >"$tmp/empty"
expect "show empty file"   1 "empty file, not an llcprobe trace" -- --show "$tmp/empty"
expect "show foreign file" 1 "not an llcprobe trace" -- --show "$LLCPROBE_FIXTURES/lackey/small.txt"
expect "show missing file" 1 "No such file" -- --show "$tmp/none.trace"
expect "show directory"    1 "is a directory" -- --show "$tmp"
exit $fail
