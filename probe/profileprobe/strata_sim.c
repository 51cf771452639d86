/* Per-stratum reuse of a profile's phases in the simulator
 * (docs/METHODS.md §12.6): the LLC's sets grouped by how often each phase
 * references them, and one reuse histogram per phase and group.
 *
 *   1. Count: every reference of the trace is located in the LLC (the
 *      simulator's page allocation for virtual addresses, as the timed solo
 *      run places them) and counted per phase and set, with the distinct
 *      lines of each phase in each set.
 *   2. Strata: per phase, the sets sorted by references per line and cut
 *      into at most `max_strata` runs minimising the squared deviation
 *      from their run's mean (1-D k-means, solved exactly on at most
 *      CHUNKS quantile chunks); phases whose noise-corrected CV of it is
 *      below `min_cv` keep no strata (their sets look alike). References
 *      per line, not per set: sets that hold more lines because pages
 *      land at random are what the set-associative model's Poisson spread
 *      of lines already covers; what it cannot see is lines used at
 *      different rates in different sets.
 *   3. Reuse: the sampler of the phase histograms (same rate and seed) run
 *      again, each sample filed under the phase of its window and the
 *      stratum of its set (distances in all of the program's references).
 */
#include "llcprobe/profile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "llcprobe/statmodel.h"
#include "llcprobe/trace.h"
#include "llcprobe/workload.h"

/* Quantile chunks of the sorted per-set counts the cut is solved on. */
#define CHUNKS 256
/* Group of the samples taken in unclassified windows (dropped). */
#define NO_GROUP (1 << 30)

void llc_profile_strata_config_default(struct llc_profile_strata_config *c)
{
    *c = (struct llc_profile_strata_config){.max_strata = LLC_PROFILE_STRATA_DEFAULT,
                                            .min_cv = LLC_PROFILE_STRATA_MIN_CV};
}

struct walk {
    const struct llc_profile *p;
    struct llc_sim *sim;
    bool phys;
    size_t window;     /* current window */
    double window_end; /* references before the next window */
    uint64_t refs;     /* references so far */
    long phase;        /* phase index of the current window, -1 none */
};

static void walk_start(struct walk *w)
{
    w->window = 0;
    w->refs = 0;
    w->window_end = w->p->windows.count ? w->p->windows.references[0] : INFINITY;
    w->phase = w->p->windows.count ? llc_profile_phase_index(w->p, w->p->windows.phase_of[0]) : -1;
}

/* Moves to the window of reference w->refs. */
static void walk_window(struct walk *w)
{
    while ((double)w->refs >= w->window_end && w->window + 1 < w->p->windows.count) {
        w->window++;
        w->window_end += w->p->windows.references[w->window];
        w->phase = llc_profile_phase_index(w->p, w->p->windows.phase_of[w->window]);
    }
}

/* Calls fn(ctx, walk, line, set) for every referenced line of the trace, in order. */
static int walk_trace(struct walk *w, const char *path,
                      int (*fn)(void *ctx, const struct walk *w, uint64_t line, uint32_t set),
                      void *ctx, char *err, size_t errlen)
{
    struct llc_trace_reader *r = NULL;
    int rc = llc_trace_reader_open(path, &r, err, errlen);
    struct llc_trace_rec rec;
    walk_start(w);
    while (rc == 0 && (rc = llc_trace_reader_next(r, &rec, err, errlen)) > 0) {
        rc = 0;
        if (rec.kind == LLC_TRACE_INSTR)
            continue;
        const uint64_t size = rec.size ? rec.size : 1;
        const uint64_t n_lines = ((rec.addr & 63) + size - 1) / 64 + 1;
        for (uint64_t k = 0; rc == 0 && k < n_lines; k++) {
            const uint64_t line = (rec.addr >> 6) + k;
            uint64_t paddr;
            uint32_t set;
            walk_window(w);
            rc = llc_sim_locate_batch(w->sim, 0, &(uint64_t){line << 6}, 1, w->phys, &paddr, &set);
            if (rc < 0)
                rc = llc_errf(err, errlen, rc, "%s: reference %llu: not placed in the simulator",
                              path, (unsigned long long)w->refs);
            else if ((rc = fn(ctx, w, line, set)) == -ENOMEM)
                rc = llc_errf(err, errlen, rc, "%s: out of memory", path);
            w->refs++;
        }
    }
    llc_trace_reader_close(r);
    return rc < 0 ? rc : 0;
}

struct counts {
    uint32_t sets;
    uint32_t *n, *lines;                /* [phase][set]: references, distinct lines */
    struct llc_statmodel_lineset *seen; /* line + (phase << 52) */
    struct llc_statmodel_lineset *any;  /* line: the program's, for first touches */
    double *first;                      /* [window] first touches */
};

