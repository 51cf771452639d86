#!/usr/bin/env bash
# llcprobe sim on bad input: one line `llcprobe: <what>: <why>` on stderr,
# exit 1 for bad values and failed inputs, 2 for bad usage, never a crash,
# and no output file left behind.
. "$(dirname "$0")/../cli_lib.sh"
W="--workload uniform:size=1M"

expect() { # NAME RC NEEDLE ARGS...
  local name=$1 want=$2 needle=$3; shift 3
  "$bin" sim "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  local lines; lines=$(wc -l <"$tmp/err")
  if [ "$rc" != "$want" ]; then
    echo "FAIL $name: exit $rc, expected $want; stderr: $(cat "$tmp/err")"; fail=1
  elif [ "$lines" != 1 ]; then
    echo "FAIL $name: $lines lines on stderr:"; cat "$tmp/err"; fail=1
  elif ! grep -q "^llcprobe: " "$tmp/err"; then
    echo "FAIL $name: not 'llcprobe: ...': $(cat "$tmp/err")"; fail=1
  elif ! grep -qF -- "$needle" "$tmp/err"; then
    echo "FAIL $name: message lacks '$needle': $(cat "$tmp/err")"; fail=1
  elif [ -e "$tmp/o.json" ] || [ -e "$tmp/o.csv" ]; then
    echo "FAIL $name: output written"; fail=1
  else
    echo "ok   $name: $(cat "$tmp/err")"
  fi
  rm -f "$tmp/o.json" "$tmp/o.csv"
}

O="-o $tmp/o.json"
# Bad values: exit 1.
expect "unknown preset" 1 "--preset: " --preset intel9 $W $O
expect "unknown policy" 1 "--policy: " --preset intel8 --policy lfu $W $O
expect "unknown inclusion" 1 "--inclusion: " --preset intel8 --inclusion sometimes $W $O
expect "victim without L2" 1 "llcprobe: sim: " --preset amd32 --no-l2 $W $O
expect "bad spec kind" 1 "--workload: unknown workload kind 'unifrm'" --preset intel8 --workload unifrm:size=1M $O
expect "bad spec key" 1 "--workload: zipf: missing alpha" --preset intel8 --workload zipf:size=1M $O
expect "bad spec size" 1 "not a size" --preset intel8 --workload uniform:size=12Q $O
expect "bad noise spec" 1 "--noise: " --preset intel8 $W --noise gaussian:size=8M,cv=3 $O
expect "set-shaped too small" 1 "one line in each" --preset amd32 --workload hotsets:size=1M,frac=0.1,weight=0.9 $O
expect "bad duration" 2 "--duration: 'ten' is not a whole number" --preset intel8 $W --duration ten $O
expect "negative duration" 2 "--duration: " --preset intel8 $W --duration -5 $O
expect "zero duration" 2 "--duration: " --preset intel8 $W --duration 0 $O
expect "fractional seed" 2 "--seed: " --preset intel8 $W --seed 1.5 $O
expect "bad interval" 2 "--interval: " --preset intel8 $W --interval 1e-3 $O
expect "zero rate" 2 "--rate: " --preset intel8 $W --rate 0 $O
expect "bad noise rate" 2 "--noise-rate: " --preset intel8 $W --noise uniform:size=1M --noise-rate fast $O
expect "bad page size" 2 "--page-size: " --preset intel8 $W --page-size 8K $O
# Every number has an upper bound (stated in --help): beyond it, a usage error.
expect "duration beyond 1e12" 2 "--duration: 2e12 is outside" --preset intel8 $W --duration 2e12 $O
expect "rate beyond 1e9" 2 "--rate: 1e10 is outside" --preset intel8 $W --rate 1e10 $O
expect "interval beyond 1e12" 2 "--interval: 1e13 is outside" --preset intel8 $W --interval 1e13 $O
expect "unwritable output" 1 "cannot create" --preset intel8 $W -o "$tmp/no/such/dir/o.json"

# Trace files: missing, not a trace, empty, truncated, corrupt.
expect "missing trace" 1 "$tmp/none.trace: " --preset intel8 --trace "$tmp/none.trace" $O
echo "not a trace at all" >"$tmp/text.trace"
expect "not a trace" 1 "$tmp/text.trace: " --preset intel8 --trace "$tmp/text.trace" $O
: >"$tmp/empty.trace"
expect "empty trace" 1 "$tmp/empty.trace: " --preset intel8 --trace "$tmp/empty.trace" $O
expect "directory as trace" 1 "$tmp: " --preset intel8 --trace "$tmp" $O
if command -v valgrind >/dev/null && "$bin" trace -q -o "$tmp/ok.trace" -- /bin/true >/dev/null 2>&1; then
  size=$(stat -c %s "$tmp/ok.trace")
  head -c $((size / 2)) "$tmp/ok.trace" >"$tmp/trunc.trace"
  expect "truncated trace" 1 "$tmp/trunc.trace: " --preset intel8 --trace "$tmp/trunc.trace" $O
  cp "$tmp/ok.trace" "$tmp/bad.trace"
  printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' |
    dd of="$tmp/bad.trace" bs=1 seek=$((size / 2)) conv=notrunc status=none
  expect "corrupt trace" 1 "$tmp/bad.trace: " --preset intel8 --trace "$tmp/bad.trace" $O
else
  echo "note: no valgrind: truncated/corrupt real traces not tested here"
fi

# Bad usage: exit 2.
expect "no options" 2 "--preset is required"
expect "no preset" 2 "--preset is required" $W $O
expect "no target" 2 "exactly one of --workload and --trace" --preset intel8 $O
expect "two targets" 2 "exactly one of --workload and --trace" --preset intel8 $W --trace x $O
expect "no output" 2 "-o OUT.json is required" --preset intel8 $W
expect "unknown option" 2 "unknown option '--bogus'" --preset intel8 $W $O --bogus
expect "missing value" 2 "needs a value" --preset intel8 $W $O --duration
expect "stray argument" 2 "unexpected argument 'extra'" --preset intel8 $W $O extra
exit $fail
