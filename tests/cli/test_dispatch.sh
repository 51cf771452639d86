#!/usr/bin/env bash
# Top-level dispatch: help, version, unknown commands, --help on every command.
set -u
bin=$1
fail=0
check() { # check NAME EXPECTED_RC ACTUAL_RC
  if [ "$2" != "$3" ]; then echo "FAIL $1: exit $3, expected $2"; fail=1; else echo "ok   $1"; fi
}

out=$("$bin" --help); rc=$?
check "--help exits 0" 0 $rc
grep -q "usage: llcprobe" <<<"$out" || { echo "FAIL --help text"; fail=1; }

"$bin" --version >/dev/null; check "--version" 0 $?

err=$("$bin" 2>&1 >/dev/null); rc=$?
check "no command is a usage error" 2 $rc

err=$("$bin" frobnicate 2>&1 >/dev/null); rc=$?
check "unknown command" 2 $rc
[ "$(wc -l <<<"$err")" -eq 1 ] || { echo "FAIL unknown command: not one line: $err"; fail=1; }
grep -q "^llcprobe: frobnicate: unknown command" <<<"$err" || { echo "FAIL message: $err"; fail=1; }

# Every listed command answers --help with exit 0 and some text on stdout.
for cmd in $("$bin" --help | awk '/^commands:/{on=1;next} on && /^  [a-z]/ {print $1}'); do
  out=$("$bin" "$cmd" --help); rc=$?
  check "$cmd --help" 0 $rc
  [ -n "$out" ] || { echo "FAIL $cmd --help printed nothing"; fail=1; }
done
exit $fail
