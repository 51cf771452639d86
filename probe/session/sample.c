/* Sampling on an open session: the sampled sets measured interval by
 * interval and scaled up to a whole-cache estimate; with a calibration,
 * the occupancy search in the same sets afterwards. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "session/session_internal.h"

const char *llc_sample_method_name(enum llc_sample_method m)
{
    static const char *const names[] = {"gaussian", "random", "continuous", "global", "sets"};
    return (unsigned)m < 5 ? names[m] : "?";
}

int llc_sample_in_run_map(struct llc_session *s, struct llc_session_map_result *out, char *err,
                          size_t errlen)
{
    struct llc_map_backend *b = s->b;
    const struct llc_session_config *c = &s->cfg;
    memset(out, 0, sizeof(*out));
    out->plan = (struct llc_map_plan){.mode = b->all_at_once ? LLC_MAP_GLOBAL : LLC_MAP_SWEEP,
                                      .group = 1,
                                      .dwell_s = c->dwell_s,
                                      .sweeps = c->sweeps,
                                      .seed = c->seed,
                                      .stop = c->stop};
    llc_session_note(s, "mapping all %u sets first (%s, %u sweeps)", llc_map_units(&b->geo),
                     llc_map_mode_name(out->plan.mode), out->plan.sweeps);
    char why[LLC_ERRLEN];
    const int rc = llc_map_run(b, &out->plan, &out->result, why, sizeof(why));
    if (rc < 0)
        return llc_errf(err, errlen, llc_session_fail_code(rc), "in-run map: %s", why);
    if (!out->result->complete) {
        llc_errf(err, errlen, -EINTR, "in-run map: %s", out->result->incomplete_reason);
        llc_session_map_result_free(out);
        return -EINTR;
    }
    return 0;
}

int llc_sample_pick(struct llc_session *s, enum llc_sample_method m, uint32_t count, uint32_t start,
                    const uint32_t *sets, size_t n_sets, uint32_t **units, size_t *n, char *err,
                    size_t errlen)
{
    const uint32_t all = llc_map_units(&s->b->geo);
    size_t k = 0, *pick = NULL;
    int rc = 0;
    *units = NULL;
    switch (m) {
    case LLC_SAMPLE_RANDOM:
    case LLC_SAMPLE_CONTINUOUS:
        k = count;
        if (k > all)
            return llc_errf(err, errlen, LLC_SESSION_EUSAGE, "%u sets asked for, the LLC has %u",
                            count, all);
        if (!(pick = malloc((k ? k : 1) * sizeof(*pick))))
            break;
        rc = m == LLC_SAMPLE_RANDOM
                 ? llc_fit_random_units(all, NULL, k, s->cfg.seed, pick, err, errlen)
                 : llc_fit_continuous_units(all, NULL, start % all, k, pick, err, errlen);
        break;
    case LLC_SAMPLE_GLOBAL:
        k = all;
        if ((pick = malloc(k * sizeof(*pick))))
            for (size_t i = 0; i < k; i++)
                pick[i] = i;
        break;
    case LLC_SAMPLE_SETS:
        k = n_sets;
        if ((pick = malloc((k ? k : 1) * sizeof(*pick))))
            for (size_t i = 0; i < k && rc == 0; i++) {
                if (sets[i] >= all)
                    rc = llc_errf(err, errlen, -ERANGE,
                                  "--sets: set %u is out of range (the LLC has %u sets)", sets[i],
                                  all);
                pick[i] = sets[i];
            }
        break;
    case LLC_SAMPLE_GAUSSIAN:
        return llc_errf(err, errlen, LLC_SESSION_EUSAGE, "Gaussian-25's sets come from a fit");
    }
    uint32_t *u = pick && rc == 0 ? malloc((k ? k : 1) * sizeof(*u)) : NULL;
    if (!u) {
        free(pick);
        return rc < 0 ? llc_session_fail_code(rc) : llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < k; i++)
        u[i] = (uint32_t)pick[i];
    free(pick);
    *units = u;
    *n = k;
    return 0;
}

/* The true occupancy of the target over every set, in lines. */
static double true_lines(const struct llc_map_backend *b, double *occ, uint32_t all)
{
    double sum = 0;
    llc_map_sim_truth(b, occ, NULL, NULL);
    for (uint32_t u = 0; u < all; u++)
        sum += occ[u];
    return sum;
}

