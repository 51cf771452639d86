#!/usr/bin/env bash
# llcprobe map end to end: the simulator path (outputs, ground truth),
# usage and input errors, the hardware path's refusals leaving nothing
# behind, and SIGINT writing a partial map.
. "$(dirname "$0")/../cli_lib.sh"
huge() { cat /sys/kernel/mm/hugepages/hugepages-*/nr_hugepages 2>/dev/null | tr '\n' ' '; }

# --- simulator: a gaussian-shaped target on the Intel-like preset ---
# (a fixed rate here: the rate search is tested below, and costs 4x)
"$bin" map --backend sim --preset intel8 --workload gaussian:size=16M,cv=0.5 --sweeps 2 --rate 1e8 \
  -o "$tmp/g" -q >"$tmp/g.out" 2>"$tmp/g.err"
check_rc "sim map" 0 $?
jcheck "map json header" "$tmp/g.map.json" \
  'd["format"]=="llcprobe-map" and d["version"]==1 and d["complete"] and d["sweeps"]==2 and d["backend"]["name"]=="sim"'
jcheck "geometry and walk" "$tmp/g.map.json" \
  'd["llc"]["sets"]==8192 and d["llc"]["slices"]==4 and d["probe"]["walk"]==16 and "100.0% LLC hits" in d["backend"]["walk_check"]'
jcheck "every set measured" "$tmp/g.map.json" \
  'all(d["sets"]["measured"]) and len(d["sets"]["misses"])==8192 and sum(d["sets"]["misses"])==d["summary"]["total_misses"]'
jcheck "sweeps add up" "$tmp/g.map.json" \
  'all(a+b==m for a,b,m in zip(d["sets"]["sweep_misses"][0], d["sets"]["sweep_misses"][1], d["sets"]["misses"]))'
# Spearman between probe misses and true occupancy, computed independently.
rho=$("$python" "${LLCPROBE_SOURCE_DIR:?}/scripts/map-spearman.py" "$tmp/g.map.json" --min 0.9) \
  && ok "recovers true occupancy (Spearman $rho >= 0.9)" || bad "Spearman vs truth: $rho"
[ "$(head -1 "$tmp/g.map.csv")" = "set,slice,index,misses,accesses,dwell_s,true_occupancy" ] && \
  [ "$(wc -l <"$tmp/g.map.csv")" -eq 8193 ] && ok "csv" || bad "csv shape"
grep -q "^sets mapped     8192 of 8192" "$tmp/g.out" && grep -q "^hottest sets" "$tmp/g.out" && \
  grep -q "Spearman" "$tmp/g.out" && ok "summary" || bad "summary: $(cat "$tmp/g.out")"

# --- sets mode and sweep mode ---
"$bin" map --backend sim --preset intel8 --workload uniform:size=4M --sets 0-99,4096 --dwell 0.0005 \
  -o "$tmp/s" -q >/dev/null 2>&1; check_rc "sets mode" 0 $?
jcheck "only the listed sets" "$tmp/s.map.json" \
  'sum(d["sets"]["measured"])==101 and d["sets"]["measured"][4096] and not d["sets"]["measured"][100] and d["probe"]["mode"]=="sets"'
"$bin" map --backend sim --preset intel8 --workload uniform:size=4M --mode sweep --group 1024 --dwell 0.0002 \
  --sweeps 1 -o "$tmp/w" -q >/dev/null 2>&1; check_rc "sweep mode" 0 $?
jcheck "sweep covers all" "$tmp/w.map.json" 'all(d["sets"]["measured"]) and d["probe"]["group"]==1024'

# --- rate selection, baseline mask ---
"$bin" map --backend sim --preset intel8 --workload gaussian:size=16M,cv=0.5 --dwell 0.005 \
  -o "$tmp/a" >/dev/null 2>"$tmp/a.err"; check_rc "rate auto (the simulator's default)" 0 $?
