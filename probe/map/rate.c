/* Probe rate selection: the planted pattern, scoring a trial map against
 * it, picking a rate, and the method's linear-regime search step. */
#include "llcprobe/map.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t llc_map_plant_pattern(const struct llc_map_geometry *g, uint32_t n_planted, uint8_t *k,
                               uint32_t *scored)
{
    const uint32_t units = llc_map_units(g);
    if (units < 8 || n_planted == 0 || g->llc_ways == 0)
        return 0;
    /* Distinct L2 sets: on a victim LLC the co-runner's own L2 keeps
     * W_L2 lines of each planted chain, which only works out when no two
     * planted units compete for one L2 set. */
    uint32_t cap = units / 4;
    if (g->l2_sets && g->l2_sets < cap)
        cap = g->l2_sets;
    if (n_planted > cap)
        n_planted = cap;
    memset(k, 0, units);
    const uint32_t sps = g->sets_per_slice;
    /* Index stride over the first l2_sets (or all) indexes; the slice
     * turns with i so that every slice gets planted units. */
    const uint32_t span = g->l2_sets && g->l2_sets < sps ? g->l2_sets : sps;
    const uint32_t stride = span / n_planted ? span / n_planted : 1;
    for (uint32_t i = 0; i < n_planted; i++) {
        const uint32_t index = (i * stride) % span, slice = i % g->slices;
        const uint32_t level = i % LLC_MAP_PLANT_LEVELS;
        const unsigned lines = 1u << level;
        const uint32_t u = slice * sps + index;
        k[u] = (uint8_t)(lines < g->llc_ways ? lines : g->llc_ways);
        scored[i] = u;
    }
    /* Idle units to score beside them: half-way between planted indexes,
     * on another slice, never planted themselves. */
    uint32_t n_idle = 0;
    for (uint32_t i = 0; n_idle < n_planted && i < 4 * n_planted; i++) {
        const uint32_t index = (i * stride + stride / 2 + sps / 2) % sps;
        const uint32_t slice = (i + 1) % g->slices, u = slice * sps + index;
        if (k[u])
            continue;
        bool dup = false;
        for (uint32_t j = n_planted; j < n_planted + n_idle && !dup; j++)
            dup = scored[j] == u;
        if (!dup)
            scored[n_planted + n_idle++] = u;
    }
    return n_idle == n_planted ? n_planted : 0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void llc_map_rate_score(const struct llc_map_result *r, const uint8_t *k, const uint32_t *scored,
                        size_t n_scored, struct llc_map_rate_trial *t)
{
    t->spearman = t->effect = t->q_median = t->q_p95 = t->q_max = NAN;
    t->score = t->score_se = NAN;
    for (unsigned l = 0; l < LLC_MAP_PLANT_LEVELS; l++)
        t->increment[l] = NAN;
    t->measured = false;
    double *m = malloc((n_scored ? n_scored : 1) * sizeof(*m));
    double *kk = malloc((n_scored ? n_scored : 1) * sizeof(*kk));
    double *q = malloc((size_t)r->units * sizeof(*q));
    if (!m || !kk || !q)
        goto out;
    double sum_p = 0, sum_i = 0, sum_i2 = 0;
    size_t n = 0, n_p = 0, n_i = 0;
    for (size_t i = 0; i < n_scored; i++) {
        const uint32_t u = scored[i];
        if (u >= r->units || !r->measured[u])
            continue;
        m[n] = (double)r->misses[u];
        kk[n++] = k[u];
        if (k[u]) {
            sum_p += (double)r->misses[u];
            n_p++;
        } else {
            sum_i += (double)r->misses[u];
            sum_i2 += (double)r->misses[u] * (double)r->misses[u];
            n_i++;
        }
    }
    /* q over every measured unit without planted lines: what the target
     * alone does to the probe. */
    size_t nq = 0;
    for (uint32_t u = 0; u < r->units; u++)
        if (r->measured[u] && !k[u] && r->accesses[u])
            q[nq++] = (double)r->misses[u] / (double)r->accesses[u];
    if (nq) {
        qsort(q, nq, sizeof(*q), cmp_double);
        t->q_median = nq % 2 ? q[nq / 2] : 0.5 * (q[nq / 2 - 1] + q[nq / 2]);
        t->q_p95 = q[(size_t)floor(0.95 * (double)(nq - 1))];
        t->q_max = q[nq - 1];
    }
    if (n_p == 0 || n_i < 2)
        goto out;
    t->spearman = llc_map_spearman(m, kk, n);
    const double mi = sum_i / (double)n_i;
    const double sdi = sqrt(fmax(0, (sum_i2 - (double)n_i * mi * mi) / (double)(n_i - 1)));
    t->effect = sdi > 0 ? (sum_p / (double)n_p - mi) / sdi : NAN;
    t->measured = isfinite(t->spearman);
out:
    free(m);
    free(kk);
    free(q);
}

void llc_map_plant_swap(uint32_t units, const uint8_t *k, const uint32_t *scored,
                        uint32_t n_planted, uint8_t *kb)
{
    memset(kb, 0, units);
    for (uint32_t i = 0; i < n_planted; i++)
        kb[scored[n_planted + i]] = k[scored[i]];
}

void llc_map_rate_paired(const double *d, const uint8_t *k, size_t n, struct llc_map_rate_trial *t)
{
    t->score = t->score_se = NAN;
    double sum[LLC_MAP_PLANT_LEVELS] = {0};
    size_t cnt[LLC_MAP_PLANT_LEVELS] = {0};
    double *kk = malloc((n ? n : 1) * sizeof(*kk));
    if (!kk)
        goto out;
    for (size_t i = 0; i < n; i++) {
        kk[i] = k[i];
        unsigned l = 0;
        while (l + 1 < LLC_MAP_PLANT_LEVELS && (1u << l) < k[i])
            l++;
        sum[l] += d[i];
        cnt[l]++;
    }
    for (unsigned l = 0; l < LLC_MAP_PLANT_LEVELS; l++)
        t->increment[l] = cnt[l] ? sum[l] / (double)cnt[l] : NAN;
    if (n < 8)
        goto out;
    t->score = llc_map_spearman(d, kk, n);
    /* Fieller, Hartley and Pearson's variance of Spearman's rho,
     * 1.06 / (n - 3): the noise a rival candidate must beat. */
    t->score_se = sqrt(1.06 / (double)(n - 3));
out:
    free(kk);
}

void llc_map_rate_score_pair(const struct llc_map_result *a, const struct llc_map_result *b,
                             const uint8_t *ka, const uint8_t *kb, const uint32_t *scored,
                             size_t n_scored, struct llc_map_rate_trial *t)
{
    llc_map_rate_score(a, ka, scored, n_scored, t);
    double *d = malloc((n_scored ? n_scored : 1) * sizeof(*d));
    uint8_t *k = malloc(n_scored ? n_scored : 1);
    if (!d || !k) {
        t->measured = false;
        goto out;
    }
    size_t n = 0;
    for (size_t i = 0; i < n_scored; i++) {
        const uint32_t u = scored[i];
        if (u >= a->units || u >= b->units || !a->measured[u] || !b->measured[u] ||
            (!ka[u] && !kb[u]))
            continue;
        /* A unit's misses per access, so a pair whose two maps gave it
         * different dwell still compares like with like. */
        const double qa = a->accesses[u] ? (double)a->misses[u] / (double)a->accesses[u] : 0;
        const double qb = b->accesses[u] ? (double)b->misses[u] / (double)b->accesses[u] : 0;
        d[n] = ka[u] ? qa - qb : qb - qa;
        k[n++] = ka[u] ? ka[u] : kb[u];
    }
    llc_map_rate_paired(d, k, n, t);
    t->measured = t->measured && isfinite(t->score);
out:
    free(d);
    free(k);
}

bool llc_map_rate_safe(const struct llc_map_rate_trial *t)
{
    return t->measured && t->q_median <= LLC_MAP_RATE_Q_MAX && t->q_median >= LLC_MAP_RATE_Q_MIN;
}

int llc_map_rate_pick(const struct llc_map_rate_trial *t, size_t n, double prefer_rate, char *why,
                      size_t whylen)
{
    int best = -1;
    size_t n_safe = 0;
    for (size_t i = 0; i < n; i++)
        n_safe += llc_map_rate_safe(&t[i]) && isfinite(t[i].score);
    const bool eligible_all = n_safe == 0;
#define ELIGIBLE(i) \
    (t[i].measured && isfinite(t[i].score) && (eligible_all || llc_map_rate_safe(&t[i])))
    for (size_t i = 0; i < n; i++)
        if (ELIGIBLE(i) && (best < 0 || t[i].score > t[best].score))
            best = (int)i;
    if (best < 0) {
        if (why && whylen)
            snprintf(why, whylen, "no candidate rate could be measured");
        return -1;
    }
    /* A score within noise of the best is no evidence against that
     * candidate: among the tied, the default (which the bench measured
     * across policies), else the gentlest probe on the target. */
    const int top = best;
    int pick = -1;
    size_t n_tied = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ELIGIBLE(i))
            continue;
        const double se = sqrt(t[i].score_se * t[i].score_se + t[top].score_se * t[top].score_se);
        if (t[top].score - t[i].score > LLC_MAP_RATE_TIE_SE * se)
            continue;
        n_tied++;
        if (pick < 0 || t[i].rate == prefer_rate ||
            (t[pick].rate != prefer_rate && t[i].q_median < t[pick].q_median))
            pick = (int)i;
    }
