/* A phase's reuses across its program's other phases (docs/METHODS.md
 * §12.7): the lines those phases add, each over its own references. */
#include "llcprobe/contention.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "contention_internal.h"

#define EXCESS_WINDOWS 64
#define EXCESS_POSITIONS 4
#define EXCESS_RUNS 64

/* A program's windows collapsed into runs of one phase. */
struct run {
    double start, end; /* references */
    size_t g;
};

struct timeline {
    const struct run *runs;
    size_t nr, ng;
    double end;      /* references in all */
    const double *w; /* each phase's share of them */
    const struct llc_statmodel_model *const *models;
    const double *mr; /* each phase's misses per reference (NULL: none) */
    double *refs;     /* scratch, ng */
};

/* Lines touched by a reuse from t1 to t1 + d: each phase's footprint over
 * its own references in between (phases touch their own data; within one
 * run this is the phase's footprint at d). The runs it spans, at most
 * EXCESS_RUNS, count as they ran; the rest of the span, and any part past
 * the program's end, goes to the phases by their shares of the run.
 * *misses: each phase's misses over its references in between. */
static double span_lines(const struct timeline *k, size_t r, double t1, double d, double *misses)
{
    const double t2 = t1 + d;
    double rest = d;
    for (size_t g = 0; g < k->ng; g++)
        k->refs[g] = 0;
    for (size_t walked = 0; r < k->nr && walked < EXCESS_RUNS && k->runs[r].start < t2;
         r++, walked++) {
        const double a = fmax(t1, k->runs[r].start), b = fmin(t2, k->runs[r].end);
        if (b > a) {
            k->refs[k->runs[r].g] += b - a;
            rest -= b - a;
        }
    }
    double lines = 0;
    *misses = 0;
    for (size_t g = 0; g < k->ng; g++) {
        const double own = k->refs[g] + fmax(0, rest) * k->w[g];
        if (own > 0)
            lines += llc_statmodel_footprint(k->models[g], own);
        if (k->mr)
            *misses += k->mr[g] * own;
    }
    return lines;
}

/* The points' distances: from a 32nd of the shortest run (no reuse
 * shorter than that spans a run boundary often enough to count) to the
 * whole program, geometric. */
static size_t excess_grid(const struct run *runs, size_t nr, double end, double *x)
{
    double shortest = INFINITY;
    for (size_t r = 0; r < nr; r++)
        shortest = fmin(shortest, runs[r].end - runs[r].start);
    const double lo = fmax(1, shortest / 32);
    if (!(end > 2 * lo))
        return 0;
    const double ratio = pow(end / lo, 1.0 / (LLC_CONTENTION_EXCESS_POINTS - 1));
    for (size_t k = 0; k < LLC_CONTENTION_EXCESS_POINTS; k++)
        x[k] = lo * pow(ratio, (double)k);
    return LLC_CONTENTION_EXCESS_POINTS;
}

int llc_contention_excess_build(const struct llc_statmodel_model *const *models, size_t n_phases,
                                const int *window_phase, const double *window_refs,
                                size_t n_windows, size_t g, const double *miss_ratio,
                                struct llc_contention_excess *out, char *err, size_t errlen)
{
    out->n = 0;
    out->has_misses = out->has_cross = false;
    if (g >= n_phases || !models[g])
        return llc_errf(err, errlen, -EINVAL, "excess: phase %zu of %zu", g, n_phases);
    int rc = 0;
    struct run *runs = malloc((n_windows ? n_windows : 1) * sizeof(*runs));
    double *start = malloc((n_windows ? n_windows : 1) * sizeof(*start));
    double *w = calloc(n_phases, sizeof(*w));
    double *scratch = calloc(n_phases, sizeof(*scratch));
    size_t *mine = malloc((n_windows ? n_windows : 1) * sizeof(*mine)),
           *run_of = malloc((n_windows ? n_windows : 1) * sizeof(*run_of));
    if (!runs || !start || !w || !scratch || !mine || !run_of) {
        rc = llc_errf(err, errlen, -ENOMEM, "excess: out of memory");
        goto out;
    }
    size_t nr = 0, nm = 0;
    double end = 0;
    for (size_t i = 0; i < n_windows; i++) {
        const double refs = window_refs[i];
        if (!(refs > 0))
            continue;
        const int k = window_phase[i];
        if (k < 0 || (size_t)k >= n_phases || !models[k]) {
            rc = llc_errf(err, errlen, -EINVAL, "excess: window %zu has phase %d", i, k);
            goto out;
        }
        if ((size_t)k == g)
            mine[nm++] = i;
        start[i] = end;
        w[k] += refs;
        if (nr && runs[nr - 1].g == (size_t)k)
            runs[nr - 1].end += refs;
        else
            runs[nr++] = (struct run){.start = end, .end = end + refs, .g = (size_t)k};
        run_of[i] = nr - 1;
        end += refs;
    }
    if (nm == 0 || !(end > 0))
        goto out;
    for (size_t k = 0; k < n_phases; k++)
        w[k] /= end;
    const struct timeline tl = {.runs = runs,
                                .nr = nr,
                                .ng = n_phases,
                                .end = end,
                                .w = w,
                                .models = models,
                                .mr = miss_ratio,
                                .refs = scratch};
    const size_t n = excess_grid(runs, nr, end, out->x);
    const size_t step = nm > EXCESS_WINDOWS ? (nm + EXCESS_WINDOWS - 1) / EXCESS_WINDOWS : 1;
    double biggest = 0;
    for (size_t k = 0; k < n; k++) {
        const double d = out->x[k];
        double sum = 0, sum_m = 0, weight = 0;
        for (size_t j = step / 2; j < nm; j += step) {
            const size_t i = mine[j];
            for (unsigned p = 0; p < EXCESS_POSITIONS; p++) {
                const double t1 = start[i] + window_refs[i] * (p + 0.5) / EXCESS_POSITIONS;
                double m;
                sum += window_refs[i] * span_lines(&tl, run_of[i], t1, d, &m);
                sum_m += window_refs[i] * m;
                weight += window_refs[i];
            }
        }
        out->lines[k] = sum / weight - llc_statmodel_footprint(models[g], d);
        out->misses[k] = miss_ratio ? sum_m / weight - miss_ratio[g] * d : 0;
        biggest = fmax(biggest, fmax(fabs(out->lines[k]), fabs(out->misses[k])));
    }
    out->n = biggest > 1e-9 ? n : 0;
    out->has_misses = out->n > 0 && miss_ratio;
out:
    free(runs);
    free(start);
    free(w);
    free(scratch);
    free(mine);
    free(run_of);
    return rc;
}