/* The occupancy search after the intervals, at the calibration's own
 * cycle whatever the sampling's rate: a simulated trace replays (the
 * caller's repeat), so it no longer has to fit what is left of one run. */
static int occupancy(struct llc_session *s, const struct llc_sample_config *c,
                     struct llc_sample_result *r, double *occ, char *err, size_t errlen)
{
    struct llc_map_backend *b = s->b;
    const struct llc_calib *cal = c->calib;
    const uint32_t all = llc_map_units(&b->geo);
    char why[LLC_ERRLEN];
    if (r->truth)
        llc_map_sim_truth_reset(b);
    llc_session_note(
        s,
        "occupancy: walk-length search in %zu sets (W probe accesses per set every %g s, %u measured "
        "cycles per step, miss-ratio threshold %g)",
        c->n, cal->search_cycle_s, cal->search_cycles, cal->search_threshold);
    const struct llc_occ_params op = {.cycle_s = cal->search_cycle_s,
                                      .cycles = cal->search_cycles,
                                      .threshold = cal->search_threshold};
    r->search_cycle_s = op.cycle_s;
    const int rc =
        llc_occ_search(b, c->units, c->n, &op, s->cfg.stop, r->occ_raw, why, sizeof(why));
    if (rc < 0)
        return llc_errf(err, errlen, llc_session_fail_code(rc), "occupancy: %s", why);
    for (size_t k = 0; k < c->n; k++)
        r->occ_lines[k] = llc_calib_lines(cal, r->occ_raw[k]);
    struct llc_fit_estimates est;
    if (c->sel && llc_fit_estimate(c->sel, r->occ_lines, &est, why, sizeof(why)) == 0)
        r->total.occ_lines = est.stratified;
    else
        llc_fit_scale_up(r->occ_lines, c->n, all, &r->total.occ_lines, NULL, 0);
    if (r->truth)
        r->total.true_occ_lines = true_lines(b, occ, all);
    return 0;
}

/* One interval's figures from its map. */
static void interval_of(struct llc_session *s, const struct llc_sample_config *c,
                        const struct llc_map_result *m, double *x, double *occ, uint64_t *tmiss,
                        struct llc_sample_interval *v)
{
    struct llc_map_backend *b = s->b;
    const uint32_t all = llc_map_units(&b->geo);
    char why[LLC_ERRLEN];
    for (size_t k = 0; k < c->n; k++) {
        x[k] = (double)m->misses[c->units[k]];
        v->sampled += x[k];
        v->probe_accesses += (double)m->accesses[c->units[k]];
    }
    llc_fit_scale_up(x, c->n, all, &v->scale_up, NULL, 0);
    v->stratified = v->ratio = v->stratified_ratio = v->headline = NAN;
    v->occ_lines = NAN;
    struct llc_fit_estimates est;
    if (c->sel && llc_fit_estimate(c->sel, x, &est, why, sizeof(why)) == 0) {
        v->stratified = est.stratified;
        v->stratified_ratio = est.stratified_ratio;
        v->ratio = est.ratio;
        v->headline = est.headline;
    }
    if (c->method == LLC_SAMPLE_GLOBAL)
        v->stratified = v->ratio = v->stratified_ratio = v->scale_up;
    v->true_occ_lines = v->true_target_misses = NAN;
    if (tmiss) {
        llc_map_sim_truth(b, occ, NULL, tmiss + all);
        v->true_occ_lines = v->true_target_misses = 0;
        for (uint32_t u = 0; u < all; u++) {
            v->true_occ_lines += occ[u];
            v->true_target_misses += (double)(tmiss[all + u] - tmiss[u]);
            tmiss[u] = tmiss[all + u];
        }
        llc_map_sim_truth_reset(b);
    }
}

static void add(struct llc_sample_interval *tot, const struct llc_sample_interval *v)
{
    tot->t1 = v->t1;
    tot->sampled += v->sampled;
    tot->probe_accesses += v->probe_accesses;
    tot->scale_up += v->scale_up;
    tot->stratified += v->stratified;
    tot->stratified_ratio += v->stratified_ratio;
    tot->headline += v->headline;
    tot->ratio += v->ratio;
    tot->occ_lines += v->occ_lines;
    tot->true_occ_lines += v->true_occ_lines;
    tot->true_target_misses += v->true_target_misses;
}

