#!/usr/bin/env bash
# llcprobe sim --corun: a workload pair and a trace beside a workload give
# co-run and solo figures per window (slowdown = co-run / solo cycles),
# the same seed gives the same files, and bad input gives one line and the
# right exit status, with nothing written.
. "$(dirname "$0")/../cli_lib.sh"

"$bin" sim --corun --preset intel8 -q -o "$tmp/p.json" 'uniform:size=6M' 'zipf:size=6M,alpha=0.5' \
  --instructions 2e6 --window 5e5 --cpi 1,1.5 --mlp 2 >"$tmp/out" 2>"$tmp/err"
check_rc "workload pair" 0 $?
jcheck "format and two programs" "$tmp/p.json" \
  'd["format"] == "llcprobe-corun" and d["version"] == 1 and len(d["agents"]) == 2'
jcheck "per-program options" "$tmp/p.json" \
  '[a["cpi"] for a in d["agents"]] == [1.0, 1.5] and all(a["mlp"] == 2 for a in d["agents"])'
jcheck "4 windows each, co-run and solo instructions alike" "$tmp/p.json" \
  'all(len(a["windows"]) == 4 and all(w["solo"] is not None for w in a["windows"]) for a in d["agents"])'
jcheck "a cache-hungry pair slows down" "$tmp/p.json" \
  'all(a["slowdown"] > 1.05 and a["corun"]["llc_misses"] > a["solo"]["llc_misses"] for a in d["agents"])'
jcheck "window slowdown = co-run cycles / solo cycles" "$tmp/p.json" \
  'all(abs(w["slowdown"] - w["corun"]["cycles"] / w["solo"]["cycles"]) < 1e-9 for a in d["agents"] for w in a["windows"])'
check "CSV: header and one row per window" \
  '[ "$(head -1 "$tmp/p.csv" | cut -d, -f1-4)" = "agent,window,instructions,cycles" ] && [ "$(wc -l <"$tmp/p.csv")" = 9 ]'
"$bin" sim --corun --preset intel8 -q -o "$tmp/q.json" 'uniform:size=6M' 'zipf:size=6M,alpha=0.5' \
  --instructions 2e6 --window 5e5 --cpi 1,1.5 --mlp 2 >/dev/null 2>&1
check "same seed, same files" 'cmp -s "$tmp/p.json" "$tmp/q.json" && cmp -s "$tmp/p.csv" "$tmp/q.csv"'

# A trace beside a workload: the trace runs to its end (or its budget),
# its instruction records counted. Recorded here with lackey when there is
# a compiler and valgrind.
cc=$(command -v cc || command -v gcc || command -v clang || true)
cat >"$tmp/prog.c" <<'C'
static volatile long a[1 << 15];
int main(void)
{
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < (1 << 15); i += 5)
            a[i] += a[(i * 7) & 0x7fff];
    return 0;
}
C
if [ -n "$cc" ] && command -v valgrind >/dev/null && "$cc" -O1 -o "$tmp/prog" "$tmp/prog.c" &&
   "$bin" trace -q -o "$tmp/p.trace" -- "$tmp/prog" >/dev/null 2>&1; then
  "$bin" sim --corun --preset amd32 -q -o "$tmp/t.json" "$tmp/p.trace" 'stream:size=64M' \
    --window 20000 --instructions 0,1e5 >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 2 ] && grep -qF -- "--instructions" "$tmp/err" && ok "budget 0 refused" || bad "budget 0: exit $rc"
  "$bin" sim --corun --preset amd32 -q -o "$tmp/t.json" "$tmp/p.trace" 'stream:size=64M' \
    --window 20000 --instructions 1e15,1e5 >"$tmp/out" 2>"$tmp/err"
  check_rc "trace + workload" 0 $?
  "$bin" trace --show "$tmp/p.trace" >"$tmp/show" 2>&1
  jcheck "trace source, run whole, several windows" "$tmp/t.json" \
    'd["agents"][0]["source"] == "trace" and d["agents"][0]["corun"]["instructions"] > 20000 and len(d["agents"][0]["windows"]) >= 2 and d["agents"][1]["corun"]["instructions"] >= 100000'
  jcheck "trace: co-run and solo see the same instructions" "$tmp/t.json" \
    'd["agents"][0]["corun"]["instructions"] == d["agents"][0]["solo"]["instructions"]'
else
  echo "skip trace co-run: no compiler, valgrind or lackey trace here"
fi

expect() { # NAME RC NEEDLE ARGS...
  local name=$1 want=$2 needle=$3; shift 3
  "$bin" sim --corun "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" != "$want" ]; then bad "$name: exit $rc, expected $want; $(cat "$tmp/err")"
  elif [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -qF -- "$needle" "$tmp/err"; then
    bad "$name: stderr: $(cat "$tmp/err")"
  elif [ -e "$tmp/o.json" ] || [ -e "$tmp/o.csv" ]; then bad "$name: output written"
  else ok "$name: $(cat "$tmp/err")"; fi
  rm -f "$tmp/o.json" "$tmp/o.csv"
}
O="-o $tmp/o.json --preset intel8"
expect "one target" 2 "2 to 8 targets" $O 'uniform:size=1M'
expect "nine targets" 2 "2 to 8 targets" $O u u u u u u u u u
expect "no preset" 2 "--preset is required" -o "$tmp/o.json" 'uniform:size=1M' 'uniform:size=1M'
expect "bad cpi" 2 "--cpi" $O --cpi 0 'uniform:size=1M' 'uniform:size=1M'
expect "cpi list too long" 2 "--cpi" $O --cpi 1,2,3 'uniform:size=1M' 'uniform:size=1M'
expect "bad mlp" 2 "--mlp" $O --mlp 0.5 'uniform:size=1M' 'uniform:size=1M'
expect "bad latency" 2 "--latency" $O --latency 10,20 'uniform:size=1M' 'uniform:size=1M'
expect "bad window" 2 "--window" $O --window 0 'uniform:size=1M' 'uniform:size=1M'
expect "neither trace nor workload" 1 "neither a readable trace file nor a workload" $O \
  'uniform:size=1M' "$tmp/missing.trace"
printf 'not a trace' >"$tmp/bad.trace"
expect "damaged trace" 1 "bad.trace" $O 'uniform:size=1M' "$tmp/bad.trace" --instructions 1e5
exit $fail
