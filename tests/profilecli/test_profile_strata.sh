#!/usr/bin/env bash
# Per-stratum reuse (docs/METHODS.md §12.6): profile --backend sim groups a
# rate-skewed workload's sets and writes a histogram per group
# (phases[].strata), not for a uniform one whose sets differ only in how
# many lines land in them; predict reads the strata back, uses them and
# says so (--no-strata does not), and they bring the model's solo CPI of
# the skewed program nearer the simulated one; older files without strata
# still predict; a damaged stratum is one line naming the field.
. "$(dirname "$0")/../cli_lib.sh"
cd "$tmp" || exit 1

HOT='hotsets:size=16M,frac=0.2,weight=0.6'
"$bin" profile --backend sim --preset intel8 --workload "$HOT" --instructions 3e6 --no-probe \
  -o hot -q >/dev/null 2>err
check_rc "profile of a rate-skewed workload" 0 $?
jcheck "strata: 2..5 groups, shares adding up to 1, samples = histogram totals" hot.profile.json \
  'all(2 <= len(p["strata"]) <= 5 and abs(sum(s["sets"] for s in p["strata"]) - 1) < 1e-9 and abs(sum(s["refs"] for s in p["strata"]) - 1) < 1e-9 and all(s["samples"] > 0 for s in p["strata"]) for p in d["phases"])'
jcheck "the hot fifth of the sets: a stratum of about 20% of the sets with about 60% of the references" hot.profile.json \
  'abs(sum(s["sets"] for s in d["phases"][0]["strata"] if s["refs"] > s["sets"]) - 0.2) < 0.03 and abs(sum(s["refs"] for s in d["phases"][0]["strata"] if s["refs"] > s["sets"]) - 0.6) < 0.05'
jcheck "rate ranges ordered, references per line" hot.profile.json \
  'all(a["rate"][1] <= b["rate"][0] and a["rate"][0] <= a["rate"][1] for p in d["phases"] for a, b in zip(p["strata"], p["strata"][1:]))'
"$bin" profile --backend sim --preset intel8 --workload 'uniform:size=2M' --instructions 3e6 \
  --no-probe -o uni -q >/dev/null 2>&1
jcheck "a uniform workload gets no strata" uni.profile.json \
  'all("strata" not in p for p in d["phases"])'
"$bin" profile --backend sim --preset intel8 --workload "$HOT" --instructions 3e6 --no-probe \
  --no-strata -o old -q >/dev/null 2>&1
jcheck "--no-strata: the file as before (no strata field)" old.profile.json \
  'all("strata" not in p for p in d["phases"])'

"$bin" predict hot.profile.json uni.profile.json -o s --no-plot -q >/dev/null 2>&1
check_rc "predict with strata" 0 $?
jcheck "predict: uses the strata and says so" s.prediction.json \
  'd["options"]["strata"] and any(f.startswith("hotsets: per-stratum reuse in 1 of") for f in d["flags"]) and not any(f.startswith("uniform: per-stratum") for f in d["flags"])'
"$bin" predict hot.profile.json uni.profile.json -o ns --no-plot -q --no-strata >/dev/null 2>&1
check_rc "predict --no-strata" 0 $?
jcheck "--no-strata: not used, not said" ns.prediction.json \
  'not d["options"]["strata"] and not any("per-stratum" in f for f in d["flags"])'
"$python" - s.prediction.json ns.prediction.json <<'PY' && ok "strata: the skewed program's model solo CPI nearer the simulated solo CPI" || bad "strata do not bring the solo CPI nearer"
import json, sys
s, ns = (json.load(open(f))["programs"][0] for f in sys.argv[1:3])
meas = s["measured_solo_cpi"]
assert abs(s["model"]["solo_cpi"] - meas) < abs(ns["model"]["solo_cpi"] - meas), (s["model"], ns["model"], meas)
assert s["model"]["miss_ratio"] > ns["model"]["miss_ratio"] + 0.05
PY
"$bin" predict old.profile.json uni.profile.json -o o --no-plot -q >/dev/null 2>&1
check_rc "predict reads a profile without strata" 0 $?

"$python" - hot.profile.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["phases"][0]["strata"][0]["sets"] = 1.5
json.dump(d, open("bad.profile.json", "w"))
PY
"$bin" predict bad.profile.json uni.profile.json -q >out 2>err
check_rc "damaged stratum: exit 1" 1 $?
check "one line naming the file and the field" \
  '[ "$(wc -l <err)" = 1 ] && grep -q "bad.profile.json: phases\[0\].strata\[0\].sets: 1.5 is outside (0, 1\]" err'
"$bin" profile --backend sim --preset intel8 --workload "$HOT" --strata 1 -o x -q >/dev/null 2>err
check_rc "--strata 1: usage error" 2 $?
exit $fail
