#!/usr/bin/env python3
"""Overhead of live `llcprobe phase` on a program, measured so that a loaded,
shared machine does not decide the answer.

  run NAME DIR REPS "PHASE OPTS" -- CMD...
      REPS pairs of runs of CMD: plain and under `llcprobe phase OPTS`, the
      order alternating (ABBA: plain first in even pairs, live first in odd
      ones, so a linear drift in the machine's load cancels), after one
      discarded warm-up pair. Per run: the target's CPU time (user + sys of
      its process tree: wait4's rusage of the plain child; under phase,
      llcprobe's rusage of its waited-for children, which is the target
      only) and its wall time, llcprobe's own CPU time and the timer
      expiries the sampler caused. Writes DIR/NAME.overhead.json. With
      LLCPROBE_OLD set (another llcprobe, e.g. main's), each round is a
      triple plain / live / old in rotating order, and the summary also
      gives the old binary's overhead and new against old. LLCPROBE_OLD_OPTS:
      options added to the old runs only (so the same binary can be compared
      with itself under another setting, e.g. --source cpu-clock).
  detour DIR REPS SECONDS DETOUR_BIN
      The direct cost, seen from inside the target: REPS rounds of
      DETOUR_BIN (a loop that reads the clock and records every gap between
      two reads: interrupts, VM exits, context switches) run for SECONDS
      plain, under `llcprobe phase` (default source) and under `llcprobe
      phase --source cpu-clock`, in rotating order. Per run: the time lost
      to detours shorter than 1 ms per second of the target's CPU (longer
      ones are the host or another task, not a sampler). Prints per kind the
      median loss, the paired differences against plain with 95% bootstrap
      intervals, and the cost per sample (difference / samples). Writes
      DIR/detour.json.
  summary DIR CALIB NAME...
      Per program: medians, and the overhead as the median of the paired
      ratios live/plain - 1 with a 95% bootstrap interval (percentile,
      4000 resamples of the pairs, seeded); for CPU and for wall time. The
      cost of one sample from the calibration run CALIB (a CPU-bound loop
      sampled at a high fixed rate, so the signal is far above the noise):
      c = median over pairs of (live - plain CPU) / expiries; CALIB "detour":
      from DIR/detour.json instead (the detour meter's cost per sample of
      the default source, for the tick, whose rate cannot be raised). Cost model:
      est% = c x the program's median expiries / its median plain CPU time.
      Prints a table, then `phase_overhead_wall_pct`, `phase_overhead_model_pct`,
      the 95% intervals, and last `phase_overhead_pct`: the mean over the
      programs of the per-program CPU-time figures (its interval resamples
      each program's pairs independently).

Timer expiries: with cpu-clock, one per period of target CPU time (each
sample is a timer interrupt of its own, including the ones that hit kernel
mode and were dropped); with the tick source, the samples taken (the tick
interrupts the target anyway; a sample adds perf's handler to it).

Why CPU time: each cpu-clock sample is a timer interrupt plus perf's sample
handling, run in the interrupted target's context and, without
CONFIG_IRQ_TIME_ACCOUNTING, charged to its CPU time; other tenants of the
guest (builds, evaluations) change the target's wall time by queueing it,
not its CPU time. CPU time still carries the host's noise (this guest sees
no steal time, so a descheduled vCPU's time is charged to whoever ran) and
cache interference, hence the pairing and the intervals.
"""
import itertools
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import time


def cpu_of(ru):
    return ru.ru_utime + ru.ru_stime


def switches(ru):
    # context switches (voluntary, involuntary) of the waited-for tree: under
    # phase that is llcprobe's too, a few per window
    return {"nvcsw": ru.ru_nvcsw, "nivcsw": ru.ru_nivcsw}


def run_plain(cmd, cwd):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped: keep Popen from waiting
    return {"cpu": cpu_of(ru), "user": ru.ru_utime, "sys": ru.ru_stime, "wall": wall,
            "status": p.returncode, **switches(ru)}


