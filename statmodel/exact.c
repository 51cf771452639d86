/* Exact reuse and LRU stack distances of every reference: ground truth for
 * tests and reference miss-ratio curves. A Fenwick tree over reference
 * positions marks the last access of each line; the stack distance of a
 * reuse is the number of marks strictly between its two accesses. */
#include <errno.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

struct last_seen {
    uint64_t key; /* line + 1; 0 = empty */
    size_t pos;
};

static void fenwick_add(uint32_t *tree, size_t n, size_t i, int32_t delta)
{
    for (size_t k = i + 1; k <= n; k += k & (~k + 1))
        tree[k - 1] += (uint32_t)delta;
}

/* Marks in positions [0, i). */
static uint64_t fenwick_prefix(const uint32_t *tree, size_t i)
{
    uint64_t sum = 0;
    for (size_t k = i; k > 0; k -= k & (~k + 1))
        sum += tree[k - 1];
    return sum;
}

int llc_statmodel_exact_distances(const uint64_t *lines, size_t n, uint64_t *reuse, uint64_t *stack,
                                  char *err, size_t errlen)
{
    if (n > UINT32_MAX)
        return llc_errf(err, errlen, -E2BIG, "exact distances: %zu references is too many", n);
    int rc = 0;
    size_t size = 16;
    unsigned bits = 4;
    while (size < 2 * n) {
        size *= 2;
        bits++;
    }
    struct last_seen *map = calloc(size, sizeof *map);
    uint32_t *tree = stack ? calloc(n ? n : 1, sizeof *tree) : NULL;
    if (!map || (stack && !tree)) {
        rc = llc_errf(err, errlen, -ENOMEM, "exact distances: out of memory for %zu references", n);
        goto out;
    }
    const size_t mask = size - 1;
    for (size_t j = 0; j < n; j++) {
        const uint64_t key = lines[j] + 1;
        size_t s = (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64u - bits));
        while (map[s].key && map[s].key != key)
            s = (s + 1) & mask;
        if (!map[s].key) {
            map[s].key = key;
            if (reuse)
                reuse[j] = LLC_STATMODEL_COLD;
            if (stack)
                stack[j] = LLC_STATMODEL_COLD;
        } else {
            const size_t i = map[s].pos;
            if (reuse)
                reuse[j] = j - i - 1;
            if (stack) {
                stack[j] = fenwick_prefix(tree, j) - fenwick_prefix(tree, i + 1);
                fenwick_add(tree, n, i, -1);
            }
        }
        map[s].pos = j;
        if (stack)
            fenwick_add(tree, n, j, +1);
    }
out:
    free(map);
    free(tree);
    return rc;
}

int llc_statmodel_exact_lru_curve(const uint64_t *stack, size_t n, const double *lines,
                                  size_t n_lines, double *miss_ratio, char *err, size_t errlen)
{
    if (!n)
        return llc_errf(err, errlen, -ENODATA, "exact LRU curve: no references");
    for (size_t k = 0; k < n_lines; k++) {
        if (!(lines[k] >= 1))
            return llc_errf(err, errlen, -EINVAL, "exact LRU curve: cache of %g lines", lines[k]);
        size_t misses = 0;
        for (size_t j = 0; j < n; j++)
            misses += stack[j] == LLC_STATMODEL_COLD || (double)stack[j] >= lines[k];
        miss_ratio[k] = (double)misses / (double)n;
    }
    return 0;
}
