/* The linear-regime rate search: predict from each trial's q the rate that
 * meets the rule (q ~ 1 / rate) and stop as soon as one does. */
#include "map/rate_search.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "llcprobe/common.h"

/* Aim this far inside the bounds: q is 1 / rate only approximately. */
#define MARGIN 1.25
/* A predicted rate this close to one already tried adds nothing. */
#define SAME_RATE 1.15

void llc_map_rate_search_config_default(struct llc_map_rate_search_config *c)
{
    *c = (struct llc_map_rate_search_config){.start = 1e8,
                                             .lo = 1e6,
                                             .hi = 1e11,
                                             .max_trials = 6,
                                             .p95_max = 0.1,
                                             .median_max = 0.05,
                                             .max_max = 0.3,
                                             .median_min = 0.002};
}

static bool linear(const struct llc_map_rate_search_config *c, const struct llc_map_rate_trial *t)
{
    return t->q_p95 <= c->p95_max && t->q_median <= c->median_max;
}

/* The rule the search stops on: the linear regime in 95% of the sets with
 * a readable median. The maximum is not part of it: a set the target
 * touches without pause saturates the probe at any rate this side of the
 * probe's own speed (zipf on intel8: max q 0.94 at 1.8e9), and chasing it
 * would multiply the map's cost for one set in twenty. */
static bool whole_rule(const struct llc_map_rate_search_config *c,
                       const struct llc_map_rate_trial *t)
{
    return linear(c, t) && t->q_median >= c->median_min;
}

/* The lowest rate (the most misses to read) that the q ~ 1 / rate model
 * says keeps the upper bounds, as a factor of the trial's rate. */
static double predicted_scale(const struct llc_map_rate_search_config *c,
                              const struct llc_map_rate_trial *t)
{
    return fmax(t->q_p95 / c->p95_max, t->q_median / c->median_max) * MARGIN;
}

static bool tried(const struct llc_map_rate_selection *sel, double rate)
{
    for (size_t i = 0; i < sel->n; i++)
        if (fabs(log(rate / sel->trials[i].rate)) < log(SAME_RATE))
            return true;
    return false;
}

/* Index of the lowest-rate trial that pred accepts, -1 if none. */
static int lowest(const struct llc_map_rate_selection *sel,
                  const struct llc_map_rate_search_config *c,
                  bool (*pred)(const struct llc_map_rate_search_config *,
                               const struct llc_map_rate_trial *))
{
    int best = -1;
    for (size_t i = 0; i < sel->n; i++)
        if (pred(c, &sel->trials[i]) && (best < 0 || sel->trials[i].rate < sel->trials[best].rate))
            best = (int)i;
    return best;
}

static void choose(const struct llc_map_rate_search_config *c, struct llc_map_rate_selection *sel)
{
    int k = lowest(sel, c, whole_rule);
    if (k >= 0) {
        const struct llc_map_rate_trial *t = &sel->trials[k];
        snprintf(
            sel->why, sizeof(sel->why),
            "linear-regime rule met: q median %.3f (%.3g..%.3g), p95 %.3f <= %.3g; max %.3f %s %.3g%s",
            t->q_median, c->median_min, c->median_max, t->q_p95, c->p95_max, t->q_max,
            t->q_max <= c->max_max ? "<=" : ">", c->max_max,
            t->q_max <= c->max_max
                ? ""
                : " (the busiest sets saturate: they rank as the busiest, no more)");
    } else if ((k = lowest(sel, c, linear)) >= 0) {
        const struct llc_map_rate_trial *t = &sel->trials[k];
        snprintf(
            sel->why, sizeof(sel->why),
            "linear regime (q median %.2g, p95 %.3f, max %.3f), but a weak signal: the median set's q is "
            "below %.3g at the lowest rate that keeps p95 <= %.3g: the target touches most sets rarely",
            t->q_median, t->q_p95, t->q_max, c->median_min, c->p95_max);
    } else {
        /* Nothing in the regime: the trial nearest to it (on a tie, all
         * saturated, the fastest). */
        k = 0;
        for (size_t i = 1; i < sel->n; i++) {
            const struct llc_map_rate_trial *a = &sel->trials[i], *b = &sel->trials[k];
            if (a->q_p95 < b->q_p95 || (a->q_p95 == b->q_p95 && a->rate > b->rate))
                k = (int)i;
        }
        const struct llc_map_rate_trial *t = &sel->trials[k];
        snprintf(
            sel->why, sizeof(sel->why),
            "linear regime not reached in %zu trials up to %.3g: at the rate kept q median %.3f, p95 %.3f "
            "(rule: median <= %.3g, p95 <= %.3g); the search range ends at %.3g",
            sel->n, c->hi, t->q_median, t->q_p95, c->median_max, c->p95_max, c->hi);
    }
    sel->chosen = k;
    sel->rate = sel->trials[k].rate;
}

int llc_map_rate_search(const struct llc_map_rate_search_config *c, llc_map_rate_trial_fn trial,
                        void *ctx, struct llc_map_rate_selection *sel, char *err, size_t errlen)
{
    if (!(c->lo > 0 && c->lo <= c->start && c->start <= c->hi) || c->max_trials == 0)
        return llc_errf(err, errlen, -EINVAL, "rate search: start %g outside [%g, %g] or no trials",
                        c->start, c->lo, c->hi);
    sel->method = "linear";
    sel->n = 0;
    sel->chosen = -1;
    /* Rates known to be too slow (q too high) and too fast (no signal). */
    double slow = c->lo, fast = c->hi;
    bool slow_tried = false, fast_tried = false;
    double rate = c->start;
    const unsigned max =
        c->max_trials < LLC_MAP_RATE_MAX_TRIALS ? c->max_trials : LLC_MAP_RATE_MAX_TRIALS;
    while (sel->n < max) {
        struct llc_map_rate_trial *t = &sel->trials[sel->n];
        *t = (struct llc_map_rate_trial){
            .rate = rate, .spearman = NAN, .effect = NAN, .score = NAN, .score_se = NAN};
        const int rc = trial(ctx, rate, t, err, errlen);
        if (rc < 0)
            return rc;
        t->rate = rate;
        if (!isfinite(t->q_median) || !isfinite(t->q_p95) || !isfinite(t->q_max))
            return llc_errf(err, errlen, -ENODATA,
                            "rate search: no probe access counted at %.3g (trial too short?)",
                            rate);
        sel->n++;
        if (whole_rule(c, t))
            break;
        const double s = predicted_scale(c, t);
        if (s > 1) {
            slow = fmax(slow, rate);
            slow_tried = true;
        } else {
            fast = fmin(fast, rate);
            fast_tried = true;
        }
        /* Past a bound: the bound itself if it is the range's end and
         * untried, else half-way (in log) between the bounds. */
        double next = rate * s;
        if (next >= fast)
            next = fast_tried ? sqrt(slow * fast) : fast;
        else if (next <= slow)
            next = slow_tried ? sqrt(slow * fast) : slow;
        if (tried(sel, next))
            break;
        rate = next;
    }
    choose(c, sel);
    return 0;
}
