#!/usr/bin/env bash
# scripts/eval-predict.sh without its hours of runs: the plans, the option
# checks, the hardware refusal, and one tiny co-run scored end to end.
. "$(dirname "$0")/../cli_lib.sh"
eval=${LLCPROBE_SOURCE_DIR:?}/scripts/eval-predict.sh

# The acceptance plan in the simulator: the whole suite, nothing run.
bash "$eval" --bin "$bin" --out "$tmp/s" --dry-run >"$tmp/s.plan" 2>"$tmp/s.err"
check_rc "simulator dry run" 0 $?
check "10 programs, 45 pairs and 10 mixes of 4, both presets, 3 policies" \
  'grep -q "10 programs .*55 groups (45 pairs, 10 mixes of 4), presets intel8 amd32, policies lru random drrip" "$tmp/s.err"'
check "one profile per program, preset and policy" \
  '[ "$(grep -c -- " profile --backend sim " "$tmp/s.plan")" = 60 ]'
check "each group: predict, predict --no-probe and a timed co-run" \
  '[ "$(grep -c -- " sim --corun " "$tmp/s.plan")" = 330 ] && [ "$(grep -c -- " predict .* --no-probe " "$tmp/s.plan")" = 330 ] && [ "$(grep -c -- " predict " "$tmp/s.plan")" = 660 ]'
check "phased and set-skewed workloads, real programs traced by lackey and the runtime" \
  'grep -q -- "--workload phased:" "$tmp/s.plan" && grep -q -- "--workload hotsets:" "$tmp/s.plan" && grep -q -- "--workload gaussian:" "$tmp/s.plan" && grep -q " trace -q -o $tmp/s/traces/gzip.trace" "$tmp/s.plan" && grep -q "LLCPROBE_RT_MODE=trace .*bzip2" "$tmp/s.plan"'
check "a mix of 4 co-run" 'grep -qF -- "--instructions 10000000\,10000000\,10000000\,10000000 -o $tmp/s/intel8/lru/groups/uniform6+zipf32+stream24+hotsets16/corun.json" "$tmp/s.plan"'
check "nothing run" '[ -z "$(find "$tmp/s" -name "*.json")" ] && [ ! -e "$tmp/s/traces/gzip.trace" ]'
bash "$eval" --bin "$bin" --out "$tmp/q" --quick --dry-run >"$tmp/q.plan" 2>"$tmp/q.err"
check_rc "quick dry run" 0 $?
check "quick: same suite, fewer instructions" \
  'grep -q "55 groups" "$tmp/q.err" && grep -q -- "--instructions 2000000 " "$tmp/q.plan" && ! grep -q -- "--instructions 10000000 " "$tmp/q.plan"'
bash "$eval" --bin "$bin" --out "$tmp/u" --dry-run --trace mine=/nonexistent.trace --program cat1="cat '/etc/hostname'" \
  --preset amd32 --policies random >"$tmp/u.plan" 2>"$tmp/u.err"
check_rc "user programs dry run" 0 $?
check "user programs join the suite" \
  'grep -q "12 programs" "$tmp/u.err" && grep -q -- "--trace /nonexistent.trace -o $tmp/u/amd32/random/mine " "$tmp/u.plan" && grep -qF "trace -q -o $tmp/u/traces/cat1.trace -- cat /etc/hostname" "$tmp/u.plan" && ! grep -q intel8 "$tmp/u.plan"'

# Hardware plans.
for b in timing pmu; do
  bash "$eval" --bin "$bin" --out "$tmp/$b" --backend $b --dry-run >"$tmp/$b.plan" 2>/dev/null
  check_rc "$b dry run" 0 $?
  check "$b plan: self-test first, hwloc, live profiles, pinned pairs; no simulator" \
    'head -3 "$tmp/$b.plan" | grep -q -- "map --backend $b --mode sets" && grep -q "hwloc-calc --number-of core l3cache:0" "$tmp/$b.plan" && grep -q -- "profile -o $tmp/$b/hw/xz -q --name xz -- xz -1 -c -T1 $tmp/$b/input.bin" "$tmp/$b.plan" && grep -q "l3cache:0.core:1" "$tmp/$b.plan" && ! grep -q -- "--backend sim\|sim --corun" "$tmp/$b.plan"'
done

# Option checks (usage errors, exit 2). Without --out the script makes its
# own directory; a usage error or a dry run leaves none behind.
before=$(ls -d /tmp/eval-predict.* 2>/dev/null | sort)
bash "$eval" --bin "$bin" --backend warp --dry-run >/dev/null 2>&1; check_rc "unknown backend" 2 $?
bash "$eval" --bin "$bin" --preset skylake --dry-run >/dev/null 2>&1; check_rc "unknown preset" 2 $?
bash "$eval" --bin "$bin" --policies lru,fifo --dry-run >/dev/null 2>&1; check_rc "unknown policy" 2 $?
bash "$eval" --bin "$bin" --jobs 0 --dry-run >/dev/null 2>&1; check_rc "--jobs 0" 2 $?
bash "$eval" --bin "$bin" --trace nofile --dry-run >/dev/null 2>&1; check_rc "--trace without NAME=" 2 $?
bash "$eval" --bin "$bin" --trace zipf32=/x.trace --dry-run >/dev/null 2>&1; check_rc "a name given twice" 2 $?
bash "$eval" --bin "$bin" --subset uniform6,nosuch --dry-run >/dev/null 2>&1; check_rc "--subset of an unknown program" 2 $?
bash "$eval" --bin "$bin" --dry-run --preset intel8 --policies lru >/dev/null 2>&1; check_rc "dry run without --out" 0 $?
check "no directory of its own left by usage errors or a dry run" \
  '[ "$(ls -d /tmp/eval-predict.* 2>/dev/null | sort)" = "$before" ]'
