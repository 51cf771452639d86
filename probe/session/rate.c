/* The probe-rate search of a simulator map (--rate auto, --rate linear):
 * trials on fresh simulators before the map. One function,
 * llc_session_select_rate, so that another search can take its place. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map/rate_search.h"
#include "session/session_internal.h"
#include "util/cli.h"

/* Target accesses per set per sweep a workload's default dwell aims at
 * (as sim.c). */
#define TARGET_ACCESSES_PER_SET 150.0
/* --rate auto: candidate rates 10^7 .. 10^8.5 in half decades, each
 * trial a map of one sweep at this fraction of the map's dwell (plus the
 * warm-up), with PLANTED units holding 1, 2, 4 or 8 lines beside the
 * target. */
#define AUTO_TRIALS 4
#define AUTO_LOG_FIRST 7.0
#define AUTO_LOG_STEP 0.5
#define TRIAL_DWELL_SHARE 0.25
#define PLANTED 1024
#define MAX_WARM_SHARE 0.5
#define DEFAULT_RATE 1e8
/* --rate linear: trial dwell as a share of the map's, and at most as long
 * as this many probe accesses per set take. */
#define LINEAR_DWELL_SHARE 0.05
#define LINEAR_TRIAL_ACCESSES 500.0

/* One trial: a fresh simulator (target from its start) with the probe at
 * rate and, when k is given, the planted co-runner; one sweep of the map's
 * plan. With keep, the map is handed over in *keep instead of scored. */
static int run_trial(const struct llc_session_config *c, const struct llc_sim_config *cfg,
                     const struct llc_map_sim_options *base, double rate, const uint8_t *k,
                     double touch, const uint32_t *scored, size_t n_scored, double dwell,
                     struct llc_map_rate_trial *t, struct llc_map_result **keep, char *err,
                     size_t errlen)
{
    struct llc_map_sim_options so = *base;
    so.probe_rate = rate / 1e9;
    so.plant_lines = k;
    so.plant_rate = touch / 1e9;
    struct llc_map_backend *b = NULL;
    struct llc_map_result *r = NULL;
    int rc = llc_map_backend_sim(cfg, &so, &b, err, errlen);
    if (rc < 0)
        goto out;
    const uint32_t units = llc_map_units(&b->geo);
    const struct llc_map_plan plan = {
        .mode = c->mode,
        .group = c->group ? c->group : (units + 7) / 8,
        .dwell_s = dwell,
        .sweeps = 1,
        .seed = c->seed,
        .stop = c->stop,
    };
    rc = llc_map_run(b, &plan, &r, err, errlen);
    if (rc < 0)
        goto out;
    t->rate = rate;
    if (keep) {
        *keep = r;
        r = NULL;
    } else if (k) {
        llc_map_rate_score(r, k, scored, n_scored, t);
    } else {
        /* The linear rule needs only q: score the target alone. */
        uint8_t *none = calloc(units, 1);
        uint32_t all[2] = {0, 1};
        if (!none) {
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
            goto out;
        }
        llc_map_rate_score(r, none, all, 0, t);
        free(none);
    }
    if (c->stop && *c->stop)
        rc = llc_errf(err, errlen, -EINTR, "interrupted while choosing the probe rate");
out:
    llc_map_result_free(r);
    llc_map_backend_release(b);
    return rc;
}

static void trial_line(const struct llc_session *s, const struct llc_map_rate_trial *t)
{
    if (s->cfg.rate_mode == LLC_SESSION_RATE_LINEAR) {
        llc_session_note(s, "rate %.3g: probe miss ratio q median %.3f p95 %.3f max %.3f", t->rate,
                         t->q_median, t->q_p95, t->q_max);
        return;
    }
    /* NaN figures in words: a paired score needs 8 measured planted sets
     * with some spread in their miss increments; an effect needs idle sets
     * whose misses vary. */
    char score[96], effect[64];
    if (isfinite(t->score))
        snprintf(score, sizeof(score), "paired score %.3f ± %.3f", t->score, t->score_se);
    else
        snprintf(score, sizeof(score),
                 "paired score n/a (under 8 planted sets measured, or no spread)");
    if (isfinite(t->effect))
        snprintf(effect, sizeof(effect), "effect %.1f sd", t->effect);
    else
        snprintf(effect, sizeof(effect), "effect n/a (idle sets without spread)");
    llc_session_note(
        s,
        "rate %.3g: %s (miss-ratio increment per planted 1/2/4/8 lines %.4f %.4f %.4f %.4f); one "
        "map: Spearman %.3f, %s; target-only q median %.3f p95 %.3f max %.3f",
        t->rate, score, t->increment[0], t->increment[1], t->increment[2], t->increment[3],
        t->spearman, effect, t->q_median, t->q_p95, t->q_max);
}