int llc_contention_excess_spans(const struct llc_statmodel_model *const *models, size_t n_models,
                                size_t g, const double *distance, const double *share,
                                const double *refs, size_t stride, size_t n,
                                const double *miss_ratio, struct llc_contention_excess *out,
                                char *err, size_t errlen)
{
    *out = (struct llc_contention_excess){0};
    if (g >= n_models || stride > n_models || n > LLC_CONTENTION_EXCESS_POINTS)
        return llc_errf(err, errlen, -EINVAL, "spans: phase %zu, %zu columns, %zu points of %zu", g,
                        stride, n, n_models);
    double biggest = 0;
    for (size_t k = 0; k < n; k++) {
        if (!(distance[k] > 0) || (out->n && !(distance[k] > out->x[out->n - 1])))
            continue; /* a reuse of no own references meets nothing */
        double lines = 0, misses = 0;
        for (size_t h = 0; h < stride; h++) {
            const double r = refs[k * stride + h];
            if (!(r > 0) || h == g)
                continue;
            if (!models[h])
                return llc_errf(err, errlen, -EINVAL,
                                "spans: point %zu has references of phase %zu, which has no model",
                                k, h);
            lines += llc_statmodel_footprint(models[h], r);
            misses += miss_ratio ? miss_ratio[h] * r : 0;
        }
        const size_t i = out->n++;
        out->x[i] = distance[k];
        out->cross[i] = share[k];
        out->lines[i] = share[k] * lines;
        out->misses[i] = share[k] * misses;
        biggest = fmax(biggest, fmax(out->lines[i], out->misses[i]));
    }
    if (!(biggest > 1e-9))
        out->n = 0;
    out->has_misses = out->n > 0 && miss_ratio;
    out->has_cross = out->n > 0;
    return 0;
}

/* Linear between points k and k + 1 (not in log x: no log per query on
 * the grid's path; the points are (end / lo)^(1/63) apart, 1.15 for a
 * program 200 times its shortest run's 32nd). */
static double between(const struct llc_contention_excess *e, const double *v, size_t k, double x)
{
    const double t = (x - e->x[k]) / (e->x[k + 1] - e->x[k]);
    return v[k] + t * (v[k + 1] - v[k]);
}

double llc_contention_excess_at(const struct llc_contention_excess *e, double x)
{
    size_t k = 0; /* from the first point: the same one a bisection finds */
    return llc_contention_excess_next(e, &k, x);
}

/* v (lines or misses) at x, from point *k on */
static double value_next(const struct llc_contention_excess *e, const double *v, size_t *k,
                         double x)
{
    if (x <= e->x[0])
        return v[0] * x / e->x[0];
    if (x >= e->x[e->n - 1])
        return v[e->n - 1];
    if (*k >= e->n - 1 || e->x[*k] >= x)
        *k = 0;
    while (e->x[*k + 1] < x)
        (*k)++;
    return between(e, v, *k, x);
}

double llc_contention_excess_next(const struct llc_contention_excess *e, size_t *k, double x)
{
    if (!e || e->n == 0 || !(x > 0))
        return 0;
    return value_next(e, e->lines, k, x);
}

double llc_contention_excess_cross_next(const struct llc_contention_excess *e, size_t *k, double x)
{
    if (!e || !e->has_cross || e->n == 0 || !(x > 0))
        return 1;
    return value_next(e, e->cross, k, x);
}

double llc_contention_excess_misses_at(const struct llc_contention_excess *e, double x)
{
    if (!e || !e->has_misses || e->n == 0 || !(x > 0))
        return 0;
    size_t k = 0;
    return value_next(e, e->misses, &k, x);
}

