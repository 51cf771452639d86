/* llcprobe study: the co-schedule search over the predicted groups.
 *
 * Up to STUDY_EXACT_LIMIT co-schedules are enumerated and ranked. Beyond,
 * branch and bound: depth first, the lowest unassigned program is placed
 * in each group with it (groups in order of their own metric value), a
 * subtree is cut when its optimistic bound cannot beat the incumbent. The
 * bound completes the partial co-schedule with every unassigned program at
 * its best slowdown (misses) over all groups that contain it; that is an
 * admissible bound for all four metrics (sum of 1/slowdown, largest
 * slowdown, largest over smallest, sum of misses). The incumbent starts
 * from greedy and pairwise-swap local search over random starts. With a
 * node budget the search may stop early: the result then carries the root
 * bound and the gap between them (the optimality gap is at most that).
 * The worst co-schedule is searched the same way in the other direction;
 * the median of a large space is that of uniformly drawn co-schedules (a
 * random permutation cut into groups is a uniform partition). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/study.h"
#include "llcprobe/common.h"
#include "llcprobe/rng.h"
#include "util/cli.h"

struct lookup {
    size_t cap;
    uint64_t *key;
    uint32_t *val;
};

struct bb {
    const struct study *s;
    int dir;   /* +1 best (lowest cost), -1 worst */
    size_t ng; /* groups per co-schedule */
    double lo_s[STUDY_MAX_PROGRAMS], hi_s[STUDY_MAX_PROGRAMS];
    double lo_m[STUDY_MAX_PROGRAMS], hi_m[STUDY_MAX_PROGRAMS];
    uint32_t *order; /* group indices by first member, sorted by cost */
    size_t first[STUDY_MAX_PROGRAMS + 1], rfirst[STUDY_MAX_PROGRAMS + 1];
    uint32_t *rorder;
    uint32_t cur[STUDY_MAX_PROGRAMS];
    struct study_sched inc;
    double inc_cost;
    uint64_t nodes, budget;
    bool stopped;
    /* exhaustive: every leaf */
    uint32_t *all_g;
    double *all_v;
    size_t n_all;
};

/* Cost to minimise: the metric with "lower is better". */
static double cost_of(enum study_metric m, double ws, double smax, double smin, double miss)
{
    switch (m) {
    case STUDY_THROUGHPUT:
        return -ws;
    case STUDY_WORST:
        return smax;
    case STUDY_FAIRNESS:
        return smax / smin;
    default:
        return miss;
    }
}

static double value_of_cost(enum study_metric m, double c)
{
    return m == STUDY_THROUGHPUT ? -c : c;
}

static double group_cost(enum study_metric m, const struct study_group *g)
{
    return cost_of(m, g->ws, g->smax, g->smin, g->miss);
}

double study_value(const struct study *s, const uint32_t *g, size_t ng)
{
    double ws = 0, smax = 0, smin = INFINITY, miss = 0;
    for (size_t i = 0; i < ng; i++) {
        const struct study_group *x = &s->groups[g[i]];
        ws += x->ws;
        smax = fmax(smax, x->smax);
        smin = fmin(smin, x->smin);
        miss += x->miss;
    }
    return value_of_cost(s->metric, cost_of(s->metric, ws, smax, smin, miss));
}

static double sched_cost(const struct study *s, const uint32_t *g, size_t ng)
{
    const double v = study_value(s, g, ng);
    return s->metric == STUDY_THROUGHPUT ? -v : v;
}

/* ---- group lookup by member mask ------------------------------------------ */

static int lookup_build(struct lookup *t, const struct study *s)
{
    t->cap = 16;
    while (t->cap < 2 * s->n_groups)
        t->cap *= 2;
    t->key = calloc(t->cap, sizeof(*t->key));
    t->val = calloc(t->cap, sizeof(*t->val));
    if (!t->key || !t->val)
        return -ENOMEM;
    for (size_t g = 0; g < s->n_groups; g++) {
        size_t h = (size_t)llc_splitmix64(s->groups[g].mask) & (t->cap - 1);
        while (t->key[h])
            h = (h + 1) & (t->cap - 1);
        t->key[h] = s->groups[g].mask;
        t->val[h] = (uint32_t)g;
    }
    return 0;
}

static uint32_t lookup(const struct lookup *t, uint64_t mask)
{
    size_t h = (size_t)llc_splitmix64(mask) & (t->cap - 1);
    while (t->key[h] != mask)
        h = (h + 1) & (t->cap - 1);
    return t->val[h];
}

