/* What every oracle shares: its lifecycle and the LLC-hit / memory threshold
 * chosen from two latency samples. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "llcprobe/evset.h"

void llc_evset_oracle_destroy(struct llc_evset_oracle *o)
{
    if (!o)
        return;
    if (o->ops && o->ops->destroy)
        o->ops->destroy(o->ctx);
    free(o);
}

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint32_t quantile(const uint32_t *sorted, size_t n, double q)
{
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return sorted[i < n ? i : n - 1];
}

int llc_evset_calibrate(uint32_t *hit, size_t n_hit, uint32_t *miss, size_t n_miss,
                        struct llc_evset_calibration *out, char *err, size_t errlen)
{
    if (!n_hit || !n_miss)
        return llc_errf(err, errlen, -EINVAL,
                        "calibration needs both LLC-hit and memory samples "
                        "(got %zu and %zu)",
                        n_hit, n_miss);
    qsort(hit, n_hit, sizeof(*hit), cmp_u32);
    qsort(miss, n_miss, sizeof(*miss), cmp_u32);

    /* errors(t) = hits above t + misses at or below t changes only at sample
     * values; walk the distinct values in order and keep the first range of
     * thresholds with the fewest errors, then take its middle (the gap). */
    size_t best_err = n_hit; /* t below every sample: every hit looks like a miss */
    const uint32_t first = hit[0] < miss[0] ? hit[0] : miss[0];
    uint32_t best_lo = first ? first - 1 : 0, best_hi = best_lo;
    bool extending = true;
    size_t i = 0, j = 0;
    while (i < n_hit || j < n_miss) {
        const uint32_t v = (j >= n_miss || (i < n_hit && hit[i] <= miss[j])) ? hit[i] : miss[j];
        while (i < n_hit && hit[i] <= v)
            i++;
        while (j < n_miss && miss[j] <= v)
            j++;
        uint32_t range_hi = v;
        if (i < n_hit || j < n_miss) {
            const uint32_t next =
                (j >= n_miss || (i < n_hit && hit[i] <= miss[j])) ? hit[i] : miss[j];
            range_hi = next - 1;
        }
        const size_t e = (n_hit - i) + j;
        if (e < best_err) {
            best_err = e;
            best_lo = v;
            best_hi = range_hi;
            extending = true;
        } else if (e == best_err && extending) {
            best_hi = range_hi;
        } else {
            extending = false;
        }
    }
    out->threshold = best_lo + (best_hi - best_lo) / 2;
    out->hit_median = quantile(hit, n_hit, 0.5);
    out->miss_median = quantile(miss, n_miss, 0.5);
    out->hit_p90 = quantile(hit, n_hit, 0.9);
    out->miss_p10 = quantile(miss, n_miss, 0.1);
    out->error_rate = (double)best_err / (double)(n_hit + n_miss);
    out->separable = out->error_rate <= 0.05 && out->miss_median > 1.5 * out->hit_median;
    out->hits = n_hit;
    out->misses = n_miss;
    return 0;
}
