"""Brute force of a study: every co-schedule of the programs from
groups.csv (groups of K, one of N mod K), valued by the metric; prints
best, median and worst values. With --dp (K = 2, additive or max
metrics): the optimum by dynamic programming over subsets instead of
enumeration, for N too large to enumerate."""
import csv, sys

def load(path):
    groups = {}
    for r in csv.DictReader(open(path)):
        g = groups.setdefault(int(r["group"]), [])
        g.append((r["program"], float(r["slowdown"]), float(r["llc_misses"])))
    return [tuple(sorted(g)) for _, g in sorted(groups.items())]

def value(metric, members):
    s = [m[1] for m in members]
    if metric == "throughput": return sum(1 / x for x in s)
    if metric == "worst": return max(s)
    if metric == "fairness": return max(s) / min(s)
    return sum(m[2] for m in members)

def partitions(items, k, rem):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    from itertools import combinations
    for size in ([k] + ([rem] if rem and len(items) % k == rem else [])):
        for others in combinations(rest, size - 1):
            left = [x for x in rest if x not in others]
            for p in partitions(left, k, rem if size != rem else 0):
                yield [(first,) + others] + p

def main():
    path, metric, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    groups = load(path)
    by = {frozenset(m[0] for m in g): g for g in groups}
    names = sorted({m[0] for g in groups for m in g})
    rem = len(names) % k
    hib = metric == "throughput"
    if "--dp" in sys.argv:
        from functools import lru_cache
        idx = {n: i for i, n in enumerate(names)}
        comb = (lambda a, b: a + b) if metric in ("throughput", "misses") else max
        @lru_cache(maxsize=None)
        def f(mask, sign):
            if mask == 0: return None
            i = (mask & -mask).bit_length() - 1
            best = None
            for j in range(i + 1, len(names)):
                if mask >> j & 1:
                    g = by[frozenset((names[i], names[j]))]
                    mem = {m[0]: m for m in g}
                    v = sum(1 / m[1] for m in g) if metric == "throughput" else (max(m[1] for m in g) if metric == "worst" else sum(m[2] for m in g))
                    r = f(mask & ~(1 << i) & ~(1 << j), sign)
                    v = v if r is None else comb(v, r)
                    if best is None or sign * v > sign * best: best = v
            return best
        full = (1 << len(names)) - 1
        sign = 1 if hib else -1
        print(f"best {f(full, sign)!r}")
        print(f"worst {f(full, -sign)!r}")
        return
    vals = []
    for p in partitions(names, k, rem):
        vals.append(value(metric, [m for g in p for m in by[frozenset(g)]]))
    vals.sort(reverse=hib)
    print(f"count {len(vals)}")
    print(f"best {vals[0]!r}")
    print(f"median {vals[len(vals) // 2]!r}")
    print(f"worst {vals[-1]!r}")

main()