jcheck "the simulator chooses its rate by default" "$tmp/a.map.json" \
  'd["rate_selection"]["method"]=="auto" and d["probe"]["rate"]==d["rate_selection"]["chosen_rate"] and all("score" in t for t in d["rate_selection"]["trials"])'
jcheck "rate auto recorded" "$tmp/a.map.json" \
  'd["rate_selection"]["method"]=="auto" and len(d["rate_selection"]["trials"])==4 and d["probe"]["rate"]==d["rate_selection"]["chosen_rate"] and d["probe"]["rate"] in [t["rate"] for t in d["rate_selection"]["trials"]] and d["rate_selection"]["planted_units"]==512'
grep -q "rate auto chose" "$tmp/a.err" && ok "rate auto progress line" || bad "no progress line: $(cat "$tmp/a.err")"
"$bin" map --backend sim --preset intel8 --workload gaussian:size=16M,cv=0.5 --rate linear --dwell 0.002 --sweeps 1 \
  -o "$tmp/l" -q >/dev/null 2>&1; check_rc "rate linear" 0 $?
jcheck "rate linear recorded" "$tmp/l.map.json" \
  'd["rate_selection"]["method"]=="linear" and d["probe"]["rate"]==d["rate_selection"]["chosen_rate"] and len(d["rate_selection"]["trials"])<=6 and ("not reached" in d["rate_selection"]["why"] or "weak signal" in d["rate_selection"]["why"] or [t for t in d["rate_selection"]["trials"] if t["rate"]==d["probe"]["rate"] and t["q_median"]<=0.05 and t["q_p95"]<=0.1])'
jcheck "no noise, LRU: nothing excluded" "$tmp/a.map.json" 'd["exclusion"]["excluded"]==0 and d["exclusion"]["leaders"]==0'
"$bin" map --backend sim --preset intel8 --policy drrip --workload uniform:size=16M --noise hotsets:size=1M,frac=0.01,weight=0.99 \
  --noise-rate 0.005 --dwell 0.005 -o "$tmp/n" -q >/dev/null 2>&1; check_rc "map with noise, DRRIP" 0 $?
jcheck "leader sets and noisy sets excluded" "$tmp/n.map.json" \
  'd["exclusion"]["leaders"]==64 and d["exclusion"]["by_baseline"]>0 and d["summary"]["sets_mapped"]==8192-d["exclusion"]["excluded"] and all(r>=m for r,m in zip(d["exclusion"]["raw_misses"], d["sets"]["misses"]))'
"$bin" map --rate auto -- /bin/true 2>/dev/null; check_rc "rate auto on hardware" 2 $?
"$bin" map --backend sim --preset intel8 --workload uniform:size=1M --rate auto --sets 0-9 2>/dev/null
check_rc "rate auto with --sets" 2 $?
"$bin" map --backend sim --preset intel8 --workload uniform:size=1M --repeat 2>/dev/null
check_rc "repeat with a workload" 2 $?