bash "$eval" --bin "$bin" --out "$tmp/m" --trace mine="$tmp/missing.trace" >/dev/null 2>"$tmp/m.err"
check_rc "a missing user trace" 1 $?
check "names it" 'grep -q "^eval-predict.sh: --trace mine: .*missing.trace: no such trace" "$tmp/m.err"'

# The refusal: only where the backend cannot map here (checked the same way).
for b in pmu timing; do
  if "$bin" map --backend $b --mode sets --sets 0 --sweeps 1 --dwell 0.01 -o "$tmp/pre-$b" -q -- sleep 2 \
       >/dev/null 2>"$tmp/pre-$b.err"; then
    echo "note: the $b backend maps on this machine; its refusal path is not exercised"
    continue
  fi
  bash "$eval" --bin "$bin" --out "$tmp/r-$b" --backend $b >"$tmp/r-$b.out" 2>"$tmp/r-$b.err"
  check_rc "$b: refused on a machine it cannot measure" 1 $?
  check "$b: one line with the backend's reason" \
    'grep -q "^eval-predict.sh: the $b backend cannot run co-runs on this machine: llcprobe: map: " "$tmp/r-$b.err" && grep -qF "$(tail -1 "$tmp/pre-$b.err")" "$tmp/r-$b.err"'
  check "$b: nothing run" '[ ! -e "$tmp/r-$b/hw" ] && [ ! -s "$tmp/r-$b.out" ]'
done

# A failing step stops the run and is named (a trace that is not one).
echo "not a trace" >"$tmp/bad.trace"
bash "$eval" --bin "$bin" --out "$tmp/f" --subset uniform6,bad --trace bad="$tmp/bad.trace" --preset intel8 \
  --policies lru --instructions 100000 --jobs 2 >"$tmp/f.out" 2>"$tmp/f.err"
check_rc "a broken trace fails the run" 1 $?
check "the failed step is named" 'grep -q "^eval-predict.sh: profiles: 1 of 2 runs failed" "$tmp/f.err" && grep -q "profile-intel8-lru-bad: llcprobe: profile: " "$tmp/f.err"'

# Tiny end to end: 2 synthetic programs, one pair, one preset and policy.
bash "$eval" --bin "$bin" --out "$tmp/e" --subset uniform6,zipf32 --preset intel8 --policies lru \
  --instructions 300000 --jobs 2 >"$tmp/e.out" 2>"$tmp/e.err"
check_rc "tiny run" 0 $?
check "says it is a subset" 'grep -q "SUBSET RUN" "$tmp/e.out"'
check "table rows per policy, preset and kind" \
  'grep -Eq "^lru +intel8 +synthetic +2 +[0-9.]+ " "$tmp/e.out" && grep -Eq "^all +all +all +2 " "$tmp/e.out"'
for h in predict_slowdown_mae_pct predict_slowdown_max_pct predict_mr_mae predict_occ_mae_pct_llc \
         foa_slowdown_mae_pct sdc_mr_mae noprobe_occ_mae_pct_llc predict_slowdown_mae_pct_lru predict_cdf_error \
         predict_speedup_wall_x predict_corun_sim_cpu_s predict_model_cpu_s predict_speedup_x; do
  check "headline $h parses" "grep -Eq '^$h: [0-9]+(\\.[0-9]+)? [^ ]+\$' \"\$tmp/e.out\""
done
check "headlines are the last lines" 'tail -1 "$tmp/e.out" | grep -q "^predict_speedup_x: "'
check "errors are errors: non-negative, slowdown max >= mean" \
  "\"\$python\" - \"\$tmp/e.out\" <<'PY'
import sys
v = {l.split(':')[0]: float(l.split()[1]) for l in open(sys.argv[1]) if l[0].isalpha() and ': ' in l}
assert all(x >= 0 for x in v.values()), v
assert v['predict_slowdown_max_pct'] >= v['predict_slowdown_mae_pct']
assert v['predict_speedup_x'] > 1
# in CPU time: the co-run's and the predictions' recorded CPU time
assert abs(v['predict_speedup_x'] - v['predict_corun_sim_cpu_s'] / v['predict_model_cpu_s']) <= 0.5 + 1e-9
assert 0 < v['predict_model_cpu_s'] and 0 < v['predict_corun_sim_cpu_s'] <= 1.2 * v['predict_corun_sim_s'] + 0.05
PY"
exit $fail