static void lookup_free(struct lookup *t)
{
    free(t->key);
    free(t->val);
}

/* ---- branch and bound ----------------------------------------------------- */

static const struct study *sort_s;
static int by_cost(const void *a, const void *b)
{
    const double x = group_cost(sort_s->metric, &sort_s->groups[*(const uint32_t *)a]);
    const double y = group_cost(sort_s->metric, &sort_s->groups[*(const uint32_t *)b]);
    return x < y ? -1 : x > y;
}

/* Groups indexed by their smallest member, each list sorted by cost. */
static int bb_init(struct bb *b, const struct study *s)
{
    memset(b, 0, sizeof(*b));
    b->s = s;
    b->ng = s->n / s->k + (s->rem != 0);
    b->order = malloc(s->n_groups * sizeof(uint32_t));
    if (!b->order)
        return -ENOMEM;
    b->rorder = b->order;
    for (size_t i = 0; i < s->n; i++) {
        b->lo_s[i] = b->lo_m[i] = INFINITY;
        b->hi_s[i] = b->hi_m[i] = 0;
    }
    size_t *cnt[2] = {b->first, b->rfirst};
    for (size_t g = 0; g < s->n_groups; g++) {
        const struct study_group *x = &s->groups[g];
        cnt[x->n != s->k][x->m[0] + 1]++;
        for (size_t j = 0; j < x->n; j++) {
            const size_t i = x->m[j];
            b->lo_s[i] = fmin(b->lo_s[i], x->slow[j]);
            b->hi_s[i] = fmax(b->hi_s[i], x->slow[j]);
            b->lo_m[i] = fmin(b->lo_m[i], x->misses[j]);
            b->hi_m[i] = fmax(b->hi_m[i], x->misses[j]);
        }
    }
    for (size_t i = 0; i < s->n; i++) {
        b->first[i + 1] += b->first[i];
        b->rfirst[i + 1] += b->rfirst[i];
    }
    /* The K-groups come first in s->groups, then the remainder's. */
    const size_t nk = b->first[s->n];
    b->rorder = b->order + nk;
    for (size_t g = 0; g < s->n_groups; g++)
        b->order[g] = (uint32_t)g;
    sort_s = s;
    for (size_t i = 0; i < s->n; i++) {
        qsort(b->order + b->first[i], b->first[i + 1] - b->first[i], sizeof(uint32_t), by_cost);
        qsort(b->rorder + b->rfirst[i], b->rfirst[i + 1] - b->rfirst[i], sizeof(uint32_t), by_cost);
    }
    return 0;
}

/* Optimistic cost (in direction dir) of completing the partial co-schedule. */
static double bound(const struct bb *b, uint64_t rem, double ws, double smax, double smin,
                    double miss)
{
    const bool best = b->dir > 0;
    for (uint64_t r = rem; r; r &= r - 1) {
        const int i = __builtin_ctzll(r);
        const double s_opt = best ? b->lo_s[i] : b->hi_s[i], s_pes = best ? b->hi_s[i] : b->lo_s[i];
        ws += 1 / s_opt;
        smax = fmax(smax, s_opt);
        smin = fmin(smin, s_pes);
        miss += best ? b->lo_m[i] : b->hi_m[i];
    }
    return cost_of(b->s->metric, ws, smax, smin, miss);
}

static void leaf(struct bb *b, size_t depth)
{
    const double c = sched_cost(b->s, b->cur, depth);
    if (b->all_v) {
        memcpy(&b->all_g[b->n_all * b->ng], b->cur, b->ng * sizeof(uint32_t));
        b->all_v[b->n_all++] = c;
    }
    if (b->dir * c < b->dir * b->inc_cost) {
        b->inc_cost = c;
        memcpy(b->inc.g, b->cur, depth * sizeof(uint32_t));
        b->inc.ng = depth;
    }
}

static void dfs(struct bb *b, uint64_t rem, bool rem_used, size_t depth, double ws, double smax,
                double smin, double miss)
{
    if (b->stopped || ++b->nodes > b->budget) {
        b->stopped = true;
        return;
    }
    if (!rem) {
        leaf(b, depth);
        return;
    }
    if (!b->all_v) {
        const double bd = bound(b, rem, ws, smax, smin, miss);
        if (b->dir * bd >= b->dir * b->inc_cost - 1e-12 * fabs(b->inc_cost))
            return;
    }
    const struct study *s = b->s;
    const int i = __builtin_ctzll(rem);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && (rem_used || !s->rem))
            break;
        const uint32_t *o = pass ? b->rorder : b->order;
        const size_t lo = pass ? b->rfirst[i] : b->first[i],
                     hi = pass ? b->rfirst[i + 1] : b->first[i + 1];
        for (size_t t = 0; t < hi - lo; t++) {
            const uint32_t g = o[b->dir > 0 ? lo + t : hi - 1 - t];
            const struct study_group *x = &s->groups[g];
            if (x->mask & ~rem)
                continue;
            b->cur[depth] = g;
            dfs(b, rem & ~x->mask, rem_used || pass, depth + 1, ws + x->ws, fmax(smax, x->smax),
                fmin(smin, x->smin), miss + x->miss);
            if (b->stopped)
                return;
        }
    }
}