#undef ELIGIBLE
    if (why && whylen)
        snprintf(why, whylen,
                 "paired score (Spearman of planted lines vs their miss increment) %.3f at %.3g; "
                 "%zu candidate(s) within %.0f standard errors of it, %s among %s candidates "
                 "(%zu of %zu with median q in %.3g..%.3g)",
                 t[top].score, t[top].rate, n_tied, LLC_MAP_RATE_TIE_SE,
                 t[pick].rate == prefer_rate && n_tied > 1 ? "the default preferred"
                 : n_tied > 1                              ? "lowest median q"
                                                           : "the best",
                 n_safe ? "the q-safe" : "all (none q-safe)", n_safe, n, LLC_MAP_RATE_Q_MIN,
                 LLC_MAP_RATE_Q_MAX);
    return pick;
}

int llc_map_rate_linear_step(double rate, const struct llc_map_rate_trial *t, double *lo,
                             double *hi, double *next)
{
    if (!isfinite(t->q_median) || !isfinite(t->q_p95) || !isfinite(t->q_max))
        return -1;
    const bool too_high = t->q_median > 0.05 || t->q_p95 > 0.1 || t->q_max > 0.3;
    const bool too_low = !too_high && t->q_median < 0.002;
    if (!too_high && !too_low)
        return 0;
    /* Faster probing shortens a foreign line's life (tau = W / r), so
     * high q calls for a higher rate and a weak signal for a lower one. */
    if (too_high)
        *lo = rate > *lo ? rate : *lo;
    else
        *hi = rate < *hi ? rate : *hi;
    *next = sqrt(*lo * *hi);
    return 1;
}
