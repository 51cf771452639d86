#!/usr/bin/env bash
# llcprobe phase --trace: a synthetic trace of phases A B A B (instruction
# addresses in two disjoint loops, cache-friendly vs cache-hostile loads) with
# a matching exp-bbv file: phases, ARI 1 against the BBV, CCoV < CoV.
. "$(dirname "$0")/../cli_lib.sh"
helpers=$(dirname "$bin")/tests/phasecli

"$helpers/phasecli_gen_trace" "$tmp/t.trace" "$tmp/t.bb" 20000 6 4 || { echo "FAIL gen"; exit 1; }
"$bin" phase --trace "$tmp/t.trace" --window 20000 --bbv "$tmp/t.bb" --sim intel8 \
  -o "$tmp/t" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
check "exit 0" '[ $rc = 0 ]'
"$python" - "$tmp/t.phase.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["mode"] == "trace"
w = d["windows"]
assert len(w) == 24, len(w)
labels = [x["phase"] for x in w]
print("labels:", labels)
assert d["summary"]["phases"] == 2, d["summary"]
# runs of 6: A = first label, B = label at 7 (the first window of a run may
# be sampled at a lowered rate: then it only matches, or stays unclassified),
# both recur
assert labels[0] == labels[12] and labels[7] == labels[19] and labels[0] != labels[7]
assert sum(l < 0 for l in labels) <= 3, "few unclassified"
assert d["bbv"]["ari"] > 0.85, d["bbv"]
assert d["bbv"]["compared"] == 24
s = d["sim"]
assert s["cov_program"] > 0.5, s
assert s["ccov_phases"] < 0.5 * s["cov_program"], s
assert all(x["instructions"] == 20000 for x in w)
print("ok   trace classification, ari, ccov")
PY
# With the blocks' addresses also the 32-entry BBV (block 1 at 0x401000
# hashes to bucket 28, blocks 2 and 3 to 12 and 20): still two phases, the
# same agreement; with --sim, the CoV / CCoV within its phases as well.
printf 'F:1:401000:\nF:2:7f0000:\nF:3:7f0060:\n' >"$tmp/t.pc"
"$bin" phase --trace "$tmp/t.trace" --window 20000 --bbv "$tmp/t.bb" --bbv-pc "$tmp/t.pc" \
  --sim intel8 -o "$tmp/h" --no-plot >"$tmp/out" 2>&1
rc=$?
check "bbv-pc: exit 0" '[ $rc = 0 ]'
check "bbv-pc: both references printed" 'grep -q "^bbv: " "$tmp/out" && grep -q "^bbv hashed to 32" "$tmp/out"'
"$python" - "$tmp/h.phase.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
b, s = d["bbv"], d["sim"]
assert b["phases"] == 2 and b["bbv32"]["phases"] == 2, b
assert b["ari"] > 0.85 and b["bbv32"]["ari"] > 0.85, b
assert s["ccov_bbv32_phases"] < 0.5 * s["cov_program"], s
assert s["cov_bbv32_phases"] <= s["ccov_bbv32_phases"], s
print("ok   bbv-pc json")
PY
# The CSV carries both reference labellings: two phases, alternating in
# runs of 6 windows like the trace.
"$python" - "$tmp/h.phase.csv" <<'PY' || fail=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for col in ("bbv_phase", "bbv32_phase"):
    lab = [int(r[col]) for r in rows]
    assert len(set(lab)) == 2 and lab[0] == lab[5] == lab[12] != lab[6] == lab[18], (col, lab)
print("ok   bbv-pc csv")
PY
# A pc file that does not name a block the BBVs use is refused.
printf 'F:1:401000:\nF:2:7f0000:\n' >"$tmp/bad.pc"
"$bin" phase --trace "$tmp/t.trace" --window 20000 --bbv "$tmp/t.bb" --bbv-pc "$tmp/bad.pc" \
  -o "$tmp/b" --no-plot >"$tmp/out" 2>&1
rc=$?
check "bbv-pc missing block: exit 1" '[ $rc = 1 ]'
check "bbv-pc missing block: says which" 'grep -q "^llcprobe: phase: .*block 3 of the BBV file has no address" "$tmp/out"'
"$bin" phase --trace "$tmp/t.trace" --window 20000 --bbv-pc "$tmp/t.pc" >"$tmp/out" 2>&1
rc=$?
check "bbv-pc without bbv: usage (2)" '[ $rc = 2 ]'

# Same seed, same output; another seed still finds the same phases.
"$bin" phase --trace "$tmp/t.trace" --window 20000 -o "$tmp/u" --no-plot >/dev/null 2>&1
"$bin" phase --trace "$tmp/t.trace" --window 20000 -o "$tmp/v" --no-plot >/dev/null 2>&1
check "deterministic" 'cmp -s "$tmp/u.phase.csv" "$tmp/v.phase.csv"'
"$bin" phase --trace "$tmp/t.trace" --window 20000 --seed 9 -o "$tmp/w" --no-plot >/dev/null 2>&1
check "other seed: 2 phases" 'grep -q "\"phases\": 2," "$tmp/w.phase.json"'
exit $fail