/* The buckets of a model's reuse distances that another phase's misses
 * put at risk, in order of distance: each counts at its middle (a
 * one-distance bucket at its distance), before the age, past the private
 * cache (u = distance - shift > 0), with mass and those misses (add > 0)
 * over it. */
struct bucket_walk {
    const struct llc_contention_excess *ex;
    const double *e, *q;
    size_t ne, i, at, at_cross;
    double age, shift;
};

static bool walk_start(struct bucket_walk *b, const struct llc_statmodel_model *m,
                       const struct llc_contention_excess *ex, double age, double shift)
{
    if (!ex || !ex->has_misses || ex->n == 0 || isinf(shift))
        return false;
    const double *f;
    double slope;
    *b = (struct bucket_walk){.ex = ex, .age = age, .shift = shift > 0 ? shift : 0};
    llc_statmodel_footprint_table(m, &b->e, &b->q, &f, &b->ne, &slope);
    return true;
}

static bool walk_next(struct bucket_walk *b, double *u, double *mass, double *add, double *share)
{
    for (; b->i + 1 < b->ne; b->i++) {
        const double *e = b->e;
        const size_t i = b->i;
        const double w = e[i + 1] - e[i], dist = w <= 1 ? e[i] : e[i] + 0.5 * w;
        *u = dist - b->shift;
        *mass = b->q[i] - b->q[i + 1];
        if (!(dist < b->age))
            break;
        if (!(*u > 0) || !(*mass > 0))
            continue;
        *add = value_next(b->ex, b->ex->misses, &b->at, dist);
        if (*add > 0) {
            *share = llc_contention_excess_cross_next(b->ex, &b->at_cross, dist);
            b->i++;
            return true;
        }
    }
    b->i = b->ne;
    return false;
}

/* The share of a reuse's survival its other phases' misses take: 1 -
 * e^(-c_log E) at the mean E, or over the spans that meet them (share of
 * them, E / share each). */
static double lost(double c_log, double add, double share)
{
    return share < 1 && share > 0 ? share * -expm1(-c_log * add / share) : -expm1(-c_log * add);
}

/* The random model's R at rate x prices a reuse of own distance d with
 * the phase's insertions over d (survival s = e^(-k u), k = c_log x, u =
 * d - shift: past the private cache). Where its other phases insert E(d)
 * more over the span, the survival is s e^(-c_log E): R gains, per bucket
 * at risk, mass s (1 - e^(-c_log E)). Where they insert fewer, the
 * phase's own rate stays (docs/METHODS.md §12.7: the mean span misprices
 * those reuses). Once k u > 40 the rest adds nothing (s < 5e-18). */
double sm_contention_random_r_excess(const struct llc_statmodel_model *m,
                                     const struct llc_contention_excess *ex, double x, double c_log,
                                     double age, double shift, double *dr)
{
    double r = 0, d = 0;
    struct bucket_walk b;
    if (walk_start(&b, m, ex, age, shift)) {
        const double k = c_log * x;
        double u, mass, add, share;
        while (walk_next(&b, &u, &mass, &add, &share) && !(k * u > 40)) {
            const double s = exp(-k * u), g = lost(c_log, add, share);
            r += mass * s * g;
            d -= mass * c_log * u * s * g;
        }
    }
    if (dr)
        *dr = d;
    return r;
}

int sm_excess_terms_make(const struct llc_statmodel_model *m,
                         const struct llc_contention_excess *ex, double c_log, double age,
                         double shift, struct sm_excess_terms *out)
{
    *out = (struct sm_excess_terms){0};
    struct bucket_walk b;
    if (!walk_start(&b, m, ex, age, shift))
        return 0;
    out->u = malloc((b.ne ? b.ne : 1) * sizeof(double));
    out->w = malloc((b.ne ? b.ne : 1) * sizeof(double));
    if (!out->u || !out->w) {
        sm_excess_terms_free(out);
        return -ENOMEM;
    }
    double u, mass, add, share;
    while (walk_next(&b, &u, &mass, &add, &share)) {
        out->u[out->n] = u;
        out->w[out->n++] = mass * lost(c_log, add, share);
    }
    return 0;
}

void sm_excess_terms_free(struct sm_excess_terms *t)
{
    free(t->u);
    free(t->w);
    *t = (struct sm_excess_terms){0};
}

/* e^(-k u) carried from term to term: the gaps between the buckets'
 * middles repeat (1 in the exact region, then constant within an
 * octave), so one exp per gap width. */
double sm_excess_terms_r(const struct sm_excess_terms *t, double x, double c_log, double *dr)
{
    const double k = c_log * x;
    double r = 0, d = 0, s = 1, at = 0, gap = -1, step = 1;
    for (size_t j = 0; j < t->n && !(k * t->u[j] > 40); j++) {
        if (t->u[j] - at != gap) {
            gap = t->u[j] - at;
            step = exp(-k * gap);
        }
        s *= step;
        at = t->u[j];
        r += t->w[j] * s;
        d -= c_log * t->u[j] * t->w[j] * s;
    }
    if (dr)
        *dr = d;
    return r;
}