# --- usage and input errors: one line, exit 2 (usage) or 1 ---
one_line() { [ "$(wc -l <"$tmp/e")" -eq 1 ] && grep -q "^llcprobe: " "$tmp/e"; }
"$bin" map --backend sim --preset nope --workload uniform:size=1M -o "$tmp/x" 2>"$tmp/e"; rc=$?
check_rc "unknown preset" 2 $rc; one_line && ok "unknown preset: one line" || bad "$(cat "$tmp/e")"
"$bin" map --backend sim --workload "nonsense:size=1M" -o "$tmp/x" 2>"$tmp/e"; rc=$?
check_rc "bad workload" 1 $rc; one_line && ok "bad workload: one line" || bad "$(cat "$tmp/e")"
"$bin" map --backend sim --trace "$tmp/missing.trace" -o "$tmp/x" 2>"$tmp/e"; rc=$?
check_rc "missing trace" 1 $rc; grep -q "missing.trace" "$tmp/e" && ok "names the file" || bad "$(cat "$tmp/e")"
"$bin" map --backend sim --preset intel8 --workload uniform:size=1M --sets 9000 -o "$tmp/x" 2>"$tmp/e"
check_rc "set out of range" 1 $?
"$bin" map --backend sim 2>/dev/null; check_rc "no target" 2 $?
"$bin" map --backend warp -- /bin/true 2>/dev/null; check_rc "unknown backend" 2 $?
"$bin" map --dwell -1 -- /bin/true 2>/dev/null; check_rc "bad dwell" 2 $?
"$bin" map --rate 1e6 --delay 10 -- /bin/true 2>/dev/null; check_rc "rate and delay" 2 $?
"$bin" map --workload uniform:size=1M -- /bin/true 2>/dev/null; check_rc "workload without sim" 2 $?
"$bin" map --help | grep -q "usage: llcprobe map" && ok "--help" || bad "--help"
# Every numeric option has a range: a rate the simulator would take
# forever over is refused up front.
"$bin" map --backend sim --preset intel8 --workload uniform:size=1M --mode sets --sets 0 --rate 1e12 2>"$tmp/e"
check_rc "--rate 1e12" 2 $?; grep -q "^llcprobe: map: --rate: 1e12 is outside \[1000, 1e+10\]" "$tmp/e" && ok "names the range" \
  || bad "$(cat "$tmp/e")"
"$bin" map --backend sim --workload uniform:size=1M --dwell 1e9 2>/dev/null; check_rc "--dwell 1e9" 2 $?
"$bin" map --backend sim --workload uniform:size=1M --target-rate 100 2>/dev/null; check_rc "--target-rate 100" 2 $?
"$bin" map --backend sim --workload uniform:size=1M --sweeps 65 2>/dev/null; check_rc "--sweeps 65" 2 $?
map_help=$("$bin" map --help)
for r in "1e-09..10" "1e-06..3600" "1..64" "1000..1e+10" "1..1000000" "1..1048576" "0..2^64-1"; do
  grep -qF -- "$r" <<<"$map_help" || bad "map --help does not state the range $r"
done

# --- simulator with a program: its output goes to --target-output, never
# through a symlink (the file is opened after the checks that can refuse) ---
if command -v valgrind >/dev/null; then
  "$bin" map --backend sim --preset intel8 --rate 1e8 --dwell 0.0002 --sweeps 1 --no-baseline -q \
    --target-output "$tmp/t.out" -o "$tmp/p" -- /bin/echo hello-from-target >"$tmp/p.stdout" 2>"$tmp/e"
  check_rc "sim map of a program" 0 $?
  grep -q hello-from-target "$tmp/t.out" && ok "target output in the file" || bad "target output: $(cat "$tmp/t.out")"
  grep -q hello-from-target "$tmp/p.stdout" && bad "target output on llcprobe's stdout" || ok "not on llcprobe's stdout"
  echo keep >"$tmp/victim"; ln -s "$tmp/victim" "$tmp/link"
  "$bin" map --backend sim --preset intel8 --rate 1e8 --dwell 0.0002 --sweeps 1 --no-baseline -q \
    --target-output "$tmp/link" -o "$tmp/p2" -- /bin/echo hello >/dev/null 2>"$tmp/e"
  check_rc "--target-output through a symlink" 1 $?
  [ "$(cat "$tmp/victim")" = keep ] && ok "symlink target untouched" || bad "symlink followed"
  "$bin" map --backend sim --preset nope --target-output "$tmp/never" -- /bin/echo hello >/dev/null 2>&1
  check_rc "refused before tracing" 2 $?
  [ -e "$tmp/never" ] && bad "target output created before the checks" || ok "no target output on refusal"
fi

