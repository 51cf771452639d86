#!/usr/bin/env bash
# Top-level dispatch: help, version, unknown commands, --help on every command.
. "$(dirname "$0")/../cli_lib.sh"

out=$("$bin" --help); rc=$?
check_rc "--help exits 0" 0 $rc
grep -q "usage: llcprobe" <<<"$out" || { echo "FAIL --help text"; fail=1; }

"$bin" --version >/dev/null; check_rc "--version" 0 $?

err=$("$bin" 2>&1 >/dev/null); rc=$?
check_rc "no command is a usage error" 2 $rc

err=$("$bin" frobnicate 2>&1 >/dev/null); rc=$?
check_rc "unknown command" 2 $rc
[ "$(wc -l <<<"$err")" -eq 1 ] || { echo "FAIL unknown command: not one line: $err"; fail=1; }
grep -q "^llcprobe: frobnicate: unknown command" <<<"$err" || { echo "FAIL message: $err"; fail=1; }

# Every listed command answers --help with exit 0 and some text on stdout.
for cmd in $("$bin" --help | awk '/^commands:/{on=1;next} on && /^  [a-z]/ {print $1}'); do
  out=$("$bin" "$cmd" --help); rc=$?
  check_rc "$cmd --help" 0 $rc
  [ -n "$out" ] || { echo "FAIL $cmd --help printed nothing"; fail=1; }
done
exit $fail
