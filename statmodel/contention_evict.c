/* Evictions per reference of a program's phases (docs/METHODS.md §12.7):
 * what the misses of a phase's other phases, over their references in a
 * reuse's span, do to it under random replacement. */
#include "llcprobe/contention.h"

#include <errno.h>
#include <stdlib.h>

/* An equilibrium's insertions evict only once the cache is full: before,
 * they take free lines (all the lines of a program that fits, and the
 * new data of one that streams slowly into a cache it never fills in the
 * run). Full: its occupancies within 10% of the cache (the skew's per-set
 * equilibria, weighted, add up to 98-99% of a full one; a cache that is
 * not full holds what its programs touch: sqlite3's phases alone 4%). */
static bool full(const struct llc_contention_share *s, size_t n, double capacity)
{
    double occ = 0;
    for (size_t j = 0; j < n; j++)
        occ += s[j].occupancy;
    return occ >= 0.9 * capacity;
}

int llc_contention_evictions_alone(const struct llc_contention_phase *ph, double freq,
                                   const struct llc_contention_config *cfg, double *ev, char *err,
                                   size_t errlen)
{
    const struct llc_contention_phase *one[1] = {ph};
    struct llc_contention_share s, solo;
    struct llc_contention_info info;
    *ev = 0;
    const int rc = llc_contention_tuple(one, &freq, 1, cfg, &s, &solo, &info, err, errlen);
    if (rc == 0 && full(&s, 1, cfg->capacity) && s.rate > 0 && info.mu > 0)
        *ev = info.mu / s.rate;
    return rc;
}

int llc_contention_evictions_in(const struct llc_contention_run *run, size_t i, size_t n_phases,
                                double capacity, double *ev)
{
    double *sum = calloc(2 * (n_phases ? n_phases : 1), sizeof(*sum));
    if (!sum)
        return -ENOMEM;
    /* a cache once full stays full: the lines of phases that stopped
     * running are still in it (a phase that fits, run after one that
     * filled the cache, evicts) */
    bool filled = false;
    for (size_t g = 0; g < run->n_segments; g++) {
        const struct llc_contention_tuple_result *u = &run->tuples[run->segments[g].tuple];
        const double dt = run->segments[g].dt;
        filled = filled || full(u->share, run->n, capacity);
        const int k = u->phase[i];
        if (k < 0 || (size_t)k >= n_phases || !(dt > 0) || !(u->share[i].rate > 0))
            continue;
        sum[2 * k] += dt * u->share[i].rate;
        if (filled)
            sum[2 * k + 1] += dt * u->info.mu;
    }
    for (size_t k = 0; k < n_phases; k++)
        if (sum[2 * k] > 0)
            ev[k] = sum[2 * k + 1] / sum[2 * k];
    free(sum);
    return 0;
}
