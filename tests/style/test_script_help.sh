#!/usr/bin/env bash
# Every script a user runs answers --help with what it does, exit 0, and
# does nothing else (no build, no run): the scripts under scripts/ with a
# shebang (the rest are sourced by others), llcprobe-cc aside (a compiler
# driver: its --help is clang's). A script that ignored --help would start
# its work here, which the time limit turns into a failure.
set -u
root=${1:?usage: test_script_help.sh SOURCE_DIR}
fail=0 n=0
for f in "$root"/scripts/*.sh "$root"/scripts/*.py; do
  [ "$(head -c 2 "$f")" = '#!' ] || continue
  n=$((n + 1))
  case "$f" in
    *.py) out=$(cd "$root" && timeout 20 python3 "$f" --help 2>&1) ;;
    *) out=$(cd "$root" && timeout 20 bash "$f" --help 2>&1) ;;
  esac
  rc=$?
  lines=$(printf '%s\n' "$out" | grep -c .)
  if [ "$rc" -ne 0 ] || [ "$lines" -lt 2 ]; then
    echo "FAIL: ${f#"$root"/}: --help exited $rc with $lines lines"
    fail=1
  fi
done
echo "$n scripts answer --help"
exit "$fail"
