#!/usr/bin/env python3
"""Spearman correlation between a simulated map's per-set probe misses and
the target's true occupancy (both in an llcprobe-map JSON), computed
independently of llcprobe. Prints it; with --min R exits 1 if below R.
Usage: scripts/map-spearman.py MAP.json [--min R]"""
import json
import sys


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1  # ties share their mean rank
        i = j + 1
    return r


def spearman(x, y):
    a, b = ranks(x), ranks(y)
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    cov = sum((p - ma) * (q - mb) for p, q in zip(a, b))
    den = (sum((p - ma) ** 2 for p in a) * sum((q - mb) ** 2 for q in b)) ** 0.5
    return cov / den if den else float("nan")


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and sys.argv[2] != "--min"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    d = json.load(open(sys.argv[1]))
    measured = d["sets"]["measured"]
    m = [x for x, ok in zip(d["sets"]["misses"], measured) if ok]
    t = [x for x, ok in zip(d["truth"]["occupancy"], measured) if ok]
    rho = spearman(m, t)
    print("%.4f" % rho)
    if len(sys.argv) == 4 and not rho >= float(sys.argv[3]):
        sys.exit(1)


if __name__ == "__main__":
    main()
