/* Group-testing reduction (Vila, Koepf, Morales, S&P 2019): a candidate set
 * that evicts the victim holds at least G congruent lines; split it into G+1
 * groups, and by pigeonhole one group holds none of some G of them, so the
 * set without it still evicts. Each step removes a 1/(G+1) share, so
 * O(G^2 log n) tests reach G lines. A noisy "still evicts" can remove a
 * needed line; then no group is removable, and we put back the most
 * recently removed group and try again (backtracking). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evset/evset_internal.h"
#include "llcprobe/common.h"

struct removed_stack {
    uint32_t *ids; /* removed lines, groups back to back */
    size_t *ends;  /* end offset of each removed group in ids */
    size_t depth, used;
};

int llc_evset_reduce(struct llc_evset_finder *f, uint32_t victim, const uint32_t *cands, size_t n,
                     uint32_t *out, char *err, size_t errlen)
{
    const size_t g = f->reduce_size;
    if (n < g)
        return llc_errf(err, errlen, -ESRCH, "%zu candidates cannot hold %zu congruent lines", n,
                        g);
    uint32_t *cur = malloc(n * sizeof(*cur));
    uint32_t *tmp = malloc(n * sizeof(*tmp));
    struct removed_stack st = {malloc(n * sizeof(uint32_t)), malloc((n + 1) * sizeof(size_t)), 0,
                               0};
    int rc = 0;
    if (!cur || !tmp || !st.ids || !st.ends) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for %zu candidates", n);
        goto out;
    }
    memcpy(cur, cands, n * sizeof(*cur));
    evset_shuffle(&f->rng, cur, n);
    size_t ncur = n;
    rc = llc_evset_evicts(f, victim, cur, ncur, err, errlen);
    if (rc <= 0) {
        if (rc == 0)
            rc = llc_errf(err, errlen, -ESRCH, "the %zu candidates do not evict the victim", n);
        goto out;
    }
    unsigned backtracks = 0;
    while (ncur > g) {
        bool removed = false;
        for (size_t j = 0; j <= g && !removed; j++) {
            const size_t lo = j * ncur / (g + 1), hi = (j + 1) * ncur / (g + 1);
            if (lo == hi)
                continue;
            memcpy(tmp, cur, lo * sizeof(*tmp));
            memcpy(tmp + lo, cur + hi, (ncur - hi) * sizeof(*tmp));
            rc = llc_evset_evicts(f, victim, tmp, ncur - (hi - lo), err, errlen);
            if (rc < 0)
                goto out;
            if (rc) {
                memcpy(st.ids + st.used, cur + lo, (hi - lo) * sizeof(*cur));
                st.used += hi - lo;
                st.ends[st.depth++] = st.used;
                memcpy(cur, tmp, (ncur - (hi - lo)) * sizeof(*cur));
                ncur -= hi - lo;
                removed = true;
            }
        }
        if (removed)
            continue;
        if (!st.depth || backtracks >= f->p.max_backtracks) {
            rc = llc_errf(err, errlen, -ESRCH, "reduction stuck at %zu lines after %u backtracks",
                          ncur, backtracks);
            goto out;
        }
        const size_t start = st.depth > 1 ? st.ends[st.depth - 2] : 0;
        const size_t len = st.used - start;
        memcpy(cur + ncur, st.ids + start, len * sizeof(*cur));
        ncur += len;
        st.used = start;
        st.depth--;
        backtracks++;
        f->counters.backtracks++;
        evset_shuffle(&f->rng, cur, ncur); /* split differently this time */
    }
    memcpy(out, cur, g * sizeof(*out));
    rc = 0;
out:
    free(cur);
    free(tmp);
    free(st.ids);
    free(st.ends);
    return rc;
}