# --- hardware path: whatever this machine is, it either maps or refuses
# with one line, and leaves no hugepage reserved and no child running ---
before=$(huge)
"$bin" map -o "$tmp/hw" -q -- sleep 30 >"$tmp/hw.out" 2>"$tmp/e"; rc=$?
after=$(huge)
if [ $rc -eq 0 ]; then
  jcheck "hardware map" "$tmp/hw.map.json" 'd["backend"]["name"] in ("pmu","timing")'
else
  check_rc "hardware refusal" 1 $rc
  one_line && ok "refusal is one line: $(cat "$tmp/e")" || bad "refusal: $(cat "$tmp/e")"
fi
[ "$before" = "$after" ] && ok "hugepages as before ($after)" || bad "hugepages $before -> $after"
pgrep -f "^sleep 30$" >/dev/null && bad "target left running" || ok "no target left running"
# With the geometry given (--llc) the timing backend gets as far as this
# machine allows: it maps, or refuses with measured numbers.
if [ "$(id -u)" = 0 ]; then
  before=$(huge)
  "$bin" map --backend timing --llc 16x4096x1 --reserve 64 -o "$tmp/hwl" -q -- sleep 30 >/dev/null 2>"$tmp/e"; rc=$?
  after=$(huge)
  if [ $rc -eq 0 ]; then ok "timing map with --llc"; else
    check_rc "timing refusal with --llc" 1 $rc
    grep -q "^llcprobe: map: timing: .*[0-9]" "$tmp/e" && ok "timing refusal has numbers: $(tail -1 "$tmp/e")" \
      || bad "timing refusal: $(cat "$tmp/e")"
  fi
  [ "$before" = "$after" ] && ok "hugepages restored ($after)" || bad "hugepages $before -> $after"
  pgrep -f "^sleep 30$" >/dev/null && bad "target left running (--llc)" || ok "no target left running (--llc)"
fi
"$bin" map --backend sim --llc 16x1024 --workload uniform:size=1M 2>/dev/null; check_rc "--llc with sim" 2 $?
"$bin" map --llc 16x1000 -- /bin/true 2>/dev/null; check_rc "--llc bad sets" 2 $?
"$bin" map -q -- "$tmp/no-such-program" 2>"$tmp/e"; rc=$?
check_rc "no such program" 1 $rc
one_line && grep -q "no-such-program" "$tmp/e" && ok "no such program: one line naming it" || bad "$(cat "$tmp/e")"

# --- SIGINT: partial map written, complete false (a fixed rate: the
# signal must land in the map, not in the rate selection before it; 40
# sweeps take ~20 s on an idle machine, so the signal at 2 s lands in the
# map however fast the machine) ---
"$bin" map --backend sim --preset intel8 --workload uniform:size=16M --mode sweep --group 64 --dwell 0.001 \
  --sweeps 40 --no-baseline --rate 1e8 -o "$tmp/i" -q >/dev/null 2>&1 &
pid=$!
sleep 2
kill -INT $pid
wait $pid; rc=$?
check_rc "interrupted map exits 130" 130 $rc
jcheck "partial map written" "$tmp/i.map.json" \
  'not d["complete"] and "interrupted" in d["incomplete_reason"] and any(d["sets"]["measured"])'

# --- SIGTERM in a global simulator map (one long group): the dwell ends
# early and the partial map is written ---
"$bin" map --backend sim --preset intel8 --workload uniform:size=16M --mode global --dwell 20 --sweeps 1 \
  --no-baseline --rate 1e8 -o "$tmp/gt" -q >/dev/null 2>&1 &
pid=$!
sleep 3
kill -TERM $pid
t0=$(date +%s); wait $pid; rc=$?; t1=$(date +%s)
check_rc "terminated global map exits 143" 143 $rc
[ $((t1 - t0)) -le 5 ] && ok "stopped within $((t1 - t0)) s" || bad "took $((t1 - t0)) s to stop"
jcheck "partial global map written" "$tmp/gt.map.json" \
  'not d["complete"] and "interrupted" in d["incomplete_reason"] and any(d["sets"]["measured"])'

exit $fail
