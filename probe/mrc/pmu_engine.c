/* Reuse bookkeeping of the PMU sampler (docs/METHODS.md §6.3), independent of where
 * the events come from. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "llcprobe/rng.h"
#include "mrc/pmu.h"

struct watch {
    bool busy;
    uint64_t line;
    uint64_t c_s;
};

uint64_t llc_pmu_gap(double rate, double u)
{
    if (rate >= 1)
        return 1;
    const double g = 1 + floor(log(u) / log1p(-rate));
    /* Beyond 2^62 references the program would not end anyway. */
    return g < 0x1p62 ? (uint64_t)g : UINT64_C(1) << 62;
}

/* Uniform on (0, 1] from SplitMix64: the engine needs only a seeded stream. */
static double next_u(uint64_t *state)
{
    return llc_rng_unit_open0(llc_splitmix_next(state));
}

static int record(struct llc_statmodel_hist *h, uint64_t c_r, uint64_t c_s, char *err,
                  size_t errlen)
{
    if (c_r < c_s)
        return llc_errf(err, errlen, -EPROTO,
                        "pmu sampler: reference counter went backwards (%llu after %llu)",
                        (unsigned long long)c_r, (unsigned long long)c_s);
    return llc_statmodel_hist_add(h, c_r - c_s, 1, err, errlen);
}

int llc_pmu_engine_run(const struct llc_pmu_source *src, double rate, uint64_t seed,
                       struct llc_statmodel_hist *h, struct llc_mrc_pmu_stats *stats, char *err,
                       size_t errlen)
{
    *stats = (struct llc_mrc_pmu_stats){0};
    if (!(rate > 0 && rate <= 1))
        return llc_errf(err, errlen, -EINVAL, "pmu sampler: rate %g is not in (0, 1]", rate);
    if (src->n_slots == 0)
        return llc_errf(err, errlen, -EINVAL, "pmu sampler: the event source has no watchpoints");
    struct watch *w = calloc(src->n_slots, sizeof *w);
    if (!w)
        return llc_errf(err, errlen, -ENOMEM, "pmu sampler: out of memory");
    uint64_t rng = seed;
    int rc = 0;
    for (unsigned k = 0; rc == 0 && k < (src->n_streams ? src->n_streams : 1); k++)
        rc = src->set_gap(src->ctx, llc_pmu_gap(rate, next_u(&rng)), err, errlen);
    struct llc_pmu_ev ev;
    while (rc == 0 && (rc = src->next(src->ctx, &ev, err, errlen)) > 0) {
        rc = 0;
        stats->refs = ev.count;
        if (ev.kind == LLC_PMU_EV_WATCH) {
            if (ev.slot >= src->n_slots || !w[ev.slot].busy)
                continue; /* a watchpoint that fired once more while being removed */
            /* The watched access was also the sample that re-armed the watch
             * (both events fire on one instruction, in either order). */
            if (ev.count + 1 == w[ev.slot].c_s)
                continue;
            rc = record(h, ev.count, w[ev.slot].c_s, err, errlen);
            if (rc == 0)
                rc = src->disarm(src->ctx, ev.slot, err, errlen);
            w[ev.slot].busy = false;
            continue;
        }
        stats->samples++;
        const uint64_t line = ev.addr >> 6;
        unsigned slot = src->n_slots, free_slot = src->n_slots;
        for (unsigned k = 0; k < src->n_slots; k++) {
            if (w[k].busy && w[k].line == line)
                slot = k;
            else if (!w[k].busy && free_slot == src->n_slots)
                free_slot = k;
        }
        if (slot < src->n_slots) {
            /* The sampled reference reuses a watched line: its count includes it. */
            if (ev.count == 0) {
                rc = llc_errf(err, errlen, -EPROTO, "pmu sampler: a sample with count 0");
                break;
            }
            rc = record(h, ev.count - 1, w[slot].c_s, err, errlen);
            w[slot].c_s = ev.count; /* the same line, watched from here on */
        } else if (free_slot < src->n_slots) {
            rc = src->arm(src->ctx, free_slot, ev.addr, err, errlen);
            w[free_slot] = (struct watch){.busy = true, .line = line, .c_s = ev.count};
        } else {
            stats->dropped++;
        }
        if (rc == 0)
            rc = src->set_gap(src->ctx, llc_pmu_gap(rate, next_u(&rng)), err, errlen);
    }
    for (unsigned k = 0; rc == 0 && k < src->n_slots; k++)
        if (w[k].busy)
            rc = llc_statmodel_hist_add_dangling(h, 1, err, errlen);
    free(w);
    return rc < 0 ? rc : 0;
}
