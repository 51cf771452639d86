#!/usr/bin/env python3
"""Scores `llcprobe predict` against the timed co-run (`llcprobe sim --corun`)
for scripts/eval-predict.sh.

usage: predict-compare.py MANIFEST

MANIFEST is tab-separated, one co-run per line:
    preset policy group programs kinds corun.json corun.out pred.json noprobe.json
(programs and kinds comma separated, kinds synthetic|real; corun.out is the
stdout of `sim --corun`, whose line "simulated N co-run accesses in X s
(Y s CPU)" gives the co-run simulation time).

Speed: co-run simulation time over prediction time, both in CPU time of
the thread that did the work where the files record it (`sim --corun`'s
"(Y s CPU)", the prediction's `prediction_cpu_ms`), else in wall time. The
evaluation runs its jobs side by side; a prediction of a few ms loses
whole scheduler slices to them, so its wall time says more about the load
than about its cost. Both ratios are printed.

Both sides are compared over the same instructions: the simulated figures
are taken over the co-run windows that end before the first agent ends
(the others go on alone after that, and their end-of-run occupancy is then
not a co-run figure), and the model's (and --no-probe's) slowdown and miss
ratio over the same instructions of each program, from its timeline
segments (PREFIX.prediction.csv: a segment runs dt x clock / CPI
instructions at its profile window's references per instruction; the one
that crosses the end counts in part). The prediction's own summary covers
the stretch until its first program ends, which is not cut at a window:
while a program warms up, the part of a window past the simulated stretch
weighs on its miss ratio (hotsets16 beside gzip on amd32: 7 windows
simulated, 8.6 predicted, miss ratio 0.45 on its own stretch against 0.53
simulated; 0.49 over the same instructions). FOA and SDC keep their
summaries (fixed shares, no warm-up). Per program in each group:
  slowdown error = |predicted - simulated slowdown| x 100 (percent of solo time)
  miss ratio error = |predicted - simulated LLC misses per reference|
  occupancy error = |predicted - simulated mean occupancy| / LLC lines x 100
for the model, FOA, SDC and the model with --no-probe. The simulator records
each window's occupancy at the window's end, so the model's (and
--no-probe's) is taken at the same points: per co-run window, the
occupancy of the timeline segment (PREFIX.prediction.csv) in which the
window ends, averaged over the same windows (FOA and SDC hold fixed ways:
their figure). While a program warms up, its mean occupancy over a window
is well below the one at the window's end. CDF error (first pair
and first mix of 4, every preset and policy): per profile window, predicted
miss ratio (segments weighted by instructions) and simulated one, each list
sorted, mean absolute difference (the 1-Wasserstein distance).
Prints the tables, then the headline lines `name: value unit` last.
Exits 1 naming the file when an input is missing or damaged.
"""
import csv
import json
import math
import re
import sys

METRICS = ("slowdown", "mr", "occ")
MODELS = ("model", "foa", "sdc", "noprobe")
PREFIX = {"model": "predict", "foa": "foa", "sdc": "sdc", "noprobe": "noprobe"}