/* Simulated seconds the backend spends warming a global walk at rate
 * (two rounds of every unit's walk, at most W_LLC + W_L2 lines) before
 * its misses count: a trial's dwell adds it, or slow candidates would
 * count nothing. */
static double warm_up(const struct llc_sim_config *cfg, double rate, double walked)
{
    const double walk = cfg->llc.ways + (cfg->inclusion == LLC_SIM_EXCLUSIVE ? cfg->l2_ways : 0);
    return 2.0 * walk * walked / rate;
}

struct linear_trial_ctx {
    struct llc_session *s;
    const struct llc_sim_config *cfg;
    const struct llc_map_sim_options *base;
    double walked, dwell;
};

/* One trial of the linear-regime search: the target alone at rate, no
 * longer than LINEAR_TRIAL_ACCESSES probe accesses per set take (q needs
 * no more; a simulated trial's cost grows with the rate). */
static int linear_trial(void *ctx, double rate, struct llc_map_rate_trial *t, char *err,
                        size_t errlen)
{
    const struct linear_trial_ctx *c = ctx;
    const double dwell = fmin(c->dwell, LINEAR_TRIAL_ACCESSES * c->walked / rate);
    const int rc = run_trial(&c->s->cfg, c->cfg, c->base, rate, NULL, 0, NULL, 0,
                             dwell + warm_up(c->cfg, rate, c->walked), t, NULL, err, errlen);
    if (rc == 0)
        trial_line(c->s, t);
    return rc;
}

static int search_linear(struct llc_session *s, const struct llc_sim_config *cfg,
                         const struct llc_map_sim_options *base, double dwell,
                         double workload_dwell, double walked, char *err, size_t errlen)
{
    struct llc_map_rate_selection *sel = &s->rate_sel;
    char why[LLC_ERRLEN];
    /* Shorter trials than auto's: q needs no planted pattern, and a long
     * trace's dwell would make each trial minutes long. */
    sel->dwell_s = fmax(dwell * LINEAR_DWELL_SHARE, workload_dwell * TRIAL_DWELL_SHARE);
    struct linear_trial_ctx lc = {
        .s = s, .cfg = cfg, .base = base, .walked = walked, .dwell = sel->dwell_s};
    struct llc_map_rate_search_config rc;
    llc_map_rate_search_config_default(&rc);
    rc.start = s->cfg.rate;
    const int r = llc_map_rate_search(&rc, linear_trial, &lc, sel, why, sizeof(why));
    if (r < 0)
        return llc_errf(err, errlen, llc_session_fail_code(r), "choosing the probe rate: %s", why);
    return 0;
}

