#!/usr/bin/env bash
# scripts/eval-sampling.sh's hardware mode, without the hour of runs: the
# plan it would run (--dry-run) for each hardware backend, its option
# checks, and, on a machine whose backend cannot map (these VMs), the
# refusal before anything runs, with the backend's own reason.
. "$(dirname "$0")/../cli_lib.sh"
eval=${LLCPROBE_SOURCE_DIR:?}/scripts/eval-sampling.sh

bash "$eval" --bin "$bin" --out "$tmp/t" --backend timing --quick --dry-run \
  --map-args "--llc 16x2048x8 --reserve 64" >"$tmp/t.plan" 2>"$tmp/t.err"
check_rc "timing dry run" 0 $?
check "profile maps: the programs natively, restarted, with the map options" \
  'grep -q -- "map --backend timing --llc 16x2048x8 --reserve 64 --seed 1 -o $tmp/t/hw-xz.prof -q --repeat --target-output /dev/null -- xz -1 -c -T1 $tmp/t/input.bin" "$tmp/t.plan"'
check "five Global maps per program, one per intensity" \
  '[ "$(grep -c -- "--sweeps 1 --mode global .*hw-xz.r" "$tmp/t.plan")" = 5 ] && [ "$(grep -c -- "--mode global .*hw-sqlite3.r" "$tmp/t.plan")" = 5 ]'
check "both key modes fitted" \
  'grep -q "fit $tmp/t/hw-sqlite3.prof.map.json -o" "$tmp/t.plan" && grep -q "fit $tmp/t/hw-sqlite3.prof.map.json --mode sigma2" "$tmp/t.plan"'
check "no simulator run, no trace, no occupancy part" \
  '! grep -q -- "--backend sim\|llcprobe trace\|calibrate" "$tmp/t.plan"'

bash "$eval" --bin "$bin" --out "$tmp/p" --backend pmu --quick --dry-run >"$tmp/p.plan" 2>/dev/null
check_rc "pmu dry run" 0 $?
check "pmu counts one set at a time: sweeps, not Global maps" \
  '[ "$(grep -c -- "--backend pmu .*--rate" "$tmp/p.plan")" = 10 ] && ! grep -q -- "--mode global" "$tmp/p.plan"'

bash "$eval" --bin "$bin" --out "$tmp/s" --quick --dry-run >"$tmp/s.plan" 2>/dev/null
check_rc "simulator dry run" 0 $?
check "simulator plan: presets and workloads, nothing run" \
  'grep -q -- "map --backend sim --preset intel8 --seed 1 --rate 2.5e7 -o $tmp/s/intel8-gauss30.prof" "$tmp/s.plan" && [ ! -e "$tmp/s/intel8-gauss30.prof.map.json" ]'

bash "$eval" --bin "$bin" --backend warp --dry-run >/dev/null 2>&1; check_rc "unknown backend" 2 $?
bash "$eval" --bin "$bin" --backend timing --restart --dry-run >/dev/null 2>&1; check_rc "--restart on hardware" 2 $?
bash "$eval" --bin "$bin" --map-args "--llc 16x2048x8" --dry-run >/dev/null 2>&1; check_rc "--map-args with sim" 2 $?

# The refusal: only where the timing backend cannot map (checked the same
# way first); where it can, the full evaluation is not a unit test.
if "$bin" map --backend timing --mode sets --sets 0 --sweeps 1 --dwell 0.01 -o "$tmp/pre" -q -- sleep 2 \
     >/dev/null 2>"$tmp/pre.err"; then
  echo "note: the timing backend maps on this machine; the refusal path is not exercised"
else
  bash "$eval" --bin "$bin" --out "$tmp/r" --backend timing --quick >"$tmp/r.out" 2>"$tmp/r.err"
  check_rc "refused on a machine the timing backend cannot map" 1 $?
  check "one line with the backend's reason" \
    'grep -q "^eval-sampling.sh: the timing backend cannot map on this machine: llcprobe: map: " "$tmp/r.err" && grep -qF "$(tail -1 "$tmp/pre.err")" "$tmp/r.err"'
  check "nothing mapped" '[ -z "$(ls "$tmp/r"/hw-* 2>/dev/null)" ]'
fi
exit $fail