static int count_one(void *ctx, const struct walk *w, uint64_t line, uint32_t set)
{
    struct counts *c = ctx;
    const int first = llc_statmodel_lineset_add(c->any, line);
    if (first < 0)
        return first;
    c->first[w->window] += first;
    if (!c->n || w->phase < 0 || set >= c->sets) /* no strata asked, or not here */
        return 0;
    const size_t k = (size_t)w->phase * c->sets + set;
    c->n[k]++;
    /* lines are below 2^52 (addresses below 2^58); phases below 2^12 */
    const int fresh = llc_statmodel_lineset_add(c->seen, line | ((uint64_t)w->phase << 52));
    if (fresh < 0)
        return fresh;
    c->lines[k] += (uint32_t)fresh;
    return 0;
}

/* Variance over mean of the distinct lines per set (NaN if none). */
static double set_dispersion(const uint32_t *lines, uint32_t ns)
{
    double s = 0, s2 = 0;
    for (uint32_t i = 0; i < ns; i++) {
        s += lines[i];
        s2 += (double)lines[i] * lines[i];
    }
    const double mean = s / ns;
    return mean > 0 ? fmax(0, s2 / ns - mean * mean) / mean : NAN;
}

struct setval {
    double x;     /* references per line */
    double noise; /* Poisson variance of x: n / lines^2 */
    uint32_t n, set;
};

static int by_x(const void *a, const void *b)
{
    const struct setval *x = a, *y = b;
    return x->x != y->x ? (x->x < y->x ? -1 : 1) : (x->set < y->set ? -1 : x->set > y->set);
}

/* Cuts v[0..ns) (sorted) into at most k runs of least squared deviation;
 * cut[j] = first index of run j, cut[runs] = ns. Returns the runs: the
 * fewest whose deviation is within twice the counts' Poisson noise
 * (`noise`, the sum of the variances: what is left is noise), or that one
 * more would not lower by 1%. */
static size_t cut_runs(const struct setval *v, size_t ns, size_t k, double noise, size_t *cut)
{
    const size_t nc = ns < CHUNKS ? ns : CHUNKS;
    size_t edge[CHUNKS + 1];
    double s[CHUNKS + 1] = {0}, s2[CHUNKS + 1] = {0};
    for (size_t c = 0; c <= nc; c++)
        edge[c] = ns * c / nc;
    for (size_t c = 0; c < nc; c++) {
        double a = 0, b = 0;
        for (size_t i = edge[c]; i < edge[c + 1]; i++) {
            a += v[i].x;
            b += v[i].x * v[i].x;
        }
        s[c + 1] = s[c] + a;
        s2[c + 1] = s2[c] + b;
    }
    /* sse(a, b): chunks [a, b) as one run. */
#define SSE(a, b) (s2[b] - s2[a] - (s[b] - s[a]) * (s[b] - s[a]) / (double)(edge[b] - edge[a]))
    static const double big = INFINITY;
    double best[LLC_PROFILE_MAX_STRATA + 1][CHUNKS + 1];
    unsigned short from[LLC_PROFILE_MAX_STRATA + 1][CHUNKS + 1];
    if (k > nc)
        k = nc;
    for (size_t b = 0; b <= nc; b++)
        best[1][b] = b ? SSE(0, b) : big;
    for (size_t j = 2; j <= k; j++)
        for (size_t b = 0; b <= nc; b++) {
            best[j][b] = big;
            for (size_t a = j - 1; a < b; a++) {
                const double x = best[j - 1][a] + SSE(a, b);
                if (x < best[j][b]) {
                    best[j][b] = x;
                    from[j][b] = (unsigned short)a;
                }
            }
        }
#undef SSE
    size_t runs = 1;
    while (runs < k && best[runs][nc] > 2 * noise && best[runs + 1][nc] < best[runs][nc] * 0.99)
        runs++;
    size_t b = nc;
    cut[runs] = ns;
    for (size_t j = runs; j > 1; j--) {
        b = from[j][b];
        cut[j - 1] = edge[b];
    }
    cut[0] = 0;
    return runs;
}

/* Noise-corrected CV of v's x: the part of their variance beyond the
 * Poisson noise of the counts (*noise gets its sum). */
static double value_cv(const struct setval *v, uint32_t ns, double *noise)
{
    double s = 0, s2 = 0;
    *noise = 0;
    for (uint32_t i = 0; i < ns; i++) {
        s += v[i].x;
        s2 += v[i].x * v[i].x;
        *noise += v[i].noise;
    }
    const double mean = s / ns, var = s2 / ns - mean * mean;
    return mean > 0 ? sqrt(fmax(0, var - *noise / ns)) / mean : 0;
}

