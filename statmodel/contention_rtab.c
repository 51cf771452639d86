/* Tables of the random model's R (docs/METHODS.md §12.3) for a prediction
 * that meets the same phases in many equilibria: R(x) of a reuse model
 * (at a fixed capacity and age) is one smooth function of x = mu / (gamma
 * a), so instead of the sum over the histogram at every Newton step it is
 * interpolated between nodes of a grid in ln x, each node the exact sum
 * (R and dR/dx) computed the first time a query needs it.
 *
 * Interpolation: cubic Hermite in v = ln x with the exact slopes dR/dv =
 * x dR/dx at both nodes. Each term of R is 1 - exp(-e^(v + ln(c d))), whose
 * v-derivatives are bounded (max |d^4/dv^4| = 1.12), so the error is
 * below h^4 / 384 x 1.12 of R's finite-reuse mass: with 32 nodes per
 * octave, h = ln 2 / 32, about 6.4e-10 (a bucket's mean over its distances
 * is a mean of such terms: the same bound). Below the grid, see below();
 * x = 0 and x past the grid (every finite reuse misses: R flat) take the
 * exact sum, which is then cheap. */
#include "llcprobe/contention.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "contention_internal.h"

#define NODES_PER_OCTAVE 32

/* One function R(x): a model at one capacity (c_log), age and private
 * cache shift. */
struct sm_rtab {
    const struct llc_statmodel_model *m;
    const struct llc_contention_excess *ex; /* its misses added (NULL: none) */
    double c_log, age, shift;
    double v0, inv_h, h; /* node j at v = v0 + j h */
    size_t nodes;
    double *r, *g;             /* R and dR/dv at node j; g NaN = not computed yet */
    double r_zero, d_zero;     /* R(0) and dR/dx at 0+; NaN = not yet */
    struct sm_excess_terms xt; /* ex's terms at this capacity, age and shift */
};

struct llc_contention_tables {
    size_t n, cap; /* tables, slots (power of two) */
    struct sm_rtab *slot;
    /* A table that cannot be allocated is kept without nodes: its queries
     * take the exact sum (a query never fails). */
    size_t computed, queries; /* nodes computed, queries interpolated */
    /* P(Pois(x) < w) of the set-associative LRU grid, by w (contention_pois.c) */
    struct sm_pois_table *pois[LLC_CONTENTION_POIS_WAYS + 1];
    bool pois_failed[LLC_CONTENTION_POIS_WAYS + 1]; /* out of memory: exact */
};

int llc_contention_tables_create(struct llc_contention_tables **out, char *err, size_t errlen)
{
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : llc_errf(err, errlen, -ENOMEM, "R tables: out of memory");
}

void llc_contention_tables_free(struct llc_contention_tables *t)
{
    if (!t)
        return;
    for (size_t s = 0; s < t->cap; s++) {
        free(t->slot[s].r);
        free(t->slot[s].g);
        sm_excess_terms_free(&t->slot[s].xt);
    }
    free(t->slot);
    for (size_t w = 0; w < LLC_ARRAY_LEN(t->pois); w++)
        sm_pois_table_free(t->pois[w]);
    free(t);
}

const struct sm_pois_table *sm_contention_pois_table(struct llc_contention_tables *t, unsigned w)
{
    if (!t || w < 1 || w > LLC_CONTENTION_POIS_WAYS || t->pois_failed[w])
        return NULL;
    if (!t->pois[w]) {
        t->pois[w] = sm_pois_table_new(w);
        t->pois_failed[w] = !t->pois[w];
    }
    return t->pois[w];
}

void llc_contention_tables_stats(const struct llc_contention_tables *t, size_t *tables,
                                 size_t *nodes, size_t *queries)
{
    *tables = t ? t->n : 0;
    *nodes = t ? t->computed : 0;
    *queries = t ? t->queries : 0;
}

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof(b));
    return b;
}

static uint64_t hash5(const void *m, const void *ex, double c_log, double age, double shift)
{
    uint64_t h = (uint64_t)(uintptr_t)m * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uintptr_t)ex + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h ^= bits(c_log) + 0xBF58476D1CE4E5B9ull + (h << 6) + (h >> 2);
    h ^= bits(age) + 0x94D049BB133111EBull + (h << 6) + (h >> 2);
    h ^= bits(shift) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
}

static bool same(const struct sm_rtab *a, const struct llc_statmodel_model *m,
                 const struct llc_contention_excess *ex, double c_log, double age, double shift)
{
    return a->m == m && a->ex == ex && bits(a->c_log) == bits(c_log) && bits(a->age) == bits(age) &&
           bits(a->shift) == bits(shift);
}

static size_t slot_of(const struct llc_contention_tables *t, const struct llc_statmodel_model *m,
                      const struct llc_contention_excess *ex, double c_log, double age,
                      double shift)
{
    size_t s = hash5(m, ex, c_log, age, shift) & (t->cap - 1);
    while (t->slot[s].m && !same(&t->slot[s], m, ex, c_log, age, shift))
        s = (s + 1) & (t->cap - 1);
    return s;
}