class Bad(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Bad(f"{path}: {e}")


def need(obj, key, path):
    if not isinstance(obj, dict) or key not in obj or obj[key] is None:
        raise Bad(f"{path}: field '{key}' missing")
    return obj[key]


def overlap_windows(doc, path):
    """Per agent: the co-run windows that end before the first agent ends."""
    agents = need(doc, "agents", path)
    ends, series = [], []
    for a in agents:
        t, ws = 0.0, []
        for w in need(a, "windows", path):
            c = need(w, "corun", path)
            t += c["cycles"]
            ws.append((t, w))
        if not ws:
            raise Bad(f"{path}: agent {a.get('name')}: no windows")
        ends.append(t)
        series.append(ws)
    stop = min(ends) * (1 + 1e-12)
    return [[w for t, w in ws if t <= stop] or [ws[0][1]] for ws in series]


def sim_figures(ws, path):
    cc = sum(w["corun"]["cycles"] for w in ws)
    sc = sum(need(w, "solo", path)["cycles"] for w in ws)
    acc = sum(w["corun"]["accesses"] for w in ws)
    mis = sum(w["corun"]["llc_misses"] for w in ws)
    occ = sum(w["corun"]["occupancy"] for w in ws) / len(ws)
    if sc <= 0 or acc <= 0:
        raise Bad(f"{path}: a program has no solo cycles or no accesses in the co-run")
    return {"slowdown": cc / sc, "mr": mis / acc, "occ": occ}


def pred_figures(prog, part, path):
    p = need(prog, part, path)
    return {"slowdown": need(p, "slowdown", path), "mr": need(p, "miss_ratio", path),
            "occ": need(p, "occupancy_lines", path)}


def first_pass(csv_path, i):
    """(profile window, row) of program i's segments in PREFIX.prediction.csv,
    in its first pass through its windows (a program that ends starts
    again from its first)."""
    with open(csv_path) as f:
        last = -1
        for r in csv.DictReader(f):
            if int(r["program"]) != i:
                continue
            k = int(r["window"])
            if k < last:
                return
            last = k
            yield k, r


def pred_occ_at_ends(csv_path, i, n_win, per):
    """Predicted occupancy of program i at the ends of its first n_win
    co-run windows, per co-run windows to a profile window: the segment in
    which each ends (segments weighted by instructions, dt / cpi), in the
    program's first pass through its windows."""
    segs = {}
    try:
        for k, r in first_pass(csv_path, i):
            segs.setdefault(k, []).append((float(r["dt_s"]) / float(r["cpi"]),
                                           float(r["occupancy_lines"])))
    except (OSError, KeyError, ValueError, ZeroDivisionError) as e:
        raise Bad(f"{csv_path}: {e}")
    out = []
    for j in range(n_win):
        k, part = divmod(j, per)
        if k not in segs:
            break
        tot = sum(w for w, _ in segs[k])
        want, acc, occ = tot * (part + 1) / per, 0.0, segs[k][-1][1]
        for w, o in segs[k]:
            acc += w
            if acc >= want * (1 - 1e-9):
                occ = o
                break
        out.append(occ)
    if not out:
        raise Bad(f"{csv_path}: program {i} has no segments")
    return sum(out) / len(out)


def pred_over_instructions(csv_path, i, n_instr, prof_path):
    """Predicted slowdown and miss ratio of program i over its first n_instr
    instructions (those of the simulated windows it is scored on), from the
    timeline segments of its first pass (PREFIX.prediction.csv): a segment
    runs dt x clock / cpi instructions at the references per instruction of
    its profile window; the segment that crosses n_instr counts in part."""
    prof = load(prof_path)
    w = need(prof, "windows", prof_path)
    rpi = [r / n if n > 0 else 0.0 for r, n in zip(need(w, "references", prof_path),
                                                  need(w, "instructions", prof_path))]
    hz = need(need(prof, "timing", prof_path), "freq_hz", prof_path)
    left, co, so, mis, ref = float(n_instr), 0.0, 0.0, 0.0, 0.0
    try:
        for k, r in first_pass(csv_path, i):
            if left <= 0:
                break
            cpi = float(r["cpi"])
            n = min(left, float(r["dt_s"]) * hz / cpi)
            left -= n
            co += n * cpi
            so += n * float(r["solo_cpi"])
            rk = n * (rpi[k] if k < len(rpi) else 0.0)
            ref += rk
            mis += rk * float(r["miss_ratio"])
    except (OSError, KeyError, ValueError, ZeroDivisionError, IndexError) as e:
        raise Bad(f"{csv_path}: {e}")
    if so <= 0 or ref <= 0:
        raise Bad(f"{csv_path}: program {i} has no segments with instructions and references")
    return co / so, mis / ref


def window_instr(profile_path):
    prof = load(profile_path)
    w = need(prof, "windows", profile_path)
    n = need(w, "length", profile_path)
    if need(w, "unit", profile_path) == "references":
        n *= need(prof, "timing", profile_path).get("ipa", 3.0)
    return n


def pred_series(csv_path, i):
    """Predicted miss ratio per profile window of program i."""
    acc = {}
    try:
        with open(csv_path) as f:
            for r in csv.DictReader(f):
                if int(r["program"]) != i:
                    continue
                wgt = float(r["dt_s"]) / float(r["cpi"])
                k = int(r["window"])
                s = acc.setdefault(k, [0.0, 0.0])
                s[0] += wgt * float(r["miss_ratio"])
                s[1] += wgt
    except (OSError, KeyError, ValueError) as e:
        raise Bad(f"{csv_path}: {e}")
    return [acc[k][0] / acc[k][1] for k in sorted(acc) if acc[k][1] > 0]


def sim_series(ws, per):
    """Simulated miss ratio per profile window (per co-run windows each)."""
    out = []
    for k in range(0, len(ws) - per + 1, per):
        part = ws[k:k + per]
        a = sum(w["corun"]["accesses"] for w in part)
        out.append(sum(w["corun"]["llc_misses"] for w in part) / a if a else 0.0)
    return out


def cdf_error(a, b):
    n = min(len(a), len(b))
    if n == 0:
        return math.nan
    a, b = sorted(a[:n]), sorted(b[:n])
    return sum(abs(x - y) for x, y in zip(a, b)) / n


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print("usage: predict-compare.py MANIFEST (--help: what it scores and how)",
              file=sys.stderr)
        return 2
    rows = []          # one per program per group
    cdf = {"pair": [], "mix": []}
    sim_s = pred_s = 0.0          # wall
    sim_cpu = pred_cpu = 0.0      # CPU, while every file records it
    have_cpu = True
    firsts = set()
    with open(sys.argv[1]) as f:
        lines = [ln.rstrip("\n").split("\t") for ln in f if ln.strip()]
    for ln in lines:
        if len(ln) != 9:
            raise Bad(f"{sys.argv[1]}: a line has {len(ln)} fields, not 9")
        preset, policy, group, progs, kinds, cj, co, pj, nj = ln
        progs, kinds = progs.split(","), kinds.split(",")
        corun, pred, nopr = load(cj), load(pj), load(nj)
        lines_llc = need(need(need(corun, "config", cj), "llc", cj), "lines", cj)
        ws = overlap_windows(corun, cj)
        pp, nn = need(pred, "programs", pj), need(nopr, "programs", nj)
        if len(ws) != len(progs) or len(pp) != len(progs) or len(nn) != len(progs):
            raise Bad(f"{pj}: {len(pp)} programs, the co-run {len(ws)}, the plan {len(progs)}")
        try:
            with open(co) as f:
                m = re.search(r"co-run accesses in ([0-9.eE+-]+) s(?: \(([0-9.eE+-]+) s CPU\))?",
                              f.read())
        except OSError as e:
            raise Bad(f"{co}: {e}")
        if not m:
            raise Bad(f"{co}: no 'co-run accesses in X s' line")
        sim_s += float(m.group(1))
        pred_s += need(pred, "prediction_ms", pj) / 1e3
        if m.group(2) is not None and "prediction_cpu_ms" in pred:
            sim_cpu += float(m.group(2))
            pred_cpu += need(pred, "prediction_cpu_ms", pj) / 1e3
        else:
            have_cpu = False
        win = need(need(corun, "timing", cj), "window_instructions", cj)
        for i, name in enumerate(progs):
            sim = sim_figures(ws[i], cj)
            row = {"preset": preset, "policy": policy, "kind": kinds[i], "group": group,
                   "name": name, "n": len(progs), "sim": sim}
            per = max(1, round(window_instr(need(pp[i], "file", pj)) / win))
            for mdl, doc, part in (("model", pp, "model"), ("foa", pp, "foa"), ("sdc", pp, "sdc"),
                                   ("noprobe", nn, "model")):
                pr = pred_figures(doc[i], part, pj if mdl != "noprobe" else nj)
                if mdl in ("model", "noprobe"):
                    d = pred if mdl == "model" else nopr
                    tcsv = need(need(d, "timeline", pj), "csv", pj)
                    pr["occ"] = pred_occ_at_ends(tcsv, i, len(ws[i]), per)
                    pr["slowdown"], pr["mr"] = pred_over_instructions(
                        tcsv, i, sum(w["instructions"] for w in ws[i]), need(doc[i], "file", pj))
                row[mdl] = {"slowdown": abs(pr["slowdown"] - sim["slowdown"]) * 100,
                            "mr": abs(pr["mr"] - sim["mr"]),
                            "occ": abs(pr["occ"] - sim["occ"]) / lines_llc * 100,
                            "pred": pr}
            rows.append(row)
        kind = "pair" if len(progs) == 2 else "mix"
        key = (preset, policy, kind)
        if key not in firsts:
            firsts.add(key)
            csvp = need(need(pred, "timeline", pj), "csv", pj)
            errs = []
            for i in range(len(progs)):
                per = max(1, round(window_instr(need(pp[i], "file", pj)) / win))
                errs.append(cdf_error(pred_series(csvp, i), sim_series(ws[i], per)))
            cdf[kind].append((preset, policy, sum(errs) / len(errs), group))
    if not rows:
        raise Bad(f"{sys.argv[1]}: no co-runs")

    def agg(sel):
        out = {}
        for mdl in MODELS:
            v = {m: [r[mdl][m] for r in sel] for m in METRICS}
            out[mdl] = (sum(v["slowdown"]) / len(sel), max(v["slowdown"]),
                        sum(v["mr"]) / len(sel), sum(v["occ"]) / len(sel))
        return out

    presets = sorted({r["preset"] for r in rows})
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    print(f"# {len(rows)} program runs in {len(lines)} co-runs; errors: slowdown % of solo time "
          "(mean, max), miss ratio per reference (mean), occupancy % of LLC (mean)")
    print(f"{'policy':7} {'preset':7} {'kind':9} {'n':>4}  " +
          "  ".join(f"{m:>28}" for m in MODELS))
    print(f"{'':7} {'':7} {'':9} {'':>4}  " + "  ".join(f"{'sd':>6} {'sdmax':>6} {'mr':>7} {'occ':>5}"
                                                        for _ in MODELS))

    def line(pol, pre, kind, sel):
        if not sel:
            return
        a = agg(sel)
        print(f"{pol:7} {pre:7} {kind:9} {len(sel):4}  " + "  ".join(
            f"{a[m][0]:6.2f} {a[m][1]:6.2f} {a[m][2]:7.4f} {a[m][3]:5.2f}" for m in MODELS))

    for pol in policies + ["all"]:
        for pre in presets + ["all"]:
            for kind in ("synthetic", "real", "all"):
                line(pol, pre, kind, [r for r in rows if pol in ("all", r["policy"]) and
                                      pre in ("all", r["preset"]) and kind in ("all", r["kind"])])
    print("# model errors per program (over its pairs and mixes): slowdown mean/max %, miss ratio, occupancy %")
    names = list(dict.fromkeys(r["name"] for r in rows))
    for pol in policies:
        for pre in presets:
            cells = []
            for nm in names:
                sel = [r for r in rows if r["policy"] == pol and r["preset"] == pre and r["name"] == nm]
                if sel:
                    a = agg(sel)["model"]
                    cells.append(f"{nm} {a[0]:.2f}/{a[1]:.2f} {a[2]:.4f} {a[3]:.1f}")
            print(f"#   {pol} {pre}: " + "; ".join(cells))
    print("# worst model slowdown errors (policy preset group program: predicted vs simulated)")
    for r in sorted(rows, key=lambda r: -r["model"]["slowdown"])[:10]:
        print(f"#   {r['policy']} {r['preset']} {r['group']} {r['name']}: "
              f"{r['model']['pred']['slowdown']:.4f} vs {r['sim']['slowdown']:.4f} "
              f"(mr {r['model']['pred']['mr']:.4f} vs {r['sim']['mr']:.4f})")
    print("# CDF error of predicted vs simulated per-window miss ratio, first pair / first mix")
    for kind in ("pair", "mix"):
        for pre, pol, e, g in cdf[kind]:
            print(f"#   {kind} {g} {pre} {pol}: {e:.5f}")

    def mean(v):
        v = [x for x in v if not math.isnan(x)]
        return sum(v) / len(v) if v else math.nan

    def headlines(sel, suffix):
        a = agg(sel)
        for mdl in MODELS:
            p = PREFIX[mdl]
            print(f"{p}_slowdown_mae_pct{suffix}: {a[mdl][0]:.3f} %")
            print(f"{p}_slowdown_max_pct{suffix}: {a[mdl][1]:.3f} %")
            print(f"{p}_mr_mae{suffix}: {a[mdl][2]:.5f} misses/ref")
            print(f"{p}_occ_mae_pct_llc{suffix}: {a[mdl][3]:.3f} %")

    for pol in policies:
        headlines([r for r in rows if r["policy"] == pol], "_" + pol)
        for kind in (k for k in ("pair", "mix") if cdf[k]):
            print(f"predict_cdf_error_{kind}_{pol}: "
                  f"{mean([e for _, p, e, _ in cdf[kind] if p == pol]):.5f} misses/ref")
    headlines(rows, "")
    print(f"predict_cdf_error: {mean([e for k in cdf for _, _, e, _ in cdf[k]]):.5f} misses/ref")
    print(f"predict_corun_sim_s: {sim_s:.3f} s")
    print(f"predict_model_s: {pred_s:.6f} s")
    wall_x = sim_s / pred_s if pred_s > 0 else math.nan
    print(f"predict_speedup_wall_x: {wall_x:.0f} x")
    if have_cpu:
        print(f"predict_corun_sim_cpu_s: {sim_cpu:.3f} s")
        print(f"predict_model_cpu_s: {pred_cpu:.6f} s")
    print("predict_speedup_x: %.0f x%s" % (sim_cpu / pred_cpu if have_cpu and pred_cpu > 0 else wall_x,
                                           "" if have_cpu else " (wall time: a file has no CPU time)"))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Bad as e:
        print(f"predict-compare.py: {e}", file=sys.stderr)
        sys.exit(1)
