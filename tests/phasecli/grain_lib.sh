# Shared by the phase-grain tests: label runs of a phase JSON.
# alternates FILE: the windows' phases, runs of one window and negative
# labels left out, must be 6 runs alternating between exactly two phases
# (alternate.c run with RUNS = 6).
alternates() {
  "$python" - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
lab = [w["phase"] for w in d["windows"]]
runs = []
for x in lab:
    if runs and runs[-1][0] == x:
        runs[-1][1] += 1
    else:
        runs.append([x, 1])
kept = []
for x, n in runs:
    if x < 0 or n < 2:
        continue
    if kept and kept[-1] == x:
        continue
    kept.append(x)
print("labels:", lab)
ok = len(kept) == 6 and len(set(kept)) == 2 and kept[0::2] == [kept[0]] * 3
sys.exit(0 if ok else 1)
PY
}