static int grow(struct llc_contention_tables *t)
{
    const size_t cap = t->cap ? 2 * t->cap : 64;
    struct sm_rtab *slot = calloc(cap, sizeof(*slot));
    if (!slot)
        return -ENOMEM;
    struct llc_contention_tables g = {.cap = cap, .slot = slot};
    for (size_t s = 0; s < t->cap; s++)
        if (t->slot[s].m)
            slot[slot_of(&g, t->slot[s].m, t->slot[s].ex, t->slot[s].c_log, t->slot[s].age,
                         t->slot[s].shift)] = t->slot[s];
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
    return 0;
}

/* The grid of a model: from x where k d = 1e-4 for its longest finite
 * reuse d (below, R - R(0) is so small that the nodes' rounding, ~1e-14,
 * would show in the slopes between them: the exact sum answers) to x
 * where k d > 40 for its shortest (every finite reuse misses: R flat),
 * k = c_log x. NULL when
 * out of memory or the model has no finite reuse (no table needed). */
static struct sm_rtab *table_of(struct llc_contention_tables *t,
                                const struct llc_statmodel_model *m,
                                const struct llc_contention_excess *ex, double c_log, double age,
                                double shift)
{
    if (2 * (t->n + 1) > t->cap && grow(t) < 0)
        return NULL;
    const size_t s = slot_of(t, m, ex, c_log, age, shift);
    struct sm_rtab *r = &t->slot[s];
    if (r->m)
        return r->nodes ? r : NULL;
    const double *e, *q, *f;
    size_t ne;
    double slope;
    llc_statmodel_footprint_table(m, &e, &q, &f, &ne, &slope);
    *r = (struct sm_rtab){.m = m, .ex = ex, .c_log = c_log, .age = age, .shift = shift};
    t->n++;
    /* distances at risk: past the shift (any, from 1, beyond it) */
    const double lo = shift > 0 ? 1 : fmax(e[0], 1),
                 hi = fmin(e[ne - 1], isfinite(age) ? fmax(age, 1) : INFINITY) - shift;
    if (ne < 2 || !(c_log > 0) || !(hi > 0))
        return NULL;
    const double h = log(2.0) / NODES_PER_OCTAVE;
    const double v0 = log(1e-4 / (c_log * hi)), v1 = log(40 / (c_log * lo));
    const double span = ceil((v1 - v0) / h) + 1;
    if (!(span >= 2 && span < 1e6))
        return NULL;
    const size_t nodes = (size_t)span;
    double *rv = malloc(nodes * sizeof(double)), *gv = malloc(nodes * sizeof(double));
    if (!rv || !gv || sm_excess_terms_make(m, ex, c_log, age, shift, &r->xt) < 0) {
        free(rv);
        free(gv);
        return NULL;
    }
    for (size_t j = 0; j < nodes; j++)
        gv[j] = NAN;
    r->r_zero = r->d_zero = NAN;
    r->v0 = v0;
    r->h = h;
    r->inv_h = 1 / h;
    r->nodes = nodes;
    r->r = rv;
    r->g = gv;
    return r;
}

/* R of the model, plus what its other phases' misses add (ex: none if NULL) */
static double exact(const struct llc_statmodel_model *m, const struct llc_contention_excess *ex,
                    double x, double c_log, double age, double shift, double *dr)
{
    double r = sm_contention_random_r_shifted(m, x, c_log, age, shift, dr);
    if (ex) {
        double de;
        r += sm_contention_random_r_excess(m, ex, x, c_log, age, shift, dr ? &de : NULL);
        if (dr)
            *dr += de;
    }
    return r;
}

static void node(struct llc_contention_tables *t, struct sm_rtab *r, size_t j)
{
    if (!isnan(r->g[j]))
        return;
    const double x = exp(r->v0 + (double)j * r->h);
    double dr, dx = 0;
    if (r->ex) {
        /* the table without ex has the same grid and exists (made before
         * this one, looked up here: the slots move when the tables grow) */
        struct sm_rtab *b = &t->slot[slot_of(t, r->m, NULL, r->c_log, r->age, r->shift)];
        node(t, b, j);
        r->r[j] = b->r[j] + sm_excess_terms_r(&r->xt, x, r->c_log, &dx);
        r->g[j] = b->g[j] + x * dx;
    } else {
        r->r[j] = sm_contention_random_r_shifted(r->m, x, r->c_log, r->age, r->shift, &dr);
        r->g[j] = x * dr;
    }
    t->computed++;
}

/* Cubic Hermite on [0, 1] from values and slopes (in u) at both ends;
 * *dv its derivative in u. */
static double hermite(double r0, double g0, double r1, double g1, double u, double *dv)
{
    const double u2 = u * u, um = 1 - u;
    *dv = (6 * u2 - 6 * u) * (r0 - r1) + g0 * (3 * u2 - 4 * u + 1) + g1 * (3 * u2 - 2 * u);
    return r0 * (1 + 2 * u) * um * um + g0 * u * um * um + r1 * u2 * (3 - 2 * u) +
           g1 * u2 * (u - 1);
}

