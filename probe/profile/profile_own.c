/* A profile's reuse distances in each phase's own references
 * (docs/METHODS.md §12.7): a sampler counts every reference of the
 * program, so a reuse that spans other phases' windows is longer in its
 * histogram than in the references of its phase, which is what the
 * phase's model runs on. */
#include "llcprobe/profile.h"

#include <errno.h>
#include <stdlib.h>

#include "llcprobe/common.h"

int llc_profile_own_distances(struct llc_profile *p, const struct llc_statmodel_reuse *r, size_t n,
                              struct llc_statmodel_hist **(*pick)(void *ctx, struct llc_profile *p,
                                                                  size_t phase, int group),
                              void *ctx, char *err, size_t errlen)
{
    struct llc_statmodel_own_clock *clock = NULL;
    int rc = llc_statmodel_own_clock_create(p->windows.references, p->windows.phase_of,
                                            p->windows.count, &clock, err, errlen);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const int id = llc_statmodel_own_clock_label(clock, r[k].pos);
        const long j = id < 0 ? -1 : llc_profile_phase_index(p, id);
        struct llc_statmodel_hist **h = j < 0 ? NULL : pick(ctx, p, (size_t)j, r[k].group);
        if (!h)
            continue;
        if (!*h && (rc = llc_statmodel_hist_create(h, err, errlen)) < 0)
            break;
        rc = llc_statmodel_hist_add(*h, llc_statmodel_own_distance(clock, r[k].pos, r[k].distance),
                                    1.0, err, errlen);
    }
    llc_statmodel_own_clock_destroy(clock);
    return rc;
}

/* own gets h's dangling samples; unless its finite ones are h's, it is
 * dropped (its samples were not all logged: the phase is modelled with
 * what it recorded). */
static int complete(struct llc_statmodel_hist **own, const struct llc_statmodel_hist *h, char *err,
                    size_t errlen)
{
    if (!*own)
        return 0;
    const double want = llc_statmodel_hist_finite(h), got = llc_statmodel_hist_finite(*own);
    if (got != want) {
        llc_statmodel_hist_destroy(*own);
        *own = NULL;
        return 0;
    }
    /* called again after the strata are filed: adds what is missing */
    const double add = llc_statmodel_hist_dangling(h) - llc_statmodel_hist_dangling(*own);
    return add > 0 ? llc_statmodel_hist_add_dangling(*own, add, err, errlen) : 0;
}

int llc_profile_own_complete(struct llc_profile *p, char *err, size_t errlen)
{
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < p->n_phases; j++) {
        struct llc_profile_phase *ph = &p->phases[j];
        rc = complete(&ph->rdhist_own, ph->rdhist, err, errlen);
        for (size_t s = 0; rc == 0 && s < ph->n_strata; s++)
            rc = complete(&ph->strata[s].rdhist_own, ph->strata[s].rdhist, err, errlen);
    }
    return rc;
}