int llc_sample_run(struct llc_session *s, const struct llc_sample_config *c,
                   struct llc_sample_result *r, char *err, size_t errlen)
{
    struct llc_map_backend *b = s->b;
    const uint32_t all = llc_map_units(&b->geo);
    memset(r, 0, sizeof(*r));
    r->search_cycle_s = NAN;
    r->iv = calloc(c->intervals, sizeof(*r->iv));
    r->occ_raw = malloc(all * sizeof(double));
    r->occ_lines = malloc(all * sizeof(double));
    double *x = malloc(all * sizeof(double)), *occ = malloc(all * sizeof(double));
    uint64_t *tmiss = calloc(2 * (size_t)all, sizeof(uint64_t));
    struct llc_map_result *m = NULL;
    int rc = 0;
    if (!r->iv || !r->occ_raw || !r->occ_lines || !x || !occ || !tmiss) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    /* The search's curve belongs to one geometry. */
    if (c->calib && (c->calib->units != all || c->calib->ways != b->geo.llc_ways)) {
        rc = llc_errf(
            err, errlen, -EIO,
            "--calibration: the calibration is for %u sets x %u ways, this LLC has %u x %u",
            c->calib->units, c->calib->ways, all, b->geo.llc_ways);
        goto out;
    }
    r->truth = s->info.sim && llc_map_sim_truth(b, NULL, tmiss, NULL) == 0;
    if (r->truth) {
        llc_map_sim_truth(b, NULL, NULL, tmiss);
        llc_map_sim_truth_reset(b);
    }
    const struct llc_map_plan plan = {
        .mode = c->method == LLC_SAMPLE_GLOBAL && b->all_at_once ? LLC_MAP_GLOBAL : LLC_MAP_SETS,
        .group = (uint32_t)c->n,
        .dwell_s = c->interval,
        .sweeps = 1,
        .sets = c->units,
        .n_sets = c->n,
        .seed = s->cfg.seed,
        .stop = s->cfg.stop};
    llc_session_note(s,
                     "%s, %zu sets, %.3g probe accesses per set per second, %u intervals of %g s",
                     llc_sample_method_name(c->method), c->n, s->cfg.rate / (double)c->n,
                     c->intervals, c->interval);
    volatile sig_atomic_t *stop = s->cfg.stop;
    for (unsigned i = 0; i < c->intervals && !(stop && *stop); i++) {
        llc_map_result_free(m);
        m = NULL;
        if ((rc = llc_map_run(b, &plan, &m, err, errlen)) < 0) {
            rc = llc_session_fail_code(rc);
            goto out;
        }
        if (!m->complete && m->sweeps == 0)
            break; /* the target ended (or a signal came) before this interval */
        struct llc_sample_interval *v = &r->iv[r->count++];
        v->t0 = c->interval * i;
        v->t1 = v->t0 + c->interval;
        interval_of(s, c, m, x, occ, r->truth ? tmiss : NULL, v);
        add(&r->total, v);
        if (!m->complete)
            break;
    }
    if (r->count == 0) {
        rc = llc_errf(err, errlen, -EINTR,
                      "no interval was measured (the target ended or a signal came first)");
        goto out;
    }
    /* Occupancy is a level, not a count: its total is the mean over
     * intervals, or the occupancy search's figures when it runs. */
    r->total.occ_lines = NAN;
    r->total.true_occ_lines /= (double)r->count;
    if (c->calib && (rc = occupancy(s, c, r, occ, err, errlen)) < 0)
        goto out;
    r->target_runs = s->cfg.repeat && s->info.sim ? llc_map_sim_target_runs(b) : 0;
out:
    llc_map_result_free(m);
    free(x);
    free(occ);
    free(tmiss);
    if (rc < 0)
        llc_sample_result_free(r);
    return rc;
}

void llc_sample_result_free(struct llc_sample_result *r)
{
    free(r->iv);
    free(r->occ_raw);
    free(r->occ_lines);
    r->iv = NULL;
    r->occ_raw = r->occ_lines = NULL;
}
