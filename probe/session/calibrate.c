/* The calibration on an open session: probe misses per set and the
 * occupancy search's estimate against the number of lines a co-runner
 * holds in each probed set, k = 0..ways. Every k probes the same sets at
 * the same probe and touch rates. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "session/session_internal.h"

/* Measures the current k: the probed sets walked together for two dwells,
 * the first warming the co-runner's lines in, then the occupancy search
 * on the same sets, as `sample` runs it. */
static int measure_k(struct llc_session *s, struct llc_calibrate_result *c,
                     const struct llc_occ_params *search, unsigned k, char *err, size_t errlen)
{
    struct llc_map_backend *b = s->b;
    const uint32_t units = llc_map_units(&b->geo);
    char why[LLC_ERRLEN];
    struct llc_map_result *r = NULL;
    const struct llc_map_plan plan = {.mode = LLC_MAP_SETS,
                                      .group = c->probed,
                                      .dwell_s = s->cfg.dwell_s,
                                      .sweeps = 2,
                                      .sets = c->units,
                                      .n_sets = c->probed,
                                      .seed = s->cfg.seed,
                                      .stop = s->cfg.stop};
    int rc = llc_map_run(b, &plan, &r, why, sizeof(why));
    if (rc < 0) {
        rc = llc_errf(err, errlen, llc_session_fail_code(rc), "k = %u: %s", k, why);
        goto out;
    }
    if (!r->complete || r->sweeps < 2) {
        rc = llc_errf(err, errlen, -EINTR, "k = %u: %s", k,
                      r->incomplete_reason[0] ? r->incomplete_reason : "interrupted");
        goto out;
    }
    for (uint32_t i = 0; i < c->probed; i++)
        c->per_set[(size_t)k * c->probed + i] =
            (double)r->sweep_misses[units + c->units[i]] / s->cfg.dwell_s;
    rc = llc_occ_search(b, c->units, c->probed, search, s->cfg.stop,
                        c->estimate + (size_t)k * c->probed, why, sizeof(why));
    if (rc < 0)
        rc = llc_errf(err, errlen, llc_session_fail_code(rc), "k = %u: occupancy search: %s", k,
                      why);
out:
    llc_map_result_free(r);
    return rc;
}

/* The simulator's co-runner is part of the simulated run: a fresh backend
 * with k lines held, touched at touch_rate each. */
static int sim_corunner(struct llc_session *s, const struct llc_calibrate_result *c, unsigned k,
                        char *err, size_t errlen)
{
    if (k == 0)
        return 0; /* the session's own backend holds none */
    struct llc_map_sim_options so = s->sim_opt;
    so.calib_lines = k;
    so.calib_rate = c->touch_rate * k * c->probed / 1e9;
    llc_map_backend_release(s->b);
    s->b = NULL;
    const int rc = llc_map_backend_sim(&s->sim_cfg, &so, &s->b, err, errlen);
    return rc < 0 ? llc_session_fail_code(rc) : 0;
}

int llc_calibrate_run(struct llc_session *s, const struct llc_calibrate_config *cc,
                      struct llc_calibrate_result *c, char *err, size_t errlen)
{
    struct llc_map_backend *b = s->b;
    const bool sim = s->info.sim;
    const uint32_t units = llc_map_units(&b->geo);
    char why[LLC_ERRLEN];
    memset(c, 0, sizeof(*c));
    if (!sim && !b->ops->corunner)
        return llc_errf(err, errlen, -ENOTSUP, "the %s backend has no calibration co-runner",
                        b->name);
    if (cc->probed > units)
        return llc_errf(err, errlen, LLC_SESSION_EUSAGE,
                        "--probed: %u sets asked for, the LLC has %u", cc->probed, units);
    c->geo = b->geo;
    c->ways = b->geo.llc_ways;
    c->probed = cc->probed;
    c->units = malloc(c->probed * sizeof(*c->units));
    c->per_set = calloc((size_t)(c->ways + 1) * c->probed, sizeof(*c->per_set));
    c->estimate = calloc((size_t)(c->ways + 1) * c->probed, sizeof(*c->estimate));
    if (!c->units || !c->per_set || !c->estimate) {
        llc_calibrate_result_free(c);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    /* Evenly spaced sets: every slice and index range is represented. */
    for (uint32_t i = 0; i < c->probed; i++)
        c->units[i] = (uint32_t)((uint64_t)i * units / c->probed);
    /* The result keeps the rate over all probed sets; the hardware's rate
     * is per set already (clock pacing per unit). */
    c->rate = sim ? s->cfg.rate : s->cfg.rate * c->probed;
    c->touch_rate =
        cc->touch_rate > 0 ? cc->touch_rate : c->rate / c->probed / (2.0 * c->ways * c->ways);
    int rc = 0;
    for (unsigned k = 0; k <= c->ways && rc == 0; k++) {
        if (sim)
            rc = sim_corunner(s, c, k, why, sizeof(why));
        else
            rc = s->b->ops->corunner(s->b->ctx, c->units, c->probed, k, c->touch_rate, why,
                                     sizeof(why));
        if (rc < 0) {
            rc = llc_errf(err, errlen, llc_session_fail_code(rc), "k = %u: co-runner: %s", k, why);
            break;
        }
        rc = measure_k(s, c, &cc->search, k, err, errlen);
    }
    if (!sim &&
        s->b->ops->corunner(s->b->ctx, c->units, c->probed, 0, c->touch_rate, why, sizeof(why)) <
            0 &&
        rc == 0)
        rc = llc_errf(err, errlen, -EIO, "stopping the co-runner: %s", why);
    if (rc < 0)
        llc_calibrate_result_free(c);
    return rc;
}

void llc_calibrate_result_free(struct llc_calibrate_result *r)
{
    free(r->units);
    free(r->per_set);
    free(r->estimate);
    r->units = NULL;
    r->per_set = r->estimate = NULL;
}