/* The strata of phase j from its counts; stratum[set] gets each set's. */
static int make_strata(struct llc_profile_phase *ph, const uint32_t *n, const uint32_t *lines,
                       uint32_t ns, const struct llc_profile_strata_config *sc, uint8_t *stratum,
                       struct setval *v, char *err, size_t errlen)
{
    memset(stratum, 0, ns);
    double all = 0, noise;
    for (uint32_t i = 0; i < ns; i++) {
        const double l = lines[i];
        v[i] = (struct setval){
            .x = l > 0 ? n[i] / l : 0, .noise = l > 0 ? n[i] / (l * l) : 0, .n = n[i], .set = i};
        all += n[i];
    }
    if (!(all > 0) || value_cv(v, ns, &noise) < sc->min_cv)
        return llc_profile_alloc_strata(ph, 0, err, errlen);
    qsort(v, ns, sizeof(*v), by_x);
    size_t cut[LLC_PROFILE_MAX_STRATA + 1];
    const size_t runs = cut_runs(v, ns, sc->max_strata, noise, cut);
    if (runs < 2)
        return llc_profile_alloc_strata(ph, 0, err, errlen);
    int rc = llc_profile_alloc_strata(ph, runs, err, errlen);
    for (size_t g = 0; rc == 0 && g < runs; g++) {
        double refs = 0;
        for (size_t i = cut[g]; i < cut[g + 1]; i++) {
            stratum[v[i].set] = (uint8_t)g;
            refs += v[i].n;
        }
        ph->strata[g].sets = (double)(cut[g + 1] - cut[g]) / ns;
        ph->strata[g].refs = refs / all;
        ph->strata[g].rate_lo = v[cut[g]].x;
        ph->strata[g].rate_hi = v[cut[g + 1] - 1].x;
    }
    return rc;
}

struct reuse {
    struct llc_statmodel_sampler *smp;
    const uint8_t *stratum; /* [phase][set] */
    uint32_t sets;
    int group;
    int rc;
    char *err;
    size_t errlen;
};

static int sample_one(void *ctx, const struct walk *w, uint64_t line, uint32_t set)
{
    struct reuse *r = ctx;
    const struct llc_profile_phase *ph = w->phase >= 0 ? &w->p->phases[w->phase] : NULL;
    const int group =
        ph && ph->n_strata && set < r->sets
            ? (int)w->phase * LLC_PROFILE_MAX_STRATA + r->stratum[(size_t)w->phase * r->sets + set]
            : NO_GROUP;
    if (group != r->group) {
        const int rc = llc_statmodel_sampler_set_group(r->smp, group, r->err, r->errlen);
        if (rc < 0)
            return rc;
        r->group = group;
    }
    llc_statmodel_sampler_access(r->smp, line);
    return 0;
}

/* Histograms into the strata; a phase with a stratum that has references
 * but drew no sample keeps no strata. */
static int file_samples(struct llc_profile *p, const struct llc_statmodel_groups *g, char *err,
                        size_t errlen)
{
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < p->n_phases; j++) {
        struct llc_profile_phase *ph = &p->phases[j];
        bool empty = false;
        for (size_t s = 0; rc == 0 && s < ph->n_strata; s++) {
            const struct llc_statmodel_hist *h =
                llc_statmodel_groups_hist(g, (int)(j * LLC_PROFILE_MAX_STRATA + s));
            if (h)
                rc = llc_statmodel_hist_merge(ph->strata[s].rdhist, h, err, errlen);
            ph->strata[s].samples = llc_statmodel_hist_total(ph->strata[s].rdhist);
            empty |= ph->strata[s].refs > 0 && !(ph->strata[s].samples > 0);
        }
        if (rc == 0 && empty)
            rc = llc_profile_alloc_strata(ph, 0, err, errlen);
    }
    return rc;
}

static struct llc_statmodel_hist **stratum_own(void *ctx, struct llc_profile *p, size_t phase,
                                               int group)
{
    (void)ctx;
    struct llc_profile_phase *ph = &p->phases[phase];
    /* only where the phase has its own (a program of several phases) */
    if (!ph->rdhist_own || group == NO_GROUP || group / LLC_PROFILE_MAX_STRATA != (int)phase)
        return NULL;
    const size_t s = (size_t)(group % LLC_PROFILE_MAX_STRATA);
    return s < ph->n_strata ? &ph->strata[s].rdhist_own : NULL;
}

/* Physical addresses: a synthetic workload that places its own lines. */
static int workload_physical(const struct llc_sim_config *cfg, const char *spec, bool *phys,
                             char *err, size_t errlen)
{
    struct llc_workload *w = NULL;
    const struct llc_workload_target t = {.geometry = &cfg->llc};
    char sub[LLC_ERRLEN];
    const int rc = llc_workload_create(spec, &t, 1, &w, sub, sizeof(sub));
    if (rc < 0)
        return llc_errf(err, errlen, rc, "--workload: %s", sub);
    *phys = llc_workload_is_physical(w);
    llc_workload_destroy(w);
    return 0;
}