static void bb_run(struct bb *b, int dir, uint64_t budget)
{
    b->dir = dir;
    b->budget = budget;
    b->nodes = 0;
    b->stopped = false;
    const uint64_t all = b->s->n == 64 ? ~0ull : (1ull << b->s->n) - 1;
    dfs(b, all, false, 0, 0, 0, INFINITY, 0);
}

/* ---- incumbents: random co-schedules and local search --------------------- */

static void random_sched(const struct study *s, const struct lookup *t, struct llc_xoshiro *rng,
                         uint32_t *g, size_t *ng)
{
    uint8_t perm[STUDY_MAX_PROGRAMS];
    for (size_t i = 0; i < s->n; i++)
        perm[i] = (uint8_t)i;
    for (size_t i = s->n - 1; i > 0; i--) {
        const size_t j = (size_t)llc_xoshiro_below(rng, i + 1);
        const uint8_t x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    *ng = 0;
    for (size_t i = 0; i < s->n; i += s->k) {
        uint64_t m = 0;
        for (size_t j = i; j < i + s->k && j < s->n; j++)
            m |= 1ull << perm[j];
        g[(*ng)++] = lookup(t, m);
    }
}

/* Swaps one program between two groups while the cost improves (dir). */
static void local_search(const struct study *s, const struct lookup *t, int dir, uint32_t *g,
                         size_t ng)
{
    double c = sched_cost(s, g, ng);
    bool better = true;
    while (better) {
        better = false;
        for (size_t a = 0; a < ng; a++)
            for (size_t b = a + 1; b < ng; b++) {
                const struct study_group *x = &s->groups[g[a]], *y = &s->groups[g[b]];
                for (size_t i = 0; i < x->n; i++)
                    for (size_t j = 0; j < y->n; j++) {
                        const uint64_t pi = 1ull << x->m[i], pj = 1ull << y->m[j];
                        const uint32_t ga = g[a], gb = g[b];
                        g[a] = lookup(t, (x->mask & ~pi) | pj);
                        g[b] = lookup(t, (y->mask & ~pj) | pi);
                        const double c2 = sched_cost(s, g, ng);
                        if (dir * c2 < dir * c - 1e-12 * fabs(c)) {
                            c = c2;
                            better = true;
                            x = &s->groups[g[a]];
                            y = &s->groups[g[b]];
                        } else {
                            g[a] = ga;
                            g[b] = gb;
                        }
                    }
            }
    }
}

static void incumbent(struct bb *b, const struct lookup *t, int dir, uint64_t seed)
{
    struct llc_xoshiro rng;
    llc_xoshiro_seed(&rng, seed);
    b->inc_cost = dir * INFINITY;
    for (int r = 0; r < 32; r++) {
        uint32_t g[STUDY_MAX_PROGRAMS];
        size_t ng;
        random_sched(b->s, t, &rng, g, &ng);
        local_search(b->s, t, dir, g, ng);
        const double c = sched_cost(b->s, g, ng);
        if (dir * c < dir * b->inc_cost) {
            b->inc_cost = c;
            memcpy(b->inc.g, g, ng * sizeof(uint32_t));
            b->inc.ng = ng;
        }
    }
}

/* ---- ranking ------------------------------------------------------------ */

static const double *rank_v;
static int by_value(const void *a, const void *b)
{
    const double x = rank_v[*(const size_t *)a], y = rank_v[*(const size_t *)b];
    return x < y ? -1 : x > y;
}

static void set_sched(const struct study *s, struct study_sched *d, const uint32_t *g, size_t ng)
{
    memcpy(d->g, g, ng * sizeof(uint32_t));
    d->ng = ng;
    d->value = study_value(s, g, ng);
}

/* Ranks n co-schedules (g: ng each, v: cost) into s->top / median / worst. */
static int rank(struct study *s, const uint32_t *g, const double *v, size_t n, size_t ng,
                bool keep_worst)
{
    size_t *ix = malloc(n * sizeof(size_t));
    if (!ix)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        ix[i] = i;
    rank_v = v;
    qsort(ix, n, sizeof(size_t), by_value);
    for (size_t i = 0; i < n && s->n_top < STUDY_TOP; i++)
        set_sched(s, &s->top[s->n_top++], &g[ix[i] * ng], ng);
    set_sched(s, &s->median, &g[ix[n / 2] * ng], ng);
    if (keep_worst)
        set_sched(s, &s->worst, &g[ix[n - 1] * ng], ng);
    free(ix);
    return 0;
}

static double gap_pct(double value, double bnd)
{
    return value != 0 ? 100 * fabs(value - bnd) / fabs(value) : 0;
}

int study_optimise(struct study *s, uint64_t node_budget, char *err, size_t errlen)
{
    struct bb b;
    struct lookup t = {0};
    const double t0 = llc_now();
    int rc = bb_init(&b, s);
    if (rc == 0)
        rc = lookup_build(&t, s);
    s->top = calloc(STUDY_TOP, sizeof(*s->top));
    if (rc < 0 || !s->top) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    /* N! / ((K!)^G G! r!) co-schedules, in logs */
    const size_t G = s->n / s->k;
    double lc = lgamma((double)s->n + 1) - (double)G * lgamma((double)s->k + 1) -
                lgamma((double)G + 1) - lgamma((double)s->rem + 1);
    s->search.n_schedules = round(exp(lc));
    s->search.seed = 1;
    if (s->search.n_schedules <= STUDY_EXACT_LIMIT) {
        s->search.method = "exhaustive";
        const size_t n = (size_t)s->search.n_schedules;
        b.all_g = malloc(n * b.ng * sizeof(uint32_t));
        b.all_v = malloc(n * sizeof(double));
        if (!b.all_g || !b.all_v) {
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory for %zu co-schedules", n);
            goto out;
        }
        b.inc_cost = INFINITY;
        bb_run(&b, +1, UINT64_MAX);
        rc = rank(s, b.all_g, b.all_v, b.n_all, b.ng, true);
        s->search.evaluated = (double)b.n_all;
        s->search.best_exact = s->search.worst_exact = true;
        s->search.best_bound = s->top[0].value;
        s->search.worst_bound = s->worst.value;
        s->median_rank = 0.5;
        goto out;
    }
    s->search.method = "branch-and-bound";
    for (int dir = +1; dir >= -1; dir -= 2) {
        incumbent(&b, &t, dir, s->search.seed + (dir < 0));
        const uint64_t all = s->n == 64 ? ~0ull : (1ull << s->n) - 1;
        b.dir = dir;
        const double rb = bound(&b, all, 0, 0, INFINITY, 0);
        bb_run(&b, dir, node_budget);
        s->search.evaluated += (double)b.nodes;
        const double value = value_of_cost(s->metric, b.inc_cost);
        const double bnd = b.stopped ? value_of_cost(s->metric, rb) : value;
        if (dir > 0) {
            s->search.best_exact = !b.stopped;
            s->search.best_bound = bnd;
            s->search.gap_pct = gap_pct(value, bnd);
            set_sched(s, &s->top[0], b.inc.g, b.inc.ng);
            s->n_top = 1;
        } else {
            s->search.worst_exact = !b.stopped;
            s->search.worst_bound = bnd;
            s->search.worst_gap_pct = gap_pct(value, bnd);
            set_sched(s, &s->worst, b.inc.g, b.inc.ng);
        }
    }
    /* The median, and runners-up, from uniformly drawn co-schedules. */
    {
        const size_t n = STUDY_SAMPLES;
        uint32_t *g = malloc(n * b.ng * sizeof(uint32_t));
        double *v = malloc(n * sizeof(double));
        struct llc_xoshiro rng;
        llc_xoshiro_seed(&rng, s->search.seed + 2);
        if (!g || !v) {
            free(g);
            free(v);
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            size_t ng;
            random_sched(s, &t, &rng, &g[i * b.ng], &ng);
            v[i] = sched_cost(s, &g[i * b.ng], ng);
        }
        rc = rank(s, g, v, n, b.ng, false);
        s->search.median_sampled = true;
        s->search.samples = n;
        free(g);
        free(v);
    }
out:
    s->search_s = llc_now() - t0;
    free(b.order);
    free(b.all_g);
    free(b.all_v);
    lookup_free(&t);
    return rc;
}
