#!/usr/bin/env bash
# Inputs: read once (a pipe, <(command) and a FIFO work), a directory is
# called one, line readers are bounded (errors name file, line and limit),
# and bytes from input files are escaped in messages.
. "$(dirname "$0")/../cli_lib.sh"

"$bin" map --backend sim --preset intel8 --workload gaussian:size=16M,cv=0.3 --rate 1e8 \
  -o "$tmp/g" -q >/dev/null 2>&1 || { bad "map for a fit input"; exit $fail; }

"$bin" fit "$tmp/g.map.json" --no-plots -o "$tmp/file" -q >"$tmp/out" 2>"$tmp/err" \
  || bad "fit on a file: $(cat "$tmp/err")"
"$bin" fit <(cat "$tmp/g.map.json") --no-plots -o "$tmp/pipe" -q >"$tmp/out" 2>"$tmp/err"
check_rc "fit <(cat map)" 0 $?
check "fit <(cat map): same result as from the file (but the source's name)" \
  'cmp -s <(grep -v "\"source\"" "$tmp/file.fit.json") <(grep -v "\"source\"" "$tmp/pipe.fit.json")'
mkfifo "$tmp/fifo"
cat "$tmp/g.map.json" >"$tmp/fifo" &
writer=$!
timeout 60 "$bin" fit "$tmp/fifo" --no-plots -o "$tmp/fifo-out" -q >"$tmp/out" 2>"$tmp/err"
check_rc "fit FIFO" 0 $?
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null

# sim reads a trace's trailer first (a seek): a FIFO is refused at once
# with that reason instead of hanging on a second open.
timeout 20 "$bin" sim --preset intel8 --trace "$tmp/fifo" -q -o "$tmp/s.json" >"$tmp/out" 2>"$tmp/err"
check_rc "sim --trace FIFO refused" 1 $?
check "sim --trace FIFO: says why" 'grep -q "not a regular file (a pipe or FIFO)" "$tmp/err"'

mkdir "$tmp/dir.json"
"$bin" fit "$tmp/dir.json" >"$tmp/out" 2>"$tmp/err"
check_rc "fit on a directory" 1 $?
check "fit on a directory says so ($(cat "$tmp/err"))" 'grep -q "is a directory" "$tmp/err" && ! grep -q "not JSON" "$tmp/err"'

# Raw bytes of a file are escaped when a message quotes them.
printf '{"format": "evil\\u001b[2J\\u0001", "version": 1}\n' >"$tmp/esc.json"
"$bin" fit "$tmp/esc.json" >"$tmp/out" 2>"$tmp/err"
check_rc "fit on another format" 1 $?
check "control bytes escaped ($(cat "$tmp/err"))" \
  'grep -q "evil\\\\x1b\[2J\\\\x01" "$tmp/err" && ! grep -q "$(printf "\033")" "$tmp/err"'
exit $fail