int llc_profile_strata_sim(const struct llc_sim_config *cfg, const char *trace,
                           const char *workload, const struct llc_profile_strata_config *sc,
                           struct llc_profile *p, char *err, size_t errlen)
{
    const uint32_t ns = llc_sim_geometry_sets(&cfg->llc);
    struct counts c = {.sets = ns};
    struct walk w = {.p = p};
    uint8_t *stratum = NULL;
    struct setval *v = NULL;
    struct llc_statmodel_groups *groups = NULL;
    struct reuse r = {.sets = ns, .group = -1, .err = err, .errlen = errlen};
    if ((sc->max_strata < 2 && sc->max_strata != 0) || sc->max_strata > LLC_PROFILE_MAX_STRATA)
        return llc_errf(err, errlen, -EINVAL, "strata: %zu (0, or 2..%d)", sc->max_strata,
                        LLC_PROFILE_MAX_STRATA);
    /* Strata too, unless only first touches are asked (the line set of
     * the strata holds 12 bits of phase: none past 4096 phases). */
    const bool strata = sc->max_strata > 0 && p->n_phases < 4096;
    int rc = workload ? workload_physical(cfg, workload, &w.phys, err, errlen) : 0;
    if (rc == 0)
        rc = llc_sim_create(cfg, &w.sim, err, errlen);
    if (rc < 0)
        goto out;
    if (strata) {
        c.n = calloc((p->n_phases ? p->n_phases : 1) * (size_t)ns, sizeof(*c.n));
        c.lines = calloc((p->n_phases ? p->n_phases : 1) * (size_t)ns, sizeof(*c.lines));
        stratum = calloc((p->n_phases ? p->n_phases : 1) * (size_t)ns, 1);
        v = malloc(ns * sizeof(*v));
        if (!c.n || !c.lines || !stratum || !v) {
            rc = llc_errf(err, errlen, -ENOMEM, "strata: out of memory");
            goto out;
        }
        if ((rc = llc_statmodel_lineset_create(&c.seen, err, errlen)) < 0)
            goto out;
    }
    if ((rc = llc_statmodel_lineset_create(&c.any, err, errlen)) < 0 ||
        (rc = llc_profile_alloc_first_touches(p, err, errlen)) < 0)
        goto out;
    c.first = p->windows.first_touches;
    if ((rc = walk_trace(&w, trace, count_one, &c, err, errlen)) < 0)
        goto out;
    llc_statmodel_lineset_destroy(c.seen);
    llc_statmodel_lineset_destroy(c.any);
    c.seen = c.any = NULL;
    if (!strata)
        goto out;
    for (size_t j = 0; j < p->n_phases; j++)
        p->phases[j].set_dispersion = set_dispersion(&c.lines[j * ns], ns);
    for (size_t j = 0; rc == 0 && j < p->n_phases; j++)
        rc = make_strata(&p->phases[j], &c.n[j * ns], &c.lines[j * ns], ns, sc, &stratum[j * ns], v,
                         err, errlen);
    bool any = false;
    for (size_t j = 0; j < p->n_phases; j++)
        any |= p->phases[j].n_strata > 0;
    if (rc < 0 || !any)
        goto out;
    struct llc_statmodel_sampler_config scfg;
    llc_statmodel_sampler_config_default(&scfg);
    scfg.rate = p->sampler.rate;
    scfg.seed = p->sampler.seed;
    scfg.log_reuses = true; /* own distances */
    r.stratum = stratum;
    if ((rc = llc_statmodel_groups_create(&groups, err, errlen)) < 0 ||
        (rc = llc_statmodel_sampler_create(&scfg, groups, &r.smp, err, errlen)) < 0 ||
        (rc = walk_trace(&w, trace, sample_one, &r, err, errlen)) < 0 ||
        (rc = llc_statmodel_sampler_finish(r.smp, err, errlen)) < 0)
        goto out;
    rc = file_samples(p, groups, err, errlen);
    size_t nr = 0;
    const struct llc_statmodel_reuse *log = llc_statmodel_sampler_reuses(r.smp, &nr);
    if (rc == 0 &&
        (rc = llc_profile_own_distances(p, log, nr, stratum_own, NULL, err, errlen)) == 0)
        rc = llc_profile_own_complete(p, err, errlen);
out:
    llc_statmodel_sampler_destroy(r.smp);
    llc_statmodel_groups_destroy(groups);
    llc_sim_destroy(w.sim);
    llc_statmodel_lineset_destroy(c.seen);
    llc_statmodel_lineset_destroy(c.any);
    free(c.n);
    free(c.lines);
    free(stratum);
    free(v);
    return rc;
}