def expiries_of(d):
    if d["sampling"]["source"] == "tick":
        return sum(w["kernel_samples"] for w in d["windows"])
    # one per period of target CPU time, including the ones that hit kernel
    # mode and were dropped as samples
    return sum(w["cpu_ns"] / w["period"] for w in d["windows"])


def run_live(bin_, opts, cmd, cwd, prefix):
    t0 = time.monotonic()
    p = subprocess.Popen([bin_, "phase", "-q", "--no-plot", "-o", prefix] + opts + ["--"] + cmd,
                         cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("phase-overhead: llcprobe phase failed (%d): %s" % (p.returncode, err.decode()))
    d = json.load(open(prefix + ".phase.json"))
    t, m = d["target"], d["monitor"]
    return {
        "cpu": t["cpu_user_s"] + t["cpu_sys_s"], "user": t["cpu_user_s"], "sys": t["cpu_sys_s"],
        **switches(ru),
        # the target's own wall time (launch to exit), and llcprobe's whole run
        "wall": t["runtime_s"], "wall_total": wall,
        "monitor_cpu": m["cpu_user_s"] + m["cpu_sys_s"],
        "expiries": expiries_of(d), "source": d["sampling"]["source"],
        "samples": sum(w["kernel_samples"] for w in d["windows"]),
        "windows": d["summary"]["windows"], "phases": d["summary"]["phases"],
        "mean_rate": d["summary"]["mean_rate"], "status": t["exit_code"],
    }


def cmd_run(argv):
    bin_ = os.environ.get("LLCPROBE") or sys.exit("phase-overhead: set LLCPROBE")
    name, out, reps, opts = argv[0], argv[1], int(argv[2]), shlex.split(argv[3])
    assert argv[4] == "--"
    cmd = argv[5:]
    cwd = os.environ.get("RUN_DIR", out)
    prefix = os.path.join(os.path.abspath(out), name + ".live")
    # LLCPROBE_OLD: a second binary (say, main's) run in the same rounds, so
    # old and new are compared under the same load: triples, the order
    # rotating through all six permutations.
    old = os.environ.get("LLCPROBE_OLD") or None
    kinds = ("plain", "live", "old") if old else ("plain", "live")
    orders = list(itertools.permutations(kinds)) if old else [kinds, kinds[::-1]]
    binary = {"live": bin_, "old": old}
    kind_opts = {"live": opts, "old": opts + shlex.split(os.environ.get("LLCPROBE_OLD_OPTS", ""))}
    pairs = []
    for i in range(reps + 1):
        order = orders[i % len(orders)]
        pair = {}
        for kind in order:
            pair[kind] = (run_plain(cmd, cwd) if kind == "plain"
                          else run_live(binary[kind], kind_opts[kind], cmd, cwd, prefix))
        pair["first"] = order[0]
        if i > 0:  # pair 0 warms the page cache and the binaries
            pairs.append(pair)
    tmp = os.path.join(out, name + ".overhead.json.tmp")
    with open(tmp, "w") as f:
        json.dump({"name": name, "command": cmd, "phase_options": opts, "pairs": pairs}, f,
                  indent=1)
    os.replace(tmp, os.path.join(out, name + ".overhead.json"))


def run_detour(bin_, opts, det, seconds, prefix):
    """One detour run, plain (opts None) or under phase with opts; its JSON
    line, and for a live run the source and the samples it took."""
    cmd = [det, str(seconds)]
    if opts is not None:
        cmd = [bin_, "phase", "-q", "--no-plot", "-o", prefix] + opts + ["--"] + cmd
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("phase-overhead: %s failed (%d): %s" % (cmd[0], p.returncode, p.stderr))
    line = [x for x in p.stdout.splitlines() if x.startswith('{"wall_s"')]
    if not line:
        sys.exit("phase-overhead: no detour line from %s" % " ".join(cmd))
    r = json.loads(line[0])
    if opts is not None:
        d = json.load(open(prefix + ".phase.json"))
        r["source"] = d["sampling"]["source"]
        r["samples"] = sum(w["kernel_samples"] for w in d["windows"])
        r["expiries"] = expiries_of(d)
    return r


def detour_loss(run):
    """Fraction of a run's CPU time spent in detours under 1 ms."""
    return run["detour_ns"] * 1e-9 / run["cpu_s"]


def detour_cost(rounds, kind, rng):
    """Seconds of extra detour time per sample of `kind` against plain in the
    same round: median [95% bootstrap]."""
    return median_ci([(detour_loss(r[kind]) - detour_loss(r["plain"])) * r[kind]["cpu_s"] /
                      max(r[kind]["samples"], 1) for r in rounds], rng)


def cmd_detour(argv):
    bin_ = os.environ.get("LLCPROBE") or sys.exit("phase-overhead: set LLCPROBE")
    out, reps, seconds, det = argv[0], int(argv[1]), float(argv[2]), argv[3]
    prefix = os.path.join(os.path.abspath(out), "detour.live")
    opts = {"plain": None, "live": [], "cpu-clock": ["--source", "cpu-clock"]}
    orders = list(itertools.permutations(opts))
    rounds = []
    for i in range(reps + 1):
        r = {k: run_detour(bin_, opts[k], det, seconds, prefix) for k in orders[i % len(orders)]}
        if i > 0:
            rounds.append(r)
    with open(os.path.join(out, "detour.json"), "w") as f:
        json.dump({"seconds": seconds, "rounds": rounds}, f, indent=1)
    rng = random.Random(1)
    print("detour meter: %s s per run, %d rounds (plain, live, cpu-clock in rotating order); loss"
          " = time in detours < 1 ms per CPU second; median [95%% bootstrap]" % (seconds, reps))
    print("%-10s %8s %10s %12s %12s %24s %22s" % ("kind", "source", "loss %", "detours/s",
                                                  "median us", "loss - plain, % [95%]",
                                                  "per sample us [95%]"))
    extra = {}
    for k in opts:
        runs = [r[k] for r in rounds]
        m = lambda f: statistics.median(f(x) for x in runs)
        row = "%-10s %8s %10.3f %12.0f %12.1f" % (
            k, runs[0].get("source", "-"), 100 * m(detour_loss),
            m(lambda x: x["detours"] / x["cpu_s"]), m(lambda x: x["detour_median_ns"]) / 1e3)
        if k != "plain":
            extra[k] = median_ci([detour_loss(r[k]) - detour_loss(r["plain"]) for r in rounds],
                                 rng)
            row += " %8.3f [%6.3f, %6.3f] %7.2f [%5.2f, %5.2f]" % (
                *(100 * x for x in extra[k]), *(1e6 * x for x in detour_cost(rounds, k, rng)))
        print(row)
    for k, dl in extra.items():
        print("phase_detour_%s_pct: %.3f %%" % (rounds[0][k]["source"].replace("-", "_"),
                                                100 * dl[0]))


def median_ci(xs, rng, stat=statistics.median, b=4000):
    """stat(xs) and its 95% percentile-bootstrap interval."""
    boots = sorted(stat(rng.choices(xs, k=len(xs))) for _ in range(b))
    return stat(xs), boots[int(0.025 * b)], boots[int(0.975 * b) - 1]


def load(out, name):
    return json.load(open(os.path.join(out, name + ".overhead.json")))["pairs"]


def ratios(pairs, key, kind="live", base="plain"):
    return [p[kind][key] / p[base][key] - 1 for p in pairs]


def sample_cost(pairs, rng):
    """Cost of one timer expiry in the target's CPU time, from amplified
    pairs: median over pairs of (live - plain) / expiries, 95% interval."""
    return median_ci([(p["live"]["cpu"] - p["plain"]["cpu"]) / p["live"]["expiries"]
                      for p in pairs], rng)


def cmd_summary(argv):
    out, calib, names = argv[0], argv[1], argv[2:]
    rng = random.Random(1)
    if calib == "detour":
        rounds = json.load(open(os.path.join(out, "detour.json")))["rounds"]
        c, clo, chi = detour_cost(rounds, "live", rng)
        print("sample cost: %.1f us [%.1f, %.1f] (detour meter, %s source, %d rounds: extra time "
              "in detours per sample; median [95%% bootstrap])" % (
                  c * 1e6, clo * 1e6, chi * 1e6, rounds[0]["live"]["source"], len(rounds)))
    else:
        cp = load(out, calib)
        c, clo, chi = sample_cost(cp, rng)
        print("sample cost: %.1f us [%.1f, %.1f] (CPU-bound loop %.2f s plain, %.2f s with %d "
              "timer expiries, %s; median of %d pairs [95%% bootstrap])" % (
                  c * 1e6, clo * 1e6, chi * 1e6, statistics.median(p["plain"]["cpu"] for p in cp),
                  statistics.median(p["live"]["cpu"] for p in cp),
                  statistics.median(p["live"]["expiries"] for p in cp),
                  " ".join(json.load(open(os.path.join(out, calib + ".overhead.json")))
                           ["phase_options"]), len(cp)))
    print("%-8s %5s %8s %8s %22s %8s %8s %22s %6s %6s %6s %5s %s" % (
        "program", "pairs", "cpu", "cpu_live", "cpu%  [95% CI]", "wall", "wall_liv",
        "wall%  [95% CI]", "est%", "mon%", "Hz", "rate", "windows"))
    rows = []
    for name in names:
        pairs = load(out, name)
        med = lambda kind, key: statistics.median(p[kind][key] for p in pairs)
        cpu = median_ci(ratios(pairs, "cpu"), rng)
        wall = median_ci(ratios(pairs, "wall"), rng)
        exp = med("live", "expiries")
        est = c * exp / med("plain", "cpu")
        mon = med("live", "monitor_cpu") / med("plain", "cpu")
        hz = exp / med("live", "cpu")
        rows.append((name, pairs, cpu, wall, est, exp))
        print("%-8s %5d %8.3f %8.3f %7.2f [%5.2f, %5.2f] %8.3f %8.3f %7.2f [%5.2f, %5.2f] %6.2f "
              "%6.2f %6.0f %5.2f %d" % (
                  name, len(pairs), med("plain", "cpu"), med("live", "cpu"), 100 * cpu[0],
                  100 * cpu[1], 100 * cpu[2], med("plain", "wall"), med("live", "wall"),
                  100 * wall[0], 100 * wall[1], 100 * wall[2], 100 * est, 100 * mon, hz,
                  med("live", "mean_rate"), med("live", "windows")))
    # The model's check on the programs themselves: NAME.cal.overhead.json
    # (the program sampled at the calibration's rate), so a cost that depends
    # on the program (what an interrupt evicts) shows.
    for name, pairs, cpu, _, est, exp in rows:
        if not os.path.exists(os.path.join(out, name + ".cal.overhead.json")):
            continue
        cal = load(out, name + ".cal")
        cn = sample_cost(cal, rng)
        plain = statistics.median(p["plain"]["cpu"] for p in pairs)
        print("%-8s own sample cost %.1f us [%.1f, %.1f] (%d pairs, %d expiries): est%% %.2f "
              "[%.2f, %.2f] (measured %.2f)" % (
                  name, cn[0] * 1e6, cn[1] * 1e6, cn[2] * 1e6, len(cal),
                  statistics.median(p["live"]["expiries"] for p in cal),
                  *(100 * x * exp / plain for x in cn), 100 * cpu[0]))
    # The control: live at 1 sample/s, so what remains is not the samples.
    for name, *_ in rows:
        if os.path.exists(os.path.join(out, name + ".ctl.overhead.json")):
            ctl = load(out, name + ".ctl")
            print("%-8s control (1 sample/s): cpu%% %.2f [%.2f, %.2f], wall%% %.2f [%.2f, %.2f] "
                  "(%d pairs)" % (name, *(100 * x for x in median_ci(ratios(ctl, "cpu"), rng)),
                                  *(100 * x for x in median_ci(ratios(ctl, "wall"), rng)),
                                  len(ctl)))
    # Old binary (LLCPROBE_OLD) in the same rounds: its overhead, and new
    # against old directly (paired ratio live/old - 1).
    has_old = [x for x in rows if "old" in x[1][0]]
    for name, pairs, *_ in has_old:
        print("%-8s old binary: cpu%% %.2f [%.2f, %.2f]; new/old - 1: cpu%% %.2f [%.2f, %.2f]; old "
              "rate %.2f, %.0f Hz (%d triples)" % (
                  name, *(100 * x for x in median_ci(ratios(pairs, "cpu", "old"), rng)),
                  *(100 * x for x in median_ci(ratios(pairs, "cpu", "live", "old"), rng)),
                  statistics.median(p["old"]["mean_rate"] for p in pairs),
                  statistics.median(p["old"]["expiries"] / p["old"]["cpu"] for p in pairs),
                  len(pairs)))
    # Where the extra CPU time goes: paired differences, medians.
    print("%-8s %9s %9s %9s %9s %9s" % ("program", "d_user_ms", "d_sys_ms", "d_csw", "expiries",
                                         "model_ms"))
    for name, pairs, _, _, _, exp in rows:
        if "user" not in pairs[-1]["plain"]:
            continue
        pairs = [p for p in pairs if "user" in p["plain"]]
        d = lambda f: statistics.median(f(p["live"]) - f(p["plain"]) for p in pairs)
        print("%-8s %9.1f %9.1f %9.0f %9.0f %9.1f" % (
            name, 1e3 * d(lambda r: r["user"]), 1e3 * d(lambda r: r["sys"]),
            d(lambda r: r["nvcsw"] + r["nivcsw"]), exp, 1e3 * c * exp))
    # The headline's interval: resample each program's pairs independently.
    def mean_ci(key, kind="live", rows=rows):
        r = [ratios(x[1], key, kind) for x in rows]
        boots = sorted(statistics.fmean(statistics.median(rng.choices(v, k=len(v))) for v in r)
                       for _ in range(4000))
        return statistics.fmean(statistics.median(v) for v in r), boots[100], boots[3899]
    wall, cpu = mean_ci("wall"), mean_ci("cpu")
    print("overhead: median of paired ratios live/plain - 1 per program, mean over programs, "
          "[95% bootstrap]; est%: sample cost x timer expiries / plain CPU")
    model = statistics.fmean(x[4] for x in rows)
    print("phase_overhead_wall_pct: %.2f %%" % (100 * wall[0]))
    print("phase_overhead_model_pct: %.2f %%" % (100 * model))
    print("95%% intervals (bootstrap): cpu [%.2f, %.2f] %%, wall [%.2f, %.2f] %%, model "
          "[%.2f, %.2f] %% (from the sample cost's)" % (
              100 * cpu[1], 100 * cpu[2], 100 * wall[1], 100 * wall[2], 100 * model * clo / c,
              100 * model * chi / c))
    if has_old and len(has_old) == len(rows):
        o = mean_ci("cpu", "old")
        print("phase_overhead_old_pct: %.2f %% [%.2f, %.2f] (LLCPROBE_OLD, same rounds)" % (
            100 * o[0], 100 * o[1], 100 * o[2]))
    print("phase_overhead_pct: %.2f %%" % (100 * cpu[0]))

if __name__ == "__main__":
    cmds = {"run": cmd_run, "summary": cmd_summary, "detour": cmd_detour}
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0)
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cmds[sys.argv[1]](sys.argv[2:])
