#!/usr/bin/env bash
# llcprobe phase: usage errors (exit 2) and bad inputs (exit 1), one line each.
. "$(dirname "$0")/../cli_lib.sh"
expect() {
  local name=$1 rc=$2 pattern=$3
  shift 4
  (cd "$tmp" && "$bin" phase "$@" >"$tmp/out" 2>"$tmp/err" </dev/null)
  local got=$? lines
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
expect "nothing to do"     2 "no program to run" --
expect "unknown option"    2 "unknown option" -- --frobnicate
expect "missing value"     2 "needs a value" -- --theta
expect "bad theta"         2 "theta wants a number" -- --theta 1.5 -- /bin/true
expect "bad window"        2 "window wants" -- --window 10 -- /bin/true
expect "bad source"        2 "source is auto" -- --source magic -- /bin/true
expect "bad samples"       2 "samples wants" -- --samples 3 -- /bin/true
expect "bbv without trace" 2 "go with --trace" -- --bbv x.bb -- /bin/true
expect "noise without sim" 2 "goes with --sim" -- --trace x --noise stream
expect "trace and program" 2 "not both" -- --trace x.trace -- /bin/true
expect "program missing"   1 "no-such-program-llc" -- -- no-such-program-llc
expect "trace missing"     1 "No such file" -- --trace "$tmp/none.trace"
printf 'not a trace\n' >"$tmp/junk"
expect "trace is junk"     1 "not an llcprobe trace" -- --trace "$tmp/junk"
expect "output dir missing" 1 "phase" -- -o "$tmp/nodir/x" -- /bin/true
ls "$tmp"/*.phase.* >/dev/null 2>&1 && { echo "FAIL outputs left behind"; fail=1; }
exit $fail
