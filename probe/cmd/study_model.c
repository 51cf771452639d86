/* llcprobe study: every group of K programs predicted with the contention
 * model over phases in time (statmodel/contention, as `predict` runs it),
 * and the pairwise slowdowns for the heatmap. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/study.h"
#include "llcprobe/common.h"
#include "util/cli.h"

const char *study_metric_name(enum study_metric m)
{
    static const char *const names[] = {"throughput", "worst", "fairness", "misses"};
    return names[m];
}

int study_metric_parse(const char *s)
{
    for (int m = STUDY_THROUGHPUT; m <= STUDY_MISSES; m++)
        if (strcmp(s, study_metric_name((enum study_metric)m)) == 0)
            return m;
    return -EINVAL;
}

bool study_metric_higher_better(enum study_metric m)
{
    return m == STUDY_THROUGHPUT;
}

/* One group's timeline (each program's phases co-simulated; phase tuples
 * memoised inside the run). */
static int run_group(struct study *s, const uint8_t *m, size_t k, struct llc_contention_run **run,
                     char *err, size_t errlen)
{
    struct llc_contention_prog cp[STUDY_MAX_K];
    for (size_t i = 0; i < k; i++)
        cp[i] = pred_contention_prog(&s->progs[m[i]], false);
    if (!s->solo_cache && llc_contention_solo_cache_create(&s->solo_cache, err, errlen) < 0)
        return -ENOMEM;
    return llc_contention_timeline_cached(cp, k, &s->cfg, s->solo_cache, run, err, errlen);
}

static int predict_one(struct study *s, struct study_group *g, char *err, size_t errlen)
{
    struct llc_contention_run *run = NULL;
    int rc = run_group(s, g->m, g->n, &run, err, errlen);
    if (rc < 0)
        return rc;
    g->ws = 0;
    g->smax = 0;
    g->smin = INFINITY;
    g->miss = 0;
    for (size_t i = 0; i < g->n; i++) {
        const struct llc_contention_prog_summary *u = &run->summary[i];
        g->slow[i] = (float)u->slowdown;
        g->occ[i] = (float)u->occupancy;
        g->mr[i] = (float)u->miss_ratio;
        g->misses[i] = u->misses;
        g->ws += 1 / u->slowdown;
        g->smax = fmax(g->smax, u->slowdown);
        g->smin = fmin(g->smin, u->slowdown);
        g->miss += u->misses;
    }
    if (run->warn_segments)
        s->warn_groups++;
    if (run->whole_segments)
        s->whole_groups++;
    llc_contention_run_free(run);
    return 0;
}

static double choose(size_t n, size_t k)
{
    double c = 1;
    for (size_t i = 0; i < k; i++)
        c = c * (double)(n - i) / (double)(i + 1);
    return round(c);
}

/* Appends every k-subset of 0..n-1 in lexicographic order (so the groups
 * whose smallest member is i are contiguous, which the search uses). */
static void subsets(struct study *s, size_t k)
{
    uint8_t c[STUDY_MAX_K];
    if (k == 0 || k > STUDY_MAX_K) /* the parser bounds k; this also tells the optimiser */
        return;
    for (size_t i = 0; i < k; i++)
        c[i] = (uint8_t)i;
    for (;;) {
        struct study_group *g = &s->groups[s->n_groups++];
        memset(g, 0, sizeof(*g));
        g->n = (uint8_t)k;
        for (size_t i = 0; i < k; i++) {
            g->m[i] = c[i];
            g->mask |= 1ull << c[i];
        }
        size_t i = k;
        while (i > 0 && c[i - 1] == s->n - k + i - 1)
            i--;
        if (i == 0)
            return;
        c[i - 1]++;
        for (size_t j = i; j < k && j < STUDY_MAX_K; j++) /* second bound: gcc 12 -O3 */
            c[j] = (uint8_t)(c[j - 1] + 1);
    }
}

int study_predict_groups(struct study *s, bool quiet, char *err, size_t errlen)
{
    s->rem = s->n % s->k;
    const double count = choose(s->n, s->k) + (s->rem ? choose(s->n, s->rem) : 0);
    if (count > 5e7)
        return llc_errf(err, errlen, -E2BIG,
                        "%.0f groups of %zu of %zu programs: too many to predict", count, s->k,
                        s->n);
    s->groups = calloc((size_t)count, sizeof(*s->groups));
    s->pair = malloc(s->n * s->n * sizeof(double));
    if (!s->groups || !s->pair)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for %.0f groups", count);
    subsets(s, s->k);
    if (s->rem)
        subsets(s, s->rem);
    struct llc_progress pr;
    llc_progress_begin(&pr, "study: predicting groups", quiet);
    const double t0 = llc_now();
    int rc = 0;
    for (size_t g = 0; rc == 0 && g < s->n_groups; g++) {
        rc = predict_one(s, &s->groups[g], err, errlen);
        if ((g & 255) == 0)
            llc_progress_update(&pr, (double)g / (double)s->n_groups);
    }
    /* The pairwise heatmap: the groups themselves when K = 2, else every pair. */
    for (size_t i = 0; i < s->n * s->n; i++)
        s->pair[i] = NAN;
    for (size_t i = 0; rc == 0 && i < s->n; i++)
        for (size_t j = i + 1; rc == 0 && j < s->n; j++) {
            struct study_group g = {.n = 2, .m = {(uint8_t)i, (uint8_t)j}};
            struct study_group *use = &g;
            if (s->k == 2)
                use = &s->groups[(size_t)(choose(s->n, 2) - choose(s->n - i, 2)) + (j - i - 1)];
            else
                rc = predict_one(s, &g, err, errlen);
            s->pair[i * s->n + j] = use->slow[0];
            s->pair[j * s->n + i] = use->slow[1];
        }
    llc_progress_end(&pr);
    s->predict_s = llc_now() - t0;
    return rc;
}

int study_best_runs(struct study *s, char *err, size_t errlen)
{
    const struct study_sched *b = &s->top[0];
    s->runs = calloc(b->ng, sizeof(*s->runs));
    if (!s->runs)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < b->ng; i++) {
        const struct study_group *g = &s->groups[b->g[i]];
        rc = run_group(s, g->m, g->n, &s->runs[i], err, errlen);
    }
    return rc;
}

void study_free(struct study *s)
{
    for (size_t i = 0; s->progs && i < s->n; i++) {
        pred_prog_free(&s->progs[i]);
        free((char *)s->progs[i].file);
    }
    free(s->progs);
    if (s->runs && s->top)
        for (size_t i = 0; i < s->top[0].ng; i++)
            llc_contention_run_free(s->runs[i]);
    free(s->runs);
    free(s->groups);
    free(s->pair);
    free(s->top);
    for (size_t i = 0; i < s->n_failed; i++)
        free(s->failed[i]);
    free(s->failed);
    llc_contention_solo_cache_free(s->solo_cache);
    llc_contention_tables_free(s->cfg.tables);
    memset(s, 0, sizeof(*s));
}
