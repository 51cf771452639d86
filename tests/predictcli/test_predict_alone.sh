#!/usr/bin/env bash
# llcprobe predict of one program alone against its own timed solo run
# (the profile's solo figures, simulated): a zipf program over twice the
# intel8 LLC and half the amd32 one, 3e6 instructions, so most of its
# misses are first touches. Its profile's reuse is uncensored for the
# model (docs/METHODS.md §7.7), which leaves few dangling samples; the
# run's first touches still number the recorded ones (counted in sim
# profiles), so the miss ratio comes out right on both presets.
. "$(dirname "$0")/../cli_lib.sh"
cd "$tmp" || exit 1

for preset in intel8 amd32; do
  "$bin" profile --backend sim --preset $preset --workload "zipf:size=16M,alpha=0.8" \
    --instructions 3e6 --no-probe -o z$preset -q >/dev/null 2>&1
  check_rc "$preset: profile" 0 $?
  "$bin" predict z$preset.profile.json -o p$preset --no-plot -q >/dev/null 2>&1
  check_rc "$preset: predict alone" 0 $?
  jcheck "$preset: the miss ratio alone within 0.01 of the timed solo run's" p$preset.prediction.json \
    'abs(d["programs"][0]["model"]["miss_ratio"] - json.load(open("z'$preset'.profile.json"))["phases"][0]["solo"]["llc_miss_ratio"]) < 0.01'
  jcheck "$preset: first touches counted: at least the run's share of dangling samples" z$preset.profile.json \
    'sum(d["windows"]["first_touches"]) > 0.9 * sum(d["windows"]["references"]) * int(d["phases"][0]["rdhist"].split("inf=")[1].split()[0]) / d["phases"][0]["samples"]'
done
exit $fail