/* R(0), the first time asked: the exact sum. */
static double zero(struct sm_rtab *r)
{
    if (isnan(r->r_zero))
        r->r_zero = exact(r->m, r->ex, 0, r->c_log, r->age, r->shift, NULL);
    return r->r_zero;
}

/* Below the first node x0 (k d <= 1e-4 for every reuse d the table
 * counts; met where Newton's method probes near mu = 0): Hermite in x
 * itself between R(0) with its slope at 0+ (the exact sum's at 1e-9 x0,
 * the same to 1e-13) and node 0. R's fourth derivative there is at most
 * (k d)^4 of its mass: the error is below 1e-18. */
static double below(struct llc_contention_tables *t, struct sm_rtab *r, double x, double *dr)
{
    const double x0 = exp(r->v0);
    if (isnan(r->d_zero)) {
        zero(r);
        exact(r->m, r->ex, x0 * 1e-9, r->c_log, r->age, r->shift, &r->d_zero);
    }
    node(t, r, 0);
    double du;
    const double val = hermite(r->r_zero, r->d_zero * x0, r->r[0], r->g[0], x / x0, &du);
    if (dr)
        *dr = du / x0;
    return val;
}

/* Whether a query at x is the tables' (x = 0 with a slope, x past every
 * bound: the exact sums). */
static bool tabulable(double x, const double *dr)
{
    return x >= 0 && isfinite(x) && (x > 0 || !dr);
}

/* ex as the tables key it: one that adds no misses is none. */
static const struct llc_contention_excess *with_misses(const struct llc_contention_excess *ex)
{
    return ex && ex->has_misses ? ex : NULL;
}

/* The table of (m, ex, c_log, age, shift), made if new (NULL: none can be,
 * the exact sums answer). With ex, the table without it first: making it
 * may move the slots. */
static struct sm_rtab *table_with(struct llc_contention_tables *t,
                                  const struct llc_statmodel_model *m,
                                  const struct llc_contention_excess *ex, double c_log, double age,
                                  double shift)
{
    return !ex || table_of(t, m, NULL, c_log, age, shift) ? table_of(t, m, ex, c_log, age, shift)
                                                          : NULL;
}

struct sm_rtab *sm_contention_rtab_make(struct llc_contention_tables *t,
                                        const struct llc_statmodel_model *m,
                                        const struct llc_contention_excess *ex, double c_log,
                                        double age, double shift)
{
    ex = with_misses(ex);
    return t ? table_with(t, m, ex, c_log, age, shift) : NULL;
}

struct sm_rtab *sm_contention_rtab_find(struct llc_contention_tables *t,
                                        const struct llc_statmodel_model *m,
                                        const struct llc_contention_excess *ex, double c_log,
                                        double age, double shift)
{
    ex = with_misses(ex);
    if (!t || !t->cap)
        return NULL;
    struct sm_rtab *r = &t->slot[slot_of(t, m, ex, c_log, age, shift)];
    return r->m && r->nodes ? r : NULL;
}

static double query(struct llc_contention_tables *t, struct sm_rtab *r,
                    const struct llc_statmodel_model *m, const struct llc_contention_excess *ex,
                    double x, double c_log, double age, double shift, double *dr);

double sm_contention_rtab_r(struct llc_contention_tables *t, struct sm_rtab *tab,
                            const struct llc_statmodel_model *m,
                            const struct llc_contention_excess *ex, double x, double c_log,
                            double age, double shift, double *dr)
{
    ex = with_misses(ex);
    return query(t, tabulable(x, dr) ? tab : NULL, m, ex, x, c_log, age, shift, dr);
}

double sm_contention_random_r_tab(struct llc_contention_tables *t,
                                  const struct llc_statmodel_model *m,
                                  const struct llc_contention_excess *ex, double x, double c_log,
                                  double age, double shift, double *dr)
{
    ex = with_misses(ex);
    return query(t, t && tabulable(x, dr) ? table_with(t, m, ex, c_log, age, shift) : NULL, m, ex,
                 x, c_log, age, shift, dr);
}

/* R from table r (NULL: the exact sums) */
static double query(struct llc_contention_tables *t, struct sm_rtab *r,
                    const struct llc_statmodel_model *m, const struct llc_contention_excess *ex,
                    double x, double c_log, double age, double shift, double *dr)
{
    if (!r)
        return exact(m, ex, x, c_log, age, shift, dr);
    if (x == 0) /* (each equilibrium's Phi(0): a sum over the whole table) */
        return zero(r);
    const double s = (log(x) - r->v0) * r->inv_h;
    if (!(s < (double)(r->nodes - 1)))
        return exact(m, ex, x, c_log, age, shift, dr);
    t->queries++;
    if (!(s >= 0))
        return below(t, r, x, dr);
    const size_t j = (size_t)s;
    node(t, r, j);
    node(t, r, j + 1);
    double du; /* dR/du, u = (ln x - v_j) / h */
    const double val =
        hermite(r->r[j], r->g[j] * r->h, r->r[j + 1], r->g[j + 1] * r->h, s - (double)j, &du);
    if (dr)
        *dr = du * r->inv_h / x;
    return val;
}