static int search_auto(struct llc_session *s, const struct llc_sim_config *cfg,
                       const struct llc_map_sim_options *base, double dwell, double walked,
                       char *err, size_t errlen)
{
    struct llc_map_rate_selection *sel = &s->rate_sel;
    const uint32_t units = cfg->llc.sets_per_slice * cfg->llc.slices;
    uint8_t *k = malloc(units), *kb = malloc(units);
    uint32_t *scored = malloc(2 * PLANTED * sizeof(*scored));
    struct llc_map_result *ra = NULL, *rb = NULL;
    char why[LLC_ERRLEN];
    int rc = 0;
    sel->method = "auto";
    if (!k || !kb || !scored) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    const struct llc_map_geometry g = {.sets_per_slice = cfg->llc.sets_per_slice,
                                       .slices = cfg->llc.slices,
                                       .llc_ways = cfg->llc.ways,
                                       .l2_sets = cfg->l2_sets,
                                       .l2_ways = cfg->l2_ways,
                                       .victim_llc = cfg->inclusion == LLC_SIM_EXCLUSIVE};
    sel->planted_units = llc_map_plant_pattern(&g, PLANTED, k, scored);
    if (!sel->planted_units) {
        rc = llc_errf(err, errlen, -EIO,
                      "choosing the probe rate: the LLC is too small for a planted pattern");
        goto out;
    }
    llc_map_plant_swap(units, k, scored, sel->planted_units, kb);
    /* The touch rate a line would see if the target's accesses were spread
     * evenly over every line of the LLC: the planted increments are then as
     * small as the differences between the target's own sets that the map
     * has to rank. The simulator's target rate is its clock, so this is
     * known here. */
    const double touch = s->cfg.target_rate * 1e9 / ((double)units * g.llc_ways);
    for (unsigned i = 0; i < AUTO_TRIALS; i++) {
        const double rate = pow(10, AUTO_LOG_FIRST + AUTO_LOG_STEP * i);
        /* The backend warms each group's walk before counting: a rate whose
         * warm-up takes over half the map's dwell would leave the map itself
         * (a short trace's share, say) little to count. */
        if (warm_up(cfg, rate, walked) > MAX_WARM_SHARE * dwell) {
            struct llc_map_rate_trial *t = &sel->trials[sel->n++];
            *t = (struct llc_map_rate_trial){.rate = rate,
                                             .spearman = NAN,
                                             .effect = NAN,
                                             .q_median = NAN,
                                             .q_p95 = NAN,
                                             .q_max = NAN};
            llc_session_note(
                s, "rate %.3g: skipped: warming the walk takes %.3g s of the map's %.3g s dwell",
                rate, warm_up(cfg, rate, walked), dwell);
            continue;
        }
        sel->plant_touch_rate = touch;
        struct llc_map_rate_trial *t = &sel->trials[sel->n];
        /* A pair of trials, planted and idle units swapped, so each scored
         * unit is seen with and without planted lines. */
        const double trial_dwell = sel->dwell_s + warm_up(cfg, rate, walked);
        if ((rc = run_trial(&s->cfg, cfg, base, rate, k, touch, scored, 2 * sel->planted_units,
                            trial_dwell, t, &ra, why, sizeof(why))) < 0 ||
            (rc = run_trial(&s->cfg, cfg, base, rate, kb, touch, scored, 2 * sel->planted_units,
                            trial_dwell, t, &rb, why, sizeof(why))) < 0) {
            rc = llc_errf(err, errlen, llc_session_fail_code(rc), "choosing the probe rate: %s",
                          why);
            goto out;
        }
        llc_map_rate_score_pair(ra, rb, k, kb, scored, 2 * sel->planted_units, t);
        llc_map_result_free(ra);
        llc_map_result_free(rb);
        ra = rb = NULL;
        sel->n++;
        trial_line(s, t);
    }
    sel->chosen = llc_map_rate_pick(sel->trials, sel->n, DEFAULT_RATE, sel->why, sizeof(sel->why));
    if (sel->chosen < 0) {
        snprintf(sel->why, sizeof(sel->why),
                 "no candidate could be measured in this dwell: the default 1e8 kept");
        s->cfg.rate = DEFAULT_RATE;
    } else if (!(sel->trials[sel->chosen].score >
                 LLC_MAP_RATE_TIE_SE * sel->trials[sel->chosen].score_se)) {
        /* The planted lines' increments were noise at the chosen candidate:
         * the trials say nothing about the rate, so the default stands. */
        snprintf(
            sel->why, sizeof(sel->why),
            "the planted lines' miss increments were within noise at the chosen candidate (paired score %.3f "
            "± %.3f): the default 1e8 kept",
            sel->trials[sel->chosen].score, sel->trials[sel->chosen].score_se);
        s->cfg.rate = DEFAULT_RATE;
        sel->chosen = -1;
    }
out:
    llc_map_result_free(ra);
    llc_map_result_free(rb);
    free(k);
    free(kb);
    free(scored);
    return rc;
}

int llc_session_select_rate(struct llc_session *s, const struct llc_sim_config *cfg,
                            const struct llc_map_sim_options *base, double dwell, char *err,
                            size_t errlen)
{
    const struct llc_session_config *c = &s->cfg;
    struct llc_map_rate_selection *sel = &s->rate_sel;
    const uint32_t units = cfg->llc.sets_per_slice * cfg->llc.slices;
    const double t0 = llc_now();
    /* Units walked together: every unit in global mode, a group in sweep. */
    const double walked = c->mode == LLC_MAP_GLOBAL ? units : c->group ? c->group : (units + 7) / 8;
    memset(sel, 0, sizeof(*sel));
    sel->chosen = -1;
    /* A short trace's dwell is too short for a few planted lines to be
     * touched at all: trials last as long as a workload's would, with the
     * trace replayed from its start when it ends (as --repeat). */
    const double workload_dwell = TARGET_ACCESSES_PER_SET * units / (c->target_rate * 1e9);
    sel->dwell_s = (dwell > workload_dwell ? dwell : workload_dwell) * TRIAL_DWELL_SHARE;
    struct llc_map_sim_options trial_base = *base;
    trial_base.repeat = base->trace != NULL;
    const int rc =
        c->rate_mode == LLC_SESSION_RATE_LINEAR
            ? search_linear(s, cfg, &trial_base, dwell, workload_dwell, walked, err, errlen)
            : search_auto(s, cfg, &trial_base, dwell, walked, err, errlen);
    if (rc < 0)
        return rc;
    if (sel->chosen >= 0)
        s->cfg.rate = sel->trials[sel->chosen].rate;
    sel->rate = s->cfg.rate;
    sel->seconds = llc_now() - t0;
    llc_session_note(s, "rate %s chose %.3g probe accesses per second (%s; %zu trials in %.1f s)",
                     sel->method, s->cfg.rate, sel->why, sel->n, sel->seconds);
    return 0;
}
