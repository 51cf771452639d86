/* Shared-cache equilibria (docs/METHODS.md §12.2 LRU characteristic time, docs/METHODS.md §12.3
 * random replacement), the probe anchor and unprofiled bound (docs/METHODS.md §12.6). Phase tuples
 * with CPI coupling and set skew are in contention_tuple.c. */
#include "llcprobe/contention.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "llcprobe/common.h"
#include "contention_internal.h"

static const char *const policy_names[] = {"lru", "random", "plru", "srrip", "brrip", "drrip"};

const char *llc_contention_policy_name(enum llc_contention_policy p)
{
    return (size_t)p < LLC_ARRAY_LEN(policy_names) ? policy_names[p] : "?";
}

int llc_contention_policy_parse(const char *s)
{
    for (size_t i = 0; s && i < LLC_ARRAY_LEN(policy_names); i++)
        if (strcmp(s, policy_names[i]) == 0)
            return (int)i;
    return -EINVAL;
}

enum llc_contention_policy llc_contention_base_policy(enum llc_contention_policy p)
{
    return p == LLC_CONTENTION_RANDOM ? LLC_CONTENTION_RANDOM : LLC_CONTENTION_LRU;
}

double llc_contention_rrip_protect(enum llc_contention_policy p, bool exclusive)
{
    if (exclusive)
        return 0;
    /* DRRIP follows SRRIP until its set dueling picks BRRIP, whose thrash
     * protection this does not describe; in inclusive LLCs SRRIP's
     * protection is still nearer than none (docs/RESULTS.md §10.20) */
    return p == LLC_CONTENTION_SRRIP || p == LLC_CONTENTION_DRRIP ? LLC_CONTENTION_RRIP_PROTECT : 0;
}

void llc_contention_config_default(struct llc_contention_config *cfg)
{
    *cfg = (struct llc_contention_config){.capacity = 0,
                                          .ways = 16,
                                          .policy = LLC_CONTENTION_LRU,
                                          .coupling = true,
                                          .anchor = true,
                                          .skew = true,
                                          .skew_joint = true,
                                          .first_touch_tol = 1e-3};
}

/* fmin(1, x) inline (libm's is a call in the hot loops): the same value,
 * NaN included (1). */
static inline double min1(double x)
{
    return x < 1 ? x : 1;
}

/* fmax inline, for the same reason: the same value, NaN included (the
 * other argument). */
static inline double max2(double a, double b)
{
    return a > b || b != b ? a : b;
}

/* ---- footprints ---------------------------------------------------------- */

/* F at d, including d = +inf (the table's last value when nothing dangles). */
static double footprint(const struct llc_statmodel_model *m, double d)
{
    if (isinf(d)) {
        const double *e, *q, *f;
        size_t ne;
        double slope;
        llc_statmodel_footprint_table(m, &e, &q, &f, &ne, &slope);
        return slope > 0 ? INFINITY : f[ne - 1];
    }
    return llc_statmodel_footprint(m, d);
}

/* ---- cold start (docs/METHODS.md §12.2) ------------------------------------------------ */

/* c = n_inf / N_s: the share of the samples never reused (1 with none). */
static double dangling_share(const struct llc_statmodel_model *m)
{
    const double tot = llc_statmodel_model_total(m);
    return tot > 0 ? llc_statmodel_model_dangling(m) / tot : 1;
}

/* c = n_inf / N_s; q(d) = (Q(d) - c) / (1 - c) is the tail of the finite
 * reuse distances and S(R) = sum_{n < R} q(n) = (F(R) - c R) / (1 - c) the
 * first touches of a warm-up that lasts R references; the run made f R in
 * all (f = firsts, or c). */
double llc_contention_steady_share(const struct llc_statmodel_model *m, double firsts,
                                   double references)
{
    const double c = dangling_share(m);
    if (!(c < 1))
        return 1;
    const double f = firsts > 0 ? fmin(firsts, 1) : c;
    const double r = references;
    if (!(r > 0) || !isfinite(r))
        return f;
    const double sum = fmin(r, (llc_statmodel_footprint(m, r) - c * r) / (1 - c));
    return r > sum ? fmax(0, (f * r - sum) / (r - sum)) : 0;
}

/* The age where `before` (true below it, false from it on) turns: [*lo,
 * *hi) brackets it, *hi doubling from its start, then bisected to 1e-9;
 * false when it does not turn below 1e18. */
static bool age_turn(bool (*before)(const void *ctx, double age), const void *ctx, double *lo,
                     double *hi)
{
    while (before(ctx, *hi)) {
        *lo = *hi;
        *hi *= 2;
        if (!(*hi < 1e18))
            return false;
    }
    for (int it = 0; it < 200 && *hi - *lo > 1e-9 * *hi; it++) {
        const double mid = 0.5 * (*lo + *hi);
        if (before(ctx, mid))
            *lo = mid;
        else
            *hi = mid;
    }
    return true;
}

/* First touches of a cold-start phase of r references from age a. */
static double cold_firsts(const struct llc_statmodel_model *m, double r, double a, double c,
                          double cs, double k)
{
    return cs * r + k * (footprint(m, a + r) - footprint(m, a) - c * r);
}

struct cold_age_ctx {
    const struct llc_statmodel_model *m;
    double r, c, cs, k, first_touches;
};

static bool above_firsts(const void *ctx, double a)
{
    const struct cold_age_ctx *x = ctx;
    return cold_firsts(x->m, x->r, a, x->c, x->cs, x->k) > x->first_touches;
}

double llc_contention_cold_age(const struct llc_statmodel_model *m, double firsts,
                               double references, double run, double first_touches)
{
    const double c = dangling_share(m);
    const double r = run;
    if (!(c < 1) || !(r > 0) || !isfinite(r) || !(references > 0) || !(first_touches >= 0))
        return 0;
    const double cs = llc_contention_steady_share(m, firsts, references), k = (1 - cs) / (1 - c);
    if (first_touches >= cold_firsts(m, r, 0, c, cs, k))
        return 0;
    if (first_touches <= cs * r + 1e-9 * r)
        return INFINITY;
    /* cold_firsts falls with a (F concave) */
    const struct cold_age_ctx x = {m, r, c, cs, k, first_touches};
    double lo = 0, hi = r;
    return age_turn(above_firsts, &x, &lo, &hi) ? 0.5 * (lo + hi) : INFINITY;
}

/* The party's own distance d limited by its age (references since its
 * start): a window cannot reach back before the program began. */
static double aged(const struct llc_contention_party *p, double d)
{
    return p->cold && p->age > 0 && d > p->age ? p->age : d;
}

/* The cold-start transform of a tail or footprint value at d: Q_t = c_s +
 * k (Q - c), F_t = c_s d + k (F - c d), k = (1 - c_s) / (1 - c). */
static void cold_split(const struct llc_contention_party *p, double *c, double *k)
{
    *c = dangling_share(p->model);
    *k = *c < 1 ? (1 - p->steady) / (1 - *c) : 0;
}

/* Miss ratio of the party's references at own distance d, the private
 * cache's shift aside. */
static double raw_tail(const struct llc_contention_party *p, double d)
{
    if (!p->cold)
        return llc_statmodel_tail(p->model, d);
    double c, k;
    cold_split(p, &c, &k);
    if (!(c < 1))
        return 1;
    return fmin(1, p->steady + k * (llc_statmodel_tail(p->model, aged(p, d)) - c));
}

/* Distinct lines in a window of d own references (unweighted, uncapped),
 * the private cache's shift aside. */
static double raw_footprint(const struct llc_contention_party *p, double d)
{
    if (!p->cold)
        return footprint(p->model, d);
    double c, k;
    cold_split(p, &c, &k);
    const double x = aged(p, d);
    if (!(c < 1))
        return x;
    if (isinf(x)) {
        /* past the last edge F grows by c per reference: F - c d is flat */
        const double *e, *q, *f;
        size_t ne;
        double slope;
        llc_statmodel_footprint_table(p->model, &e, &q, &f, &ne, &slope);
        return p->steady > 0 ? INFINITY : k * (f[ne - 1] - c * e[ne - 1]);
    }
    return p->steady * x + k * (footprint(p->model, x) - c * x);
}

/* The LLC's view of a party in an exclusive hierarchy (docs/METHODS.md
 * §12.2): a line reaches the LLC `shift` own references after its last
 * touch, when the private cache evicts it, so a reuse at own distance d
 * spent d - shift there, and of the lines touched in the last shift + d
 * the first F(shift) are still in the private cache. shift 0: the
 * program's own curves; INFINITY: it all fits in the private cache. */
static double party_tail(const struct llc_contention_party *p, double d)
{
    return raw_tail(p, p->shift > 0 ? d + p->shift : d);
}

/* A raw footprint f at most the party's lines cap. */
static double capped(const struct llc_contention_party *p, double f)
{
    return p->lines_max > 0 && f > p->lines_max ? p->lines_max : f;
}

/* Of a shifted party's raw footprint f (at d + shift), the lines not in its
 * private cache. */
static double past_private(const struct llc_contention_party *p, double f)
{
    f = capped(p, f);
    return f > p->shift_lines ? f - p->shift_lines : 0;
}

/* Lines of the party in the LLC (unweighted; capped at its lines when
 * shifted, the caller's cap then a no-op). */
static double party_footprint(const struct llc_contention_party *p, double d)
{
    if (!(p->shift > 0))
        return raw_footprint(p, d);
    if (isinf(p->shift))
        return 0;
    return past_private(p, raw_footprint(p, d + p->shift));
}

/* The own distance at which the party's raw footprint reaches `lines`
 * (INFINITY if it never does). */
static double own_distance_of(const struct llc_contention_party *p, double lines)
{
    const double top = raw_footprint(p, INFINITY);
    if (!(top > lines) || (p->lines_max > 0 && !(p->lines_max > lines)))
        return INFINITY;
    double lo = 0, hi = lines; /* F(d) <= d */
    while (raw_footprint(p, hi) < lines) {
        lo = hi;
        hi *= 2;
        if (!(hi < 1e300))
            return INFINITY;
    }
    for (int it = 0; it < 100 && hi - lo > 1e-9 * hi; it++) {
        const double mid = 0.5 * (lo + hi);
        if (raw_footprint(p, mid) < lines)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

void sm_contention_party_reshift(struct llc_contention_party *p)
{
    p->shift_lines = 0;
    if (p->model && p->shift > 0 && isfinite(p->shift))
        p->shift_lines = capped(p, raw_footprint(p, p->shift));
}

void llc_contention_party_private(struct llc_contention_party *p, double lines)
{
    p->shift = p->shift_lines = 0;
    if (!(lines > 0) || !p->model)
        return;
    p->shift = own_distance_of(p, lines);
    sm_contention_party_reshift(p);
}

int sm_contention_age_class(const struct llc_contention_phase *ph, double age, double capacity)
{
    if (!ph->model || !(ph->references > 0))
        return -1;
    const double *e, *q, *f;
    size_t ne;
    double slope;
    llc_statmodel_footprint_table(ph->model, &e, &q, &f, &ne, &slope);
    const double cs = llc_contention_steady_share(ph->model, ph->firsts, ph->references);
    const struct llc_contention_party p = {.model = ph->model, .cold = true, .steady = cs};
    const double touched = party_footprint(&p, age);
    /* Warm: past 4 C lines no equilibrium looks (P(Pois(4 W) < W) < 1e-9
     * for W >= 8, and G reaches C long before in the fully associative
     * one), or past its longest finite reuse with no new data or all its
     * lines touched: the age no longer cuts anything. */
    if (touched >= 4 * capacity ||
        (age >= e[ne - 1] && (!(cs > 0) || (ph->lines > 0 && touched >= ph->lines))))
        return -1;
    const double k = floor(2 * log2(1 + fmax(age, 0)));
    return k < 1e6 ? (int)k : -1;
}

double sm_contention_first_touch_error(const struct llc_contention_phase *ph, double a, double r)
{
    if (!ph->model || !(ph->references > 0) || !(r > 0))
        return 0;
    const double cs = llc_contention_steady_share(ph->model, ph->firsts, ph->references);
    struct llc_contention_party p = {.model = ph->model, .cold = true, .steady = cs};
    const double mean = (raw_footprint(&p, a + r) - raw_footprint(&p, a)) / r;
    p.age = a + 0.5 * r;
    return mean - raw_tail(&p, INFINITY);
}

struct young_ctx {
    const struct llc_contention_phase *ph;
    double capacity;
};

static bool still_young(const void *ctx, double age)
{
    const struct young_ctx *x = ctx;
    return sm_contention_age_class(x->ph, age, x->capacity) >= 0;
}

double sm_contention_warm_age(const struct llc_contention_phase *ph, double capacity)
{
    if (sm_contention_age_class(ph, 0, capacity) < 0)
        return 0;
    /* the class is -1 from one age on (the tests grow with the age) */
    const struct young_ctx x = {ph, capacity};
    double lo = 0, hi = 1;
    return age_turn(still_young, &x, &lo, &hi) ? hi : INFINITY;
}

/* Classes per octave of age at a level. */
static double classes_per_octave(unsigned level)
{
    return 2.0 * (double)(1u << level);
}

/* The age at fraction x (0 = start, 1 = end) of class `key`'s span in
 * log(1 + age). */
static double class_age_at(int key, double x)
{
    const double per = classes_per_octave((unsigned)(key / SM_CONTENTION_CLASS_STRIDE));
    return exp2((key % SM_CONTENTION_CLASS_STRIDE + x) / per) - 1;
}

int sm_contention_class_key(double age, unsigned level)
{
    const double k = floor(classes_per_octave(level) * log2(1 + fmax(age, 0)));
    return k < SM_CONTENTION_CLASS_STRIDE ? (int)(level * SM_CONTENTION_CLASS_STRIDE + k) : -1;
}

double sm_contention_class_end(int key)
{
    return class_age_at(key, 1);
}

double sm_contention_class_mid(int key)
{
    return class_age_at(key, 0.5);
}

double sm_contention_priced_age(int key, double warm_age)
{
    const double a = sm_contention_class_mid(key);
    if (!(a >= warm_age))
        return a;
    /* the class runs past the phase's warm age: its young part is
     * [start, warm_age), and its middle age would price it warm */
    const double lo = fmax(0, class_age_at(key, 0));
    return lo < warm_age ? 0.5 * (lo + warm_age) : lo;
}

/* The most lines the party can hold: its cap, and with a cold start the
 * lines it has touched so far (unweighted; INFINITY = no bound). */
static double party_lines(const struct llc_contention_party *p)
{
    double l = p->lines_max > 0 ? p->lines_max : INFINITY;
    if (p->model && p->cold && p->age > 0)
        l = fmin(l, raw_footprint(p, p->age));
    if (p->shift > 0) /* what the private cache does not hold */
        l = isinf(p->shift) ? 0 : fmax(0, l - p->shift_lines);
    return l;
}

/* The party's lines touched in T seconds (weighted). */
static double party_fp(const struct llc_contention_party *p, double t)
{
    if (!(p->weight > 0))
        return 0;
    if (!p->model)
        return p->weight * p->lambda * t;
    if (!(p->rate > 0))
        return 0;
    const double f = party_footprint(p, p->gamma * p->rate * t);
    return p->weight * (p->lines_max > 0 && f > p->lines_max ? p->lines_max : f);
}

static double pressure(const struct llc_contention_party *p, size_t n, double t)
{
    double g = 0;
    for (size_t i = 0; i < n; i++)
        g += party_fp(&p[i], t);
    return g;
}

/* Party p's footprint still grows at t (fpu: its uncapped raw footprint
 * at its own distance there plus its shift, if known, else NULL; e_last
 * and slope: its table's last edge and slope past it). */
static bool party_grows(const struct llc_contention_party *p, double t, const double *fpu,
                        double e_last, double slope)
{
    if (!(p->weight > 0))
        return false;
    if (!p->model)
        return p->lambda > 0;
    if (isinf(p->shift))
        return false; /* all in the private cache */
    const double d = p->gamma * p->rate * t + (p->shift > 0 ? p->shift : 0);
    if (p->lines_max > 0 && p->rate > 0 && (fpu ? *fpu : raw_footprint(p, d)) >= p->lines_max)
        return false; /* at its cap */
    if (p->cold && p->age > 0 && d >= p->age)
        return false; /* all it has touched so far */
    const bool grows = p->cold ? p->steady > 0 : slope > 0;
    return p->rate > 0 && (grows || d < e_last);
}

/* The lines its other phases add to party p's reuses still change past
 * own distance rate t (a phase at its cap keeps meeting more of them). */
static bool excess_grows(const struct llc_contention_party *p, double t)
{
    const struct llc_contention_excess *e = p->excess;
    return e && e->n > 0 && p->model && p->rate > 0 && p->weight > 0 &&
           p->gamma * p->rate * t < e->x[e->n - 1];
}

/* Every party's footprint has stopped growing at t (G(t) = G(inf)). */
static bool saturated(const struct llc_contention_party *p, size_t n, double t)
{
    for (size_t i = 0; i < n; i++) {
        const double *e = NULL, *q, *f;
        size_t ne = 1;
        double slope = 0;
        if (p[i].model)
            llc_statmodel_footprint_table(p[i].model, &e, &q, &f, &ne, &slope);
        if (party_grows(&p[i], t, NULL, e ? e[ne - 1] : 0, slope))
            return false;
    }
    return true;
}

/* ---- docs/METHODS.md §12.2 LRU --------------------------------------------------------------- */

/* Root of a non-decreasing fn on [lo, hi] with fn(lo) < 0 <= fn(hi), by
 * regula falsi with the Illinois modification (superlinear on these
 * piecewise-linear, concave curves; the bracket always shrinks). Stops
 * when hi / lo < 1 + rel (positive x) or hi - lo < rel * hi, or when
 * |fn| <= ftol. */
static double illinois(double (*fn)(double, const void *), const void *ctx, double lo, double hi,
                       double flo, double fhi, double rel, double ftol)
{
    int side = 0;
    for (int it = 0; it < 200 && hi - lo > rel * fabs(hi); it++) {
        double x = (lo * fhi - hi * flo) / (fhi - flo);
        if (!(x > lo && x < hi))
            x = 0.5 * (lo + hi);
        const double fx = fn(x, ctx);
        if (fabs(fx) <= ftol)
            return x;
        if (fx < 0) {
            lo = x;
            flo = fx;
            if (side == -1)
                fhi *= 0.5;
            side = -1;
        } else {
            hi = x;
            fhi = fx;
            if (side == 1)
                flo *= 0.5;
            side = 1;
        }
    }
    return 0.5 * (lo + hi);
}

struct lru {
    const struct llc_contention_party *p;
    size_t n;
    double c;
};

/* G(e^x) - C: the equation of docs/METHODS.md §12.2 on ln T. */
static double lru_eq(double x, const void *vctx)
{
    const struct lru *z = vctx;
    return pressure(z->p, z->n, exp(x)) - z->c;
}

static double lru_tstar(const struct llc_contention_party *p, size_t n, double c)
{
    /* F(d) <= d, so G(T) <= T sum_j (gamma_j a_j w_j + lambda_j w_j): T* is
     * at least C over that sum; step up by 4x to bracket it. */
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i].weight > 0)
            sum += p[i].weight *
                   (p[i].model ? (p[i].rate > 0 ? p[i].gamma * p[i].rate : 0) : p[i].lambda);
    if (!(sum > 0))
        return INFINITY;
    double lo = c / sum, hi = lo, ghi;
    for (int k = 0; (ghi = pressure(p, n, hi)) < c; k++) {
        if (saturated(p, n, hi) || k > 600)
            return INFINITY;
        lo = hi;
        hi *= 4;
    }
    if (hi == lo)
        return lo; /* G(C / sum) = C exactly: every reference so far a new line */
    const struct lru z = {.p = p, .n = n, .c = c};
    const double x =
        illinois(lru_eq, &z, log(lo), log(hi), pressure(p, n, lo) - c, ghi - c, 1e-12, 1e-10 * c);
    return exp(x);
}

static void lru_shares(const struct llc_contention_party *p, size_t n, double t,
                       struct llc_contention_share *out)
{
    for (size_t i = 0; i < n; i++) {
        struct llc_contention_share *s = &out[i];
        s->cpi = NAN;
        s->occupancy = party_fp(&p[i], t);
        if (!p[i].model) {
            s->rate = p[i].lambda;
            s->miss_ratio = NAN;
            s->miss_rate = p[i].lambda;
            continue;
        }
        s->rate = p[i].rate;
        s->miss_ratio = party_tail(&p[i], p[i].gamma * p[i].rate * t);
        s->miss_rate = p[i].rate * s->miss_ratio;
    }
}

/* ---- LRU with set associativity (docs/METHODS.md §12.2) ------------------------------- */

/* 1 / j, j = 0..64 (0 for j = 0): count_hit's terms without a division. */
static const double inv_int[65] = {0,
                                   1,
                                   0.5,
                                   0.33333333333333331,
                                   0.25,
                                   0.20000000000000001,
                                   0.16666666666666666,
                                   0.14285714285714285,
                                   0.125,
                                   0.1111111111111111,
                                   0.10000000000000001,
                                   0.090909090909090912,
                                   0.083333333333333329,
                                   0.076923076923076927,
                                   0.071428571428571425,
                                   0.066666666666666666,
                                   0.0625,
                                   0.058823529411764705,
                                   0.055555555555555552,
                                   0.052631578947368418,
                                   0.050000000000000003,
                                   0.047619047619047616,
                                   0.045454545454545456,
                                   0.043478260869565216,
                                   0.041666666666666664,
                                   0.040000000000000001,
                                   0.038461538461538464,
                                   0.037037037037037035,
                                   0.035714285714285712,
                                   0.034482758620689655,
                                   0.033333333333333333,
                                   0.032258064516129031,
                                   0.03125,
                                   0.030303030303030304,
                                   0.029411764705882353,
                                   0.028571428571428571,
                                   0.027777777777777776,
                                   0.027027027027027029,
                                   0.026315789473684209,
                                   0.02564102564102564,
                                   0.025000000000000001,
                                   0.024390243902439025,
                                   0.023809523809523808,
                                   0.023255813953488372,
                                   0.022727272727272728,
                                   0.022222222222222223,
                                   0.021739130434782608,
                                   0.021276595744680851,
                                   0.020833333333333332,
                                   0.020408163265306121,
                                   0.02,
                                   0.019607843137254902,
                                   0.019230769230769232,
                                   0.018867924528301886,
                                   0.018518518518518517,
                                   0.018181818181818181,
                                   0.017857142857142856,
                                   0.017543859649122806,
                                   0.017241379310344827,
                                   0.016949152542372881,
                                   0.016666666666666666,
                                   0.016393442622950821,
                                   0.016129032258064516,
                                   0.015873015873015872,
                                   0.015625};

/* P(Bin(n, p) <= k) for an integer n, in logs (where q^n underflows). */
static double binom_cdf_log(double n, double p, unsigned k)
{
    if (!(n > k))
        return 1;
    const double lr = log(p) - log1p(-p);
    double lt = n * log1p(-p), s = exp(lt);
    for (unsigned j = 1; j <= k; j++) {
        lt += log((n - j + 1) / j) + lr;
        s += exp(lt);
    }
    return min1(s);
}

/* P(X < w) for a count of mean mu and variance var: Poisson when var >= mu
 * (from table pt, NULL: exact), else the binomial of that mean and variance
 * (n = mu / p, p = 1 - var / mu), linear between the integers m, m + 1
 * around n. Both binomials' terms from q^m and q^(m+1) by products (w <=
 * 64); where q^m is below e^-700, in logs (then n (1 - q) >= 350 if q >=
 * 1/2: the sum is below 1e-100, but exact costs little there). */
static double count_hit(double mu, double var, unsigned w, const struct sm_pois_table *pt)
{
    if (!(var < mu * (1 - 1e-9)))
        return sm_pois_hit_tab(pt, mu, w);
    if (!(mu > 0))
        return 1;
    const double p = 1 - max2(var, 0) / mu, n = mu / p, m = floor(n), f = n - m;
    if (!(m + 1 > w - 1))
        return 1;
    if (!(p < 1))
        return m > w - 1 ? 0 : 1 - f; /* every line touched: n lines exactly */
    const unsigned k = w - 1;
    const double lq = log1p(-p), r = p / (1 - p);
    if (!(m * lq > -700) || k > 64) {
        const double lo = binom_cdf_log(m, p, k);
        return lo + f * (binom_cdf_log(m + 1, p, k) - lo);
    }
    double a = exp(m * lq), b = a * (1 - p), sa = a, sb = b;
    for (unsigned j = 1; j <= k; j++) {
        const double c = inv_int[j] * r;
        a *= (m - j + 1) * c; /* m >= w - 1 = k here: no factor is 0 */
        b *= (m - j + 2) * c;
        sa += a;
        sb += b;
    }
    sa = min1(sa);
    return f > 0 ? sa + f * (min1(sb) - sa) : sa;
}

/* A party's tables for the grid below: its distances only grow along it,
 * so the bucket is found by walking on from the last one, and F and Q are
 * the same interpolation as llc_statmodel_footprint / _tail (bitwise).
 * i: the shifted distances' bucket; ir: the unshifted ones' (a party that
 * counts what entered its LLC, llc_contention_party.entered). */
struct cursor {
    const double *e, *q, *f;
    size_t ne, i, ir;
    double slope, c, k;
};

static void cursor_init(const struct llc_contention_party *p, struct cursor *u)
{
    u->i = u->ir = 0;
    u->c = u->k = u->slope = 0;
    if (!p->model)
        return;
    llc_statmodel_footprint_table(p->model, &u->e, &u->q, &u->f, &u->ne, &u->slope);
    if (p->cold)
        cold_split(p, &u->c, &u->k);
}

/* The table's F and Q at x > 0 (finite), walking on from bucket i;
 * returns x's bucket (inline: it is the grid's innermost step). */
static inline __attribute__((always_inline)) size_t cursor_walk(const struct cursor *u, size_t i,
                                                                double x, double *fx, double *qx)
{
    /* the last edge at or below x: the tables' edges are the histogram's
     * bucket bounds, so it is x's bucket (checked: a table built otherwise
     * takes the search below, which finds the same edge) */
    const size_t b = x < u->e[u->ne - 1] ? llc_statmodel_bucket_of((uint64_t)x) : u->ne;
    if (b + 1 < u->ne && u->e[b] <= x && x < u->e[b + 1])
        i = b;
    else if (u->e[i] > x)
        i = 0;
    /* else gallop from the last bucket (steps 1, 2, 4, ...), then bisect
     * the step that overshot */
    if (i + 1 < u->ne && u->e[i + 1] <= x) {
        size_t step = 1, hi = i + 1;
        while (hi < u->ne && u->e[hi] <= x) {
            i = hi;
            step *= 2;
            hi = i + step;
        }
        if (hi > u->ne)
            hi = u->ne;
        while (hi - i > 1) {
            const size_t mid = i + (hi - i) / 2;
            if (u->e[mid] <= x)
                i = mid;
            else
                hi = mid;
        }
    }
    if (i + 1 >= u->ne) {
        *fx = u->f[u->ne - 1] + (x - u->e[u->ne - 1]) * u->slope;
        *qx = u->q[u->ne - 1];
    } else {
        const double t = (x - u->e[i]) / (u->e[i + 1] - u->e[i]);
        *fx = u->f[i] + t * (u->f[i + 1] - u->f[i]);
        *qx = u->q[i] + t * (u->q[i + 1] - u->q[i]);
    }
    return i;
}

/* A party that counts what entered its LLC: its whole footprint at own
 * distance d (capped), as capped(raw_footprint) gives it. */
static double cursor_entered(const struct llc_contention_party *p, struct cursor *u, double d)
{
    const double x = aged(p, d);
    if (!(x > 0) || !isfinite(x) || (p->cold && !(u->c < 1)))
        return capped(p, raw_footprint(p, d));
    double f, q;
    u->ir = cursor_walk(u, u->ir, x, &f, &q);
    return capped(p, p->cold ? p->steady * x + u->k * (f - u->c * x) : f);
}

/* The party's uncapped footprint and tail at own distance d, as
 * party_footprint and party_tail give them (entered: the whole footprint,
 * capped), and *raw its raw footprint at d plus its shift (uncapped; what
 * party_grows checks against its cap). Inline: the grid's step (GCC stops
 * inlining it once it has two callers, 10% of a study). */
static inline __attribute__((always_inline)) void cursor_eval(const struct llc_contention_party *p,
                                                              struct cursor *u, double d,
                                                              double *fp, double *tail, double *raw)
{
    const bool entered = p->entered && p->shift > 0 && isfinite(p->shift);
    const double ds = p->shift > 0 ? d + p->shift : d, x = aged(p, ds);
    if (!(x > 0) || !isfinite(x) || isinf(p->shift) || (p->cold && !(u->c < 1))) {
        *fp = entered ? cursor_entered(p, u, d) : party_footprint(p, d);
        *tail = party_tail(p, d);
        *raw = raw_footprint(p, ds);
        return;
    }
    double f, q;
    u->i = cursor_walk(u, u->i, x, &f, &q);
    *fp = *raw = p->cold ? p->steady * x + u->k * (f - u->c * x) : f;
    *tail = p->cold ? min1(p->steady + u->k * (q - u->c)) : q;
    if (entered) /* every line the wait saw enter, not those left at its end */
        *fp = cursor_entered(p, u, d);
    else if (p->shift > 0)
        *fp = past_private(p, *fp);
}

/* A reuse's hit probability with the lines x (per set) its program's
 * other phases add, mean over every span: with a share c < 1 of the
 * spans meeting them (own distances) the others hit as without them
 * (base), those meet x / c each; c >= 1: all meet x. */
static double excess_hit(double base, double c, double mean, double var, double x, unsigned ways,
                         const struct sm_pois_table *table)
{
    if (c < 1 && c > 0)
        return (1 - c) * base +
               c * count_hit(max2(0, mean + x / c), max2(0, var + x / c), ways, table);
    return count_hit(max2(0, mean + x), max2(0, var + x), ways, table);
}

/* The hit probability of a reuse once G is flat at g (e of it laid out
 * evenly): its party's own even share pp (evenness own) out of the count,
 * x lines of its program's other phases per set in (lru_assoc_shares), c the
 * share of spans that meet them. */
static double flat_hit(double g, double e, double per_set, double own, double pp, double x,
                       double c, unsigned ways, const struct sm_pois_table *table)
{
    const double mean = g * per_set - own * pp, var = (g - e) * per_set - own * pp * (1 - pp);
    const double base = c < 1 && c > 0 ? count_hit(max2(0, mean), max2(0, var), ways, table) : 0;
    return excess_hit(base, c, mean, var, x, ways, table);
}

/* The hazard of a waiting line of an exclusive (victim) set per arrival
 * above it: the chance that W - 1 lines are above it, given it is still
 * there, with the count Poisson of mean m cut at W - 1:
 *   h(m) = P(W - 1) / P(< W) = 1 / sum_j (W-1)! / (W-1-j)! / m^j,
 * stable for every m > 0 (no exponentials). */
static double victim_hazard(double m, unsigned w)
{
    if (!(m > 0))
        return 0;
    double term = 1, sum = 1;
    for (unsigned j = 1; j < w; j++) {
        term *= (w - j) / m;
        sum += term;
        if (term < 1e-17 * sum)
            break;
    }
    return 1 / sum;
}

/* Most expected events (a birth, or a departure from the fullest state)
 * in a step that victim_chain_step follows exactly; past it the count has
 * mixed within the step and is taken at its quasi-stationary law. */
#define VICTIM_EXACT_EVENTS 10.0

/* One step of the count above a waiting line (q[k]: k lines above it, k <
 * W, given it is still there) at constant rates: b arrivals, each present
 * line leaving with theta, exactly (uniformization: the jump chain at rate
 * lam, its steps weighted by Poisson(lam)). Returns the chance that it
 * survives the step; q is left given that. */
static double victim_count_step(double *q, unsigned w, double b, double theta)
{
    const double lam = b + (w - 1) * theta;
    if (!(lam > 0))
        return 1;
    const double pb = b / lam, pd = theta / lam;
    /* v, next padded with a 0 either side (no tests at the ends); the
     * jump chain's weights per state once */
    double buf[2][66] = {{0}}, acc[64], stay[64], down[64], weight = exp(-lam), cum = weight;
    double *v = buf[0] + 1, *next = buf[1] + 1;
    for (unsigned j = 0; j < w; j++) {
        v[j] = q[j];
        acc[j] = weight * q[j];
        stay[j] = 1 - pb - j * pd;
        down[j] = (j + 1) * pd;
    }
    down[w - 1] = 0;
    for (unsigned k = 1; cum < 1 - 1e-12 && k < 200; k++) {
        weight *= lam / k;
        cum += weight;
        const double *const below = v - 1, *const above = v + 1;
        for (unsigned j = 0; j < w; j++) {
            const double x = v[j] * stay[j] + below[j] * pb + above[j] * down[j];
            next[j] = x;
            acc[j] += weight * x;
        }
        double *const tmp = v;
        v = next;
        next = tmp;
    }
    double surv = 0;
    for (unsigned j = 0; j < w; j++)
        surv += acc[j];
    for (unsigned j = 0; j < w && surv > 0; j++)
        q[j] = acc[j] / surv;
    return surv;
}

/* q: Poisson(m) cut at W - 1 (the count's law given the line is there,
 * once it has mixed). */
static void victim_count_mixed(double *q, unsigned w, double m)
{
    double term = 1, sum = 1;
    q[0] = 1;
    for (unsigned j = 1; j < w; j++) {
        term *= m / j;
        q[j] = term;
        sum += term;
    }
    for (unsigned j = 0; j < w; j++)
        q[j] /= sum;
}

/* A hit probability h of the entered count, relieved by the departures:
 * times the survival with them over the survival without (ratio, at least
 * 1: the entered count bounds the count above the line). Where h has
 * underflowed, the survival with departures itself (alone). */
static double victim_relief(double h, bool victim, double ratio, double alone)
{
    if (!victim)
        return h;
    return h > 0 ? fmin(1, h * ratio) : fmin(1, alone);
}

/* The relief of a step from the logs of both survivals at its two ends
 * (each survival the mean of its ends: the midpoint rule), and the
 * survival with departures there. */
static void victim_ratio(const double *lw, const double *lo, double *ratio, double *alone)
{
    const double mw = fmax(lw[0], lw[1]), mo = fmax(lo[0], lo[1]);
    const double sw = 1 + exp(-fabs(lw[0] - lw[1])), so = 1 + exp(-fabs(lo[0] - lo[1]));
    *ratio = fmax(1, exp(mw - mo) * sw / so);
    *alone = 0.5 * exp(mw) * sw;
}

/* lru_assoc_shares' survival of a waiting line in a victim set
 * (docs/METHODS.md §12.2), for parties counting what entered: the log of
 * the survival with departures (lw) and without (lo), at the step's start
 * [0] and end [1]. */
struct victim_chain {
    bool on;
    double lw[2], lo[2];
    double ratio, alone;   /* victim_ratio of the last step */
    double q[64];          /* the count above the line, given it is there */
    double gend, g, t;     /* lines still there, entered (weighted), the step's end */
    double so;             /* P(Pois(g per set) < W) */
    double rate[64];       /* entered parties' arrivals (lines/s) */
    double f[64], end[64]; /* each party's G term and lines still there */
};

static bool counts_entered(const struct llc_contention_party *p)
{
    return p->entered && p->shift > 0 && isfinite(p->shift) && p->weight > 0;
}

static void victim_chain_init(struct victim_chain *v, const struct llc_contention_party *p,
                              size_t n, unsigned ways)
{
    v->on = false;
    for (size_t i = 0; i < n; i++)
        v->on |= counts_entered(&p[i]);
    v->on = v->on && ways > 0 && ways <= 64;
    v->lw[0] = v->lw[1] = v->lo[0] = v->lo[1] = 0;
    v->ratio = v->alone = 1;
    memset(v->q, 0, sizeof v->q);
    v->q[0] = 1;
    v->gend = v->g = v->t = 0;
    v->so = sm_contention_pois_hit(0, ways);
    for (size_t i = 0; i < n; i++) {
        v->f[i] = v->end[i] = 0;
        /* its L2 misses: Q at the L2's distance of each reference */
        v->rate[i] = counts_entered(&p[i]) && p[i].model && p[i].rate > 0
                         ? p[i].weight * p[i].gamma * p[i].rate * party_tail(&p[i], 0)
                         : 0;
    }
}

/* The grid's step to t, G = g (the entered count), each party's G term
 * fnow and raw footprint rnow (cursor_eval's). Every arrival lands above
 * the waiting line: each entered party's L2 misses (re-arrivals of lines
 * that left on a hit included), the other parties' new lines. The count
 * above it, but for the eviction, is Poisson with the mean of the lines
 * still there (past_private of the shifted footprints: lines that arrive
 * and leave at random times, an M/G/inf queue from empty), so each
 * arrival evicts it with victim_hazard at that mean. Without departures
 * (arrivals the entered count, the mean G) the same sum is the exact log
 * of P(Pois(G) < W); both by the midpoint rule, so a party without
 * departures (a stream) gets no relief from the rule's error. */
static void victim_chain_step(struct victim_chain *v, const struct llc_contention_party *p,
                              size_t n, unsigned ways, double t, double g, const double *fnow,
                              const double *rnow, double per_set)
{
    double gend = 0, b = 0;
    for (size_t i = 0; i < n; i++) {
        /* (past_private caps before it subtracts: no cap after it) */
        const double end = v->rate[i] > 0 ? p[i].weight * past_private(&p[i], rnow[i]) : fnow[i];
        b += v->rate[i] > 0 ? v->rate[i] * (t - v->t) : fnow[i] - v->f[i];
        v->f[i] = fnow[i];
        v->end[i] = end;
        gend += end;
    }
    b = fmax(0, b) * per_set;
    v->lw[0] = v->lw[1];
    v->lo[0] = v->lo[1];
    const double m = 0.5 * (gend + v->gend) * per_set, dg = fmax(0, g - v->g) * per_set;
    const double theta = m > 0 ? fmin(1, fmax(0, b - (gend - v->gend) * per_set) / m) : 0;
    const double so0 = v->so, so1 = sm_contention_pois_hit(g * per_set, ways);
    if (b + (ways - 1) * theta <= VICTIM_EXACT_EVENTS && so1 > 1e-300 && so0 > 1e-300) {
        v->lw[1] += log(victim_count_step(v->q, ways, b, theta));
        v->lo[1] += log(so1 / so0);
    } else {
        v->lw[1] -= b * victim_hazard(m, ways);
        v->lo[1] -= dg * victim_hazard(0.5 * (g + v->g) * per_set, ways);
        victim_count_mixed(v->q, ways, gend * per_set);
    }
    victim_ratio(v->lw, v->lo, &v->ratio, &v->alone);
    v->so = so1;
    v->gend = gend;
    v->g = g;
    v->t = t;
}

/* The equilibrium of a W-way cache of C / W sets: a reuse spanning t
 * seconds hits with P(Pois(G(t) / sets) < W) instead of iff G(t) < C, so
 *   MR_i = Q_i(inf) + int (1 - P_hit(t)) d(-Q_i(a_i t)),
 *   O_i = int P_hit(t) dF_i(a_i t),
 * which add up to sets x int P(Pois(x) < W) dx = C when G grows without
 * bound. No threshold to solve: one pass over a geometric grid of t
 * (ratio 1.15, midpoint rule in G) until P_hit < 1e-12 or nothing grows.
 * Lines laid out more evenly than at random (evenness e = 1 - variance
 * over mean of a party's lines per set): a share p of a layout's lines
 * touched at random has variance (1 - e p) of its mean, so the count in a
 * reuse's set has mean G / sets and variance (G - sum_j e_j p_j G_j) /
 * sets, less for its own party's even part (its own line is not among
 * the others: mean e_i p_i and variance e_i p_i (1 - p_i) less), and hits
 * with the binomial of that mean and variance (count_hit), per party.
 * *t_star gets the fully associative T* (G = C) where the grid crossed it. */
static void lru_assoc_shares(const struct llc_contention_party *p, size_t n, double c,
                             unsigned ways, struct llc_contention_share *out, double *t_star)
{
    const double sets = c / ways;
    /* the hit probability tabulated when the parties bring tables (they
     * share a prediction's) */
    const struct sm_pois_table *pt = NULL;
    for (size_t i = 0; !pt && i < n; i++)
        pt = sm_contention_pois_table(p[i].tables, ways);
    /* multiplications, not a division on each step's path to the hit probability (the
     * same x to an ulp) */
    const double per_set = 1 / sets, half_per_set = 0.5 / sets;
    double sum = 0, fprev[64], qprev[64], mr[64], occ[64], fnow[64], qnow[64], unow[64], rnow[64];
    struct cursor cur[64];
    for (size_t i = 0; i < n; i++) {
        cursor_init(&p[i], &cur[i]);
        if (p[i].weight > 0)
            sum += p[i].weight *
                   (p[i].model ? (p[i].rate > 0 ? p[i].gamma * p[i].rate : 0) : p[i].lambda);
        fprev[i] = 0;
        qprev[i] = p[i].model ? party_tail(&p[i], 0) : 1;
        mr[i] = occ[i] = 0;
    }
    *t_star = INFINITY;
    /* the lines each party's layout holds: its cap, else all it ever
     * touches (none: it never stops touching new data, thinned to Poisson) */
    bool even = false;
    double lay[64];
    for (size_t i = 0; i < n; i++) {
        lay[i] = 0;
        if (!p[i].model || p[i].evenness == 0 || !(p[i].rate > 0) || !(p[i].weight > 0))
            continue;
        lay[i] = p[i].lines_max > 0 && !(p[i].shift > 0) ? p[i].lines_max
                                                         : party_footprint(&p[i], INFINITY);
        even |= lay[i] > 0 && isfinite(lay[i]);
    }
    double gprev = 0, ph = 1, eprev = 0, e = 0, pnow[64], pprev[64], phi[64], phr[64];
    /* lines the parties' other phases add to their own reuses (weighted),
     * at this step and the last: a hit probability of their own each */
    double xnow[64], xprev[64], cnow[64], cprev[64];
    size_t xk[64];
    bool each = even;
    for (size_t i = 0; i < n; i++) {
        pnow[i] = pprev[i] = xnow[i] = xprev[i] = 0;
        /* the share of spans meeting other phases: 0 at distance 0 with
         * own distances, else every span takes the mean */
        cnow[i] = cprev[i] = p[i].excess && p[i].excess->has_cross ? 0 : 1;
        xk[i] = 0;
        each |= p[i].excess && p[i].excess->n > 0 && p[i].model && p[i].rate > 0 && p[i].weight > 0;
    }
    /* An exclusive LLC counting what entered: the count above a waiting
     * line as a birth-death chain, against the entered count's own law
     * (Poisson: no departures); each hit probability is
     * relieved by their ratio (victim_relief), and each party's occupancy
     * counts only its lines still there (occ_v; end: at the last step) */
    struct victim_chain vc;
    victim_chain_init(&vc, p, n, ways);
    const bool victim = vc.on;
    double occ_v[64], endprev[64], phiraw[64];
    for (size_t i = 0; i < n; i++)
        occ_v[i] = endprev[i] = 0;
    /* from G <= 0.05 W per set (F(d) <= d), where a miss is negligible for
     * W >= 8 (P(Pois(0.05 W) >= W) < 1e-8) */
    double t_end = INFINITY; /* where the grid stopped */
    for (double t = sum > 0 ? 0.05 * ways * sets / sum : INFINITY; isfinite(t); t *= 1.15) {
        /* G and each F, Q once per step: party_fp and party_tail by cursor */
        double g = 0;
        e = 0;
        for (size_t i = 0; i < n; i++) {
            fnow[i] = qnow[i] = rnow[i] = 0;
            if (!(p[i].weight > 0))
                continue;
            if (!p[i].model) {
                fnow[i] = p[i].weight * p[i].lambda * t;
            } else if (p[i].rate > 0) {
                cursor_eval(&p[i], &cur[i], p[i].gamma * p[i].rate * t, &unow[i], &qnow[i],
                            &rnow[i]);
                const double u = unow[i];
                fnow[i] =
                    p[i].weight * (p[i].lines_max > 0 && u > p[i].lines_max ? p[i].lines_max : u);
            }
            g += fnow[i];
            if (p[i].excess && p[i].model && p[i].rate > 0) {
                const double d = p[i].gamma * p[i].rate * t;
                xnow[i] = p[i].weight * llc_contention_excess_next(p[i].excess, &xk[i], d);
                cnow[i] = llc_contention_excess_cross_next(p[i].excess, &xk[i], d);
            }
            if (lay[i] > 0 && isfinite(lay[i])) {
                pnow[i] = min1(unow[i] / lay[i]);
                e += p[i].evenness * pnow[i] * fnow[i];
            }
        }
        if (victim)
            victim_chain_step(&vc, p, n, ways, t, g, fnow, rnow, per_set);
        /* the parties laid out at random share one hit probability (with
         * no even part, the Poisson's); each even one has its own,
         * top the largest */
        const double mid = (gprev + g) * half_per_set, var = (gprev + g - eprev - e) * half_per_set;
        const double ph_raw = count_hit(mid, var, ways, pt);
        ph = victim_relief(ph_raw, victim, vc.ratio, vc.alone);
        double top = ph;
        /* phi: a line's (its occupancy), phr: a reuse's (its miss ratio:
         * the lines of its program's other phases count too; the lines in
         * the cache at once are the phases' own, which add up to C) */
        for (size_t i = 0; each && i < n; i++) {
            const double pm = 0.5 * (pprev[i] + pnow[i]), own = lay[i] > 0 ? p[i].evenness : 0;
            const double xm = (xprev[i] + xnow[i]) * half_per_set;
            /* (own pm = 0: ph itself) */
            const double phi_raw =
                own * pm != 0 ? count_hit(mid - own * pm, var - own * pm * (1 - pm), ways, pt)
                              : ph_raw;
            phi[i] = victim_relief(phi_raw, victim, vc.ratio, vc.alone);
            phiraw[i] = phi_raw;
            phr[i] =
                xm != 0
                    ? victim_relief(excess_hit(phi_raw, 0.5 * (cprev[i] + cnow[i]), mid - own * pm,
                                               var - own * pm * (1 - pm), xm, ways, pt),
                                    victim, vc.ratio, vc.alone)
                    : phi[i];
            top = max2(top, max2(phi[i], phr[i]));
            pprev[i] = pnow[i];
            xprev[i] = xnow[i];
            cprev[i] = cnow[i];
        }
        for (size_t i = 0; i < n; i++) {
            const double hit = each ? phi[i] : ph;
            occ[i] += (each ? phiraw[i] : ph_raw) * (fnow[i] - fprev[i]);
            fprev[i] = fnow[i];
            if (victim) {
                occ_v[i] += hit * fmax(0, vc.end[i] - endprev[i]);
                endprev[i] = vc.end[i];
            }
            if (p[i].model && p[i].rate > 0) {
                mr[i] += (1 - (each ? phr[i] : ph)) * (qprev[i] - qnow[i]);
                qprev[i] = qnow[i];
            }
        }
        if (g >= c && isinf(*t_star))
            *t_star = t;
        gprev = g;
        eprev = e;
        /* P(Pois(x) < W) >= 1/e > 1e-12 while x <= W, and >= e^-x > 1e-12
         * while x <= 27.5: no need to sum it */
        const double x = g * per_set;
        /* with even layouts: every hit probability of this step (at its
         * midpoint) below 1e-12; they only fall with G */
        bool done = victim ? (each ? top : ph) < 1e-12
                    : each ? top < 1e-12
                           : x > ways && x > 27.5 && sm_contention_pois_hit(x, ways) < 1e-12;
        if (!done) { /* saturated(), on the cursors' tables and footprints */
            done = true;
            for (size_t i = 0; done && i < n; i++)
                done = !party_grows(&p[i], t, &rnow[i], p[i].model ? cur[i].e[cur[i].ne - 1] : 0,
                                    cur[i].slope);
        }
        if (done) {
            t_end = t;
            break;
        }
    }
    /* (the survival's relief at the grid's end holds past it: no arrivals) */
    const double lw_end[2] = {vc.lw[1], vc.lw[1]}, lo_end[2] = {vc.lo[1], vc.lo[1]};
    double ratio_end, alone_end;
    victim_ratio(lw_end, lo_end, &ratio_end, &alone_end);
    /* G is flat from here on (every party saturated), but the lines a
     * party's other phases add along its reuses may still grow: such a
     * party goes on alone at the last G (a phase at its cap still meets
     * them) */
    for (size_t i = 0; i < n && isfinite(t_end); i++) {
        const double own = lay[i] > 0 ? p[i].evenness : 0;
        /* (once past its last finite distance its tail is flat: the rest
         * adds nothing) */
        const double last = p[i].model ? cur[i].e[cur[i].ne - 1] : 0;
        for (double tt = t_end; excess_grows(&p[i], tt);) {
            tt *= 1.15;
            const double d = p[i].gamma * p[i].rate * tt;
            double u, qn, raw;
            cursor_eval(&p[i], &cur[i], d, &u, &qn, &raw);
            const double xn = p[i].weight * llc_contention_excess_next(p[i].excess, &xk[i], d);
            const double cn = llc_contention_excess_cross_next(p[i].excess, &xk[i], d);
            const double xm = (xprev[i] + xn) * half_per_set;
            const double hit = victim_relief(
                flat_hit(gprev, eprev, per_set, own, pprev[i], xm, 0.5 * (cprev[i] + cn), ways, pt),
                victim, ratio_end, alone_end);
            mr[i] += (1 - hit) * (qprev[i] - qn);
            qprev[i] = qn;
            xprev[i] = xn;
            cprev[i] = cn;
            if (hit < 1e-12 || !(aged(&p[i], d + (p[i].shift > 0 ? p[i].shift : 0)) < last))
                break;
        }
    }
    /* past the grid G is flat (or every line gone): the rest of each tail
     * misses as often as at its end; cold and past-age distances always */
    /* with departures, the lines still there: each party's share of them
     * (the total stays the entered count's, a full cache) */
    double occ_total = 0, occ_v_total = 0;
    for (size_t i = 0; victim && i < n; i++) {
        occ_total += occ[i];
        occ_v_total += occ_v[i];
    }
    const double pend0 =
        victim_relief(sm_contention_pois_hit(gprev * per_set, ways), victim, ratio_end, alone_end);
    for (size_t i = 0; i < n; i++) {
        const double own = lay[i] > 0 ? p[i].evenness : 0;
        /* (exact, not tabulated: once per party) */
        const double pend = each ? victim_relief(flat_hit(gprev, eprev, per_set, own, pprev[i],
                                                          xprev[i] * per_set, cprev[i], ways, NULL),
                                                 victim, ratio_end, alone_end)
                                 : pend0;
        struct llc_contention_share *s = &out[i];
        s->cpi = NAN;
        s->occupancy = victim && occ_v_total > 0 ? occ_v[i] * occ_total / occ_v_total : occ[i];
        if (!p[i].model) {
            s->rate = s->miss_rate = p[i].lambda;
            s->miss_ratio = NAN;
            continue;
        }
        s->rate = p[i].rate;
        const double qinf = p[i].rate > 0 ? party_tail(&p[i], INFINITY) : 0;
        s->miss_ratio = fmin(1, mr[i] + (1 - pend) * fmax(0, qprev[i] - qinf) + qinf);
        s->miss_rate = p[i].rate * s->miss_ratio;
    }
}

/* ---- docs/METHODS.md §12.3 random replacement ------------------------------------------------ */

/* R(mu) = E over reuse distances d of 1 - (1 - 1/C)^(d x), x = mu / a: the
 * table's Q is linear inside a bucket (uniform distances); one-distance
 * buckets are point masses. Dangling samples (Q at the last edge) always
 * miss, and so do distances at or past the party's age (INFINITY = none:
 * the line was not touched since the start). *dr gets dR/dx (for Newton's
 * method). Once k e > 40 every later distance misses to double precision
 * (e^-40 < 5e-18): the rest of the tail is added at once, so a call costs
 * the buckets up to 40 mean lifetimes, not the whole table. */
/* R at x = 0, as the loop below sums it: every distance below the age
 * adds exactly 0 (1 - e^0), so only the bucket the age cuts and the
 * rest of the tail count. */
static double r_at_zero(const double *e, const double *q, size_t ne, double age)
{
    double r = q[ne - 1];
    size_t lo = 0, hi = ne - 1; /* first i with e[i] >= age, or ne - 1 */
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (e[mid] < age)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && e[lo] > age && e[lo] - e[lo - 1] > 1 && q[lo - 1] - q[lo] > 0)
        r += (q[lo - 1] - q[lo]) * (1 - (age - e[lo - 1]) / (e[lo] - e[lo - 1]));
    if (lo + 1 < ne)
        r += q[lo] - q[ne - 1];
    return r;
}

double sm_contention_random_r(const struct llc_statmodel_model *m, double x, double c_log,
                              double age, double *dr)
{
    const double *e, *q, *f;
    size_t ne;
    double slope;
    llc_statmodel_footprint_table(m, &e, &q, &f, &ne, &slope);
    double r = q[ne - 1], d = 0;
    const double k = c_log * x;
    if (k == 0 && !dr)
        return r_at_zero(e, q, ne, age);
    /* exp(-k e[i]) carried from edge to edge: bucket widths repeat (1 in
     * the exact region, then constant within an octave), so one exp per
     * width instead of one per bucket. */
    double el = exp(-k * e[0]), w_prev = -1, ew = 1, em1 = 0, eh = 1;
    size_t i = 0;
    /* The exact region's point masses (most of the table) without the
     * general loop's branches; the same sums term by term. The edges are
     * the buckets' integer bounds, so bucket i is one of them iff e[i + 1]
     * = e[0] + i + 1: the run (cut by the age and the 40 lifetimes) is
     * found by bisection, not tested bucket by bucket. */
    size_t end = 0, hi = ne - 1;
    while (end < hi) {
        const size_t mid = end + (hi - end) / 2;
        if (e[mid + 1] - e[0] == (double)(mid + 1) && e[mid] < age && !(k * e[mid] > 40))
            end = mid + 1;
        else
            hi = mid;
    }
    const double e1 = exp(-k);
    /* four interleaved exp chains (el at i, i + 1, i + 2, i + 3, each
     * stepped by e^-4k) and partial sums: the same terms to rounding (a
     * chain's products differ from one chain's in the last bits, ~1e-13 of
     * R after 1,024 edges), four times shorter dependency chains */
    if (end - i >= 8) {
        const double e4 = (e1 * e1) * (e1 * e1);
        double l0 = el, l1 = el * e1, l2 = l1 * e1, l3 = l2 * e1;
        double r0 = 0, r1 = 0, r2 = 0, r3 = 0, d0 = 0, d1 = 0, d2 = 0, d3 = 0;
        for (; i + 4 <= end; i += 4) {
            const double m0 = q[i] - q[i + 1], m1 = q[i + 1] - q[i + 2], m2 = q[i + 2] - q[i + 3],
                         m3 = q[i + 3] - q[i + 4];
            r0 += m0 * (1 - l0);
            r1 += m1 * (1 - l1);
            r2 += m2 * (1 - l2);
            r3 += m3 * (1 - l3);
            d0 += m0 * e[i] * l0;
            d1 += m1 * e[i + 1] * l1;
            d2 += m2 * e[i + 2] * l2;
            d3 += m3 * e[i + 3] * l3;
            l0 *= e4;
            l1 *= e4;
            l2 *= e4;
            l3 *= e4;
        }
        r += (r0 + r1) + (r2 + r3);
        d += c_log * ((d0 + d1) + (d2 + d3));
        el = l0;
    }
    for (; i < end; i++) {
        const double mass = q[i] - q[i + 1];
        r += mass * (1 - el);
        d += mass * c_log * e[i] * el;
        el *= e1;
    }
    for (; i + 1 < ne && e[i] < age && !(k * e[i] > 40); i++) {
        const double w = e[i + 1] - e[i];
        if (w != w_prev) {
            ew = exp(-k * w);
            em1 = -expm1(-k * w);
            eh = exp(-0.5 * k * w);
            w_prev = w;
        }
        const double mass = q[i] - q[i + 1], kw = k * w;
        if (!(mass > 0)) {
        } else if (w <= 1) {
            r += mass * (1 - el);
            d += mass * c_log * e[i] * el;
        } else if (e[i + 1] > age) {
            /* the age cuts the bucket: its part past the age misses; means
             * over [lo, age) of 1 - e^(-k t) and of t e^(-k t) */
            const double lo = e[i], span = age - lo, frac = span / w;
            r += mass * (1 - frac);
            if (k * span < 1e-3) {
                const double mid = lo + 0.5 * span, ex = exp(-k * mid);
                r += mass * frac * -expm1(-k * mid);
                d += mass * frac * c_log * mid * ex;
            } else {
                const double eb = exp(-k * age);
                r += mass * frac * (1 - (el - eb) / (k * span));
                d += mass * frac * c_log *
                     ((lo / k + 1 / (k * k)) * el - (age / k + 1 / (k * k)) * eb) / span;
            }
        } else if (kw < 1e-3) {
            /* mean of 1 - exp(-k t) over the bucket ~ its middle (a young
             * party's at its middle, as the method was calibrated) */
            const double mid = e[i] + 0.5 * w, ex = el * eh;
            r += mass * (kw < 1e-9 || isfinite(age) ? -expm1(-k * mid) : 1 - el * em1 / kw);
            d += mass * c_log * mid * ex;
        } else {
            /* mean of 1 - exp(-k t) over t in [lo, lo + w): 1 - E / (k w) */
            const double big = el * em1, dbig = -e[i] * el + e[i + 1] * el * ew; /* E, dE/dk */
            r += mass * (1 - big / kw);
            d += mass * c_log * (big - k * dbig) / (k * kw);
        }
        el *= ew;
    }
    if (i + 1 < ne) /* past the age or 40 lifetimes: all misses */
        r += q[i] - q[ne - 1];
    if (dr)
        *dr = d;
    return r;
}

/* The mean over u in [a, b) of 1 - e^(-k u) (*m) and of u e^(-k u) (*mu):
 * a bucket's miss probability and its derivative's kernel. */
static void bucket_means(double k, double a, double b, double *m, double *mu)
{
    const double span = b - a;
    if (!(k * span >= 1e-3)) {
        const double mid = a + 0.5 * span, ex = exp(-k * mid);
        *m = -expm1(-k * mid);
        *mu = mid * ex;
        return;
    }
    const double ea = exp(-k * a), eb = exp(-k * b);
    *m = 1 - (ea - eb) / (k * span);
    *mu = ((a / k + 1 / (k * k)) * ea - (b / k + 1 / (k * k)) * eb) / span;
}

double sm_contention_random_r_shifted(const struct llc_statmodel_model *m, double x, double c_log,
                                      double age, double shift, double *dr)
{
    if (!(shift > 0))
        return sm_contention_random_r(m, x, c_log, age, dr);
    const double *e, *q, *f;
    size_t ne;
    double slope;
    llc_statmodel_footprint_table(m, &e, &q, &f, &ne, &slope);
    /* only the first touches miss, and nothing below needs a pass (the
     * same sum to rounding): at x = 0 (the root search's test at mu = 0,
     * which takes no slope), or with no distance both past the private
     * cache and before the age (a young party whose whole reach its L2
     * holds) at any x */
    if ((x == 0 && !dr) || !(shift < fmin(e[ne - 1], age))) {
        if (dr)
            *dr = 0;
        return r_at_zero(e, q, ne, age);
    }
    const double k = c_log * x;
    double r = q[ne - 1], d = 0; /* never reused: misses */
    for (size_t i = 0; i + 1 < ne; i++) {
        const double mass = q[i] - q[i + 1];
        if (!(mass > 0))
            continue;
        const double lo = e[i], w = e[i + 1] - e[i];
        if (w <= 1) { /* one distance */
            if (lo >= age) {
                r += mass;
            } else if (lo > shift) {
                const double u = lo - shift, ex = exp(-k * u);
                r += mass * -expm1(-k * u);
                d += mass * c_log * u * ex;
            }
            continue;
        }
        const double hi = lo + w, a = fmax(lo, shift), b = fmin(hi, age);
        if (hi > age) /* its part at or past the age: first touches */
            r += mass * (hi - fmax(lo, age)) / w;
        if (b > a) { /* past the private cache, before the age */
            double mm, mu;
            bucket_means(k, a - shift, b - shift, &mm, &mu);
            r += mass * (b - a) / w * mm;
            d += mass * (b - a) / w * c_log * mu;
        }
    }
    if (dr)
        *dr = d;
    return r;
}

struct rnd {
    const struct llc_contention_party *p;
    size_t n; /* at most 64 */
    double c, c_log;
    /* per party S / (gamma L) (random_rs; NULL: no own-miss terms) */
    const double *kappa;
    /* per party its R table (party_tables; NULL: looked up at each query) */
    struct sm_rtab *const *tab;
    /* party_lines of each party, computed once per equilibrium (a search
     * in its footprint table, else at every Newton step); NULL: on the fly */
    const double *lines;
};

/* The age a party's R table is kept at (INFINITY: past its last finite
 * distance the age cuts nothing). e, ne: its footprint table's edges. */
static double party_tab_age(const struct llc_contention_party *p, const double *e, size_t ne)
{
    return p->cold && p->age > 0 && p->age < e[ne - 1] ? p->age : INFINITY;
}

/* Each party's R table, made (all of them first: making one may move the
 * others) and found once per equilibrium instead of at every query (NULL:
 * the exact sums, or no model). */
static void party_tables(const struct llc_contention_party *p, size_t n, double c_log,
                         struct sm_rtab **tab)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            tab[i] = NULL;
            if (!p[i].model || !p[i].tables || isinf(p[i].shift))
                continue;
            const double *e, *q, *f;
            size_t ne;
            double slope;
            llc_statmodel_footprint_table(p[i].model, &e, &q, &f, &ne, &slope);
            const double age = party_tab_age(&p[i], e, ne);
            if (pass == 0)
                sm_contention_rtab_make(p[i].tables, p[i].model, p[i].excess, c_log, age,
                                        p[i].shift);
            else
                tab[i] = sm_contention_rtab_find(p[i].tables, p[i].model, p[i].excess, c_log, age,
                                                 p[i].shift);
        }
}

/* Miss ratio of party i at x = mu / (gamma a) misses per own reference
 * (mu: the misses that may evict its line); *dr its derivative in x. */
static double party_f(const struct rnd *z, size_t i, double x, double *dr)
{
    const struct llc_contention_party *p = &z->p[i];
    /* past its last finite distance the age cuts nothing: the fast loop */
    const double *e, *q, *f;
    size_t ne;
    double slope;
    llc_statmodel_footprint_table(p->model, &e, &q, &f, &ne, &slope);
    /* at mu = 0 no caller uses the derivative (Newton's steps start right
     * of 0): R alone costs a search instead of the table */
    double r =
        isinf(p->shift) /* every reuse in the private cache: only first touches miss */
            ? sm_contention_random_r_shifted(p->model, x, z->c_log,
                                             p->cold && p->age > 0 ? p->age : INFINITY, 1e300,
                                             x == 0 ? NULL : dr)
            : sm_contention_rtab_r(p->tables, z->tab ? z->tab[i] : NULL, p->model, p->excess, x,
                                   z->c_log, party_tab_age(p, e, ne), p->shift, x == 0 ? NULL : dr);
    if (x == 0)
        *dr = NAN;
    if (p->cold) {
        double c, k;
        cold_split(p, &c, &k);
        if (!(c < 1)) {
            *dr = 0;
            return 1;
        }
        r = fmin(1, p->steady + k * (r - c));
        *dr *= k;
    }
    return r;
}

static double party_ins_r(const struct rnd *z, size_t i, double mu, double r, double dr, double *d);

/* party i's insertions (misses/s) given its R and dR/dx at mu (a model
 * with rate > 0), *d their derivative in mu. A party that holds all the
 * lines it can (its cap L: distinct lines, or touched so far) loses them at
 * mu L / C and so inserts no more than that: docs/METHODS.md §12.3. */
static double party_ins_r(const struct rnd *z, size_t i, double mu, double r, double dr, double *d)
{
    const struct llc_contention_party *p = &z->p[i];
    const double ins = p->weight * p->rate * r;
    const double l = z->lines ? z->lines[i] : party_lines(p);
    if (isfinite(l) && p->weight * l * mu / z->c < ins) {
        *d = p->weight * l / z->c;
        return p->weight * l * mu / z->c;
    }
    *d = p->weight * dr / p->gamma;
    return ins;
}

/* random_rs's kappa of each party: S / (gamma L), 0 where it has no finite
 * lines (lines: party_lines of each) */
static void own_miss_kappa(const struct llc_contention_party *p, size_t n, const double *lines,
                           double sets, double *kappa)
{
    for (size_t i = 0; i < n; i++) {
        const bool reused = p[i].model && p[i].rate > 0 && lines[i] > 0 && isfinite(lines[i]);
        kappa[i] = reused ? sets / (p[i].gamma * lines[i]) : 0;
    }
}

/* The relative change of a party's R below which random_rs leaves its own
 * misses in (kappa F' bounds it). */
#define OWN_MISS_NEGLIGIBLE 1e-4

/* random_rs takes the first order of its fixed point where the correction
 * k R is at most this share of x (its second order is then below 0.3% of
 * the correction), else Newton's steps. */
#define OWN_MISS_LINEAR 0.05

/* Newton's steps of random_rs where it takes them, from R = F(x) (one:
 * the evaluation's figures the same to their printed digits as with two,
 * docs/RESULTS.md §10.18). */
#define OWN_MISS_STEPS 1

/* The share of party q's lines (lines: its party_lines) it touches in t
 * seconds: whether a line of it that a fetch evicts comes back within t. */
static double touched_share(const struct llc_contention_party *q, double lines, double t)
{
    const bool back = q->model && q->rate > 0 && lines > 0 && isfinite(lines);
    return back ? fmin(1, party_footprint(q, q->gamma * q->rate * t) / lines) : 0;
}

/* Every party's R and dR/dx at total miss rate mu (r[i] NaN for parties
 * without a model or rate). A line's own misses never evict it: between
 * its reuses it is not touched. Of the misses in its set it meets all but
 * its own, on average its party's a R over its L / S lines there, in the
 * whole cache's terms mu - a R S / L. But its own fetch evicted a line of
 * its set, which misses again (and evicts, this line with probability
 * 1 / W) if it is touched before this line's reuse, within about a line's
 * lifetime C / mu where the misses fall: the share phi of the own misses
 * that come back that way, the chance that a line drawn from the set
 * (party j with its occupancy share) is touched within C / mu
 * (touched_share). So x_e = x - kappa R with kappa = (1 - phi) S /
 * (gamma L), and R = F(x_e), a fixed point. Checked against the exact
 * product form of IRM programs in one set and a cyclic program's
 * simulation (phi = 1 there: the plain equation), docs/METHODS.md §12.3;
 * 1 / L of the party's misses in a fully associative cache (S = 1). */
static void random_rs(const struct rnd *z, double mu, double *r, double *dr)
{
    double occ[64], total = 0;
    const bool self = z->kappa && mu > 0;
    for (size_t i = 0; i < z->n; i++) {
        const struct llc_contention_party *p = &z->p[i];
        occ[i] = 0;
        r[i] = dr[i] = NAN;
        if (!p->model) {
            if (self && p->weight > 0) /* an unprofiled stream's lines never come back */
                total += z->c * p->weight * p->lambda / mu;
            continue;
        }
        if (!(p->rate > 0))
            continue;
        r[i] = party_f(z, i, mu / (p->gamma * p->rate), &dr[i]);
        if (self && p->weight > 0) {
            double d;
            occ[i] = z->c * party_ins_r(z, i, mu, r[i], dr[i], &d) / mu;
            total += occ[i];
        }
    }
    if (!self || !(total > 0))
        return;
    /* the share of each party's lines touched within a line's lifetime
     * C / mu, when its fetch's victim may come back (asked once) */
    const double life = z->c / mu;
    double touch[64];
    bool touched = false;
    for (size_t i = 0; i < z->n; i++) {
        /* (where even the whole of its own misses would move R by less
         * than OWN_MISS_NEGLIGIBLE of itself: a party of many lines per
         * set) */
        if (isnan(r[i]) || !(z->kappa[i] * dr[i] >= OWN_MISS_NEGLIGIBLE))
            continue;
        for (size_t j = 0; !touched && j < z->n; j++)
            touch[j] = touched_share(&z->p[j], z->lines[j], life);
        touched = true;
        double phi = 0;
        for (size_t j = 0; j < z->n; j++)
            phi += occ[j] / total * touch[j];
        /* R - F(x - k R) rises in R and is convex (F concave). Where the
         * correction is small against x, its first order R = F / (1 + k
         * F'); else Newton's steps from R = F(x), right of the root, which
         * stay right of it (and so above F(0), the misses no reuse can
         * avoid). */
        const double k = (1 - fmin(1, phi)) * z->kappa[i], x = mu / (z->p[i].gamma * z->p[i].rate);
        double ri = r[i] / (1 + k * dr[i]), f1 = dr[i];
        if (k * ri > OWN_MISS_LINEAR * x) {
            ri = r[i];
            for (int step = 0; step < OWN_MISS_STEPS; step++) {
                const double xe = x - k * ri;
                if (!(xe > 0)) {
                    ri = party_f(z, i, 0, &f1);
                    f1 = 0;
                    break;
                }
                const double g = ri - party_f(z, i, xe, &f1);
                ri -= g / (1 + k * f1);
            }
        }
        r[i] = ri;
        dr[i] = f1 / (1 + k * f1);
    }
}

/* Insertions (misses/s) the parties cause at total miss rate mu, minus mu;
 * *dphi its derivative. */
static double random_phi(const struct rnd *z, double mu, double *dphi)
{
    double r[64], dr[64], s = -mu, ds = -1;
    random_rs(z, mu, r, dr);
    for (size_t i = 0; i < z->n; i++) {
        const struct llc_contention_party *p = &z->p[i];
        if (!(p->weight > 0))
            continue;
        if (!p->model) {
            s += p->weight * p->lambda;
            continue;
        }
        if (!(p->rate > 0))
            continue;
        double d;
        s += party_ins_r(z, i, mu, r[i], dr[i], &d);
        ds += d;
    }
    *dphi = ds;
    return s;
}

/* Phi is concave with Phi > 0 left of the root: Newton's steps from the
 * right stay right of it; safeguarded by the bracket [lo, hi]. */
static double random_mu(const struct rnd *z, double hint)
{
    double hi = 0, d;
    for (size_t i = 0; i < z->n; i++)
        if (z->p[i].weight > 0)
            hi += z->p[i].weight *
                  (z->p[i].model ? (z->p[i].rate > 0 ? z->p[i].rate : 0) : z->p[i].lambda);
    if (!(hi > 0))
        return 0;
    /* Phi(0): only certain misses (dangling samples, unprofiled streams,
     * the reuses other phases of its program evict by their misses; none
     * from a party at its cap). Below the root's tolerance they are none:
     * a root that small is not found to any precision (the other phases'
     * misses give 1e-20 of the rate to a phase that fits the cache). */
    const double ftol = 1e-12 * hi;
    double lo = 0, phi0 = random_phi(z, 0, &d);
    if (!(phi0 > ftol)) {
        /* No certain misses: mu = 0 is a root; a positive one exists iff
         * Phi rises from 0 (the cache cannot hold what is reused). */
        lo = hi * 1e-12;
        if (!(random_phi(z, lo, &d) > 0))
            return 0;
    }
    double x = hi, fx = 0;
    bool right = false;
    /* A nearby root (the previous step of a fixed point): start just right
     * of it if that is right of the root, else keep it as the left end. */
    if (hint > lo && hint * (1 + 1e-4) < hi) {
        double dh;
        const double xh = hint * (1 + 1e-4), fh = random_phi(z, xh, &dh);
        if (fh < 0) { /* then Phi(hi) < 0 too (concave, Phi(lo) > 0): not needed */
            hi = x = xh;
            fx = fh;
            d = dh;
            right = true;
        } else {
            lo = xh;
        }
    }
    if (!right && (fx = random_phi(z, x, &d)) >= 0)
        return hi;
    for (int it = 0; it < 200; it++) {
        if (fabs(fx) <= ftol || hi - lo <= 1e-13 * hi)
            break;
        if (fx > 0)
            lo = x;
        else
            hi = x;
        double next = d < 0 ? x - fx / d : NAN;
        if (!(next > lo && next < hi))
            next = 0.5 * (lo + hi);
        x = next;
        fx = random_phi(z, x, &d);
    }
    return x;
}

static void random_shares(const struct rnd *z, double mu, double c,
                          struct llc_contention_share *out)
{
    double r[64], dr[64];
    random_rs(z, mu, r, dr);
    for (size_t i = 0; i < z->n; i++) {
        const struct llc_contention_party *p = &z->p[i];
        struct llc_contention_share *s = &out[i];
        s->cpi = NAN;
        if (!p->model) {
            s->rate = s->miss_rate = p->lambda;
            s->miss_ratio = NAN;
            s->occupancy = mu > 0 ? c * p->weight * p->lambda / mu : 0;
            continue;
        }
        double di;
        s->rate = p->rate;
        s->miss_ratio = p->rate > 0 ? r[i] : NAN;
        s->miss_rate = p->rate > 0 ? p->rate * s->miss_ratio : 0;
        if (mu > 0) /* insertions = evictions of its lines, mu O / C */
            s->occupancy = p->rate > 0 && p->weight > 0
                               ? c * party_ins_r(z, i, mu, s->miss_ratio, dr[i], &di) / mu
                               : 0;
        else /* nothing is evicted: every line the party touches stays (at
              * most the cache: a party whose new data is below the root's
              * tolerance, mu = 0, would have infinitely many) */
            s->occupancy = p->weight > 0
                               ? fmin(c, p->weight * fmin(z->lines ? z->lines[i] : party_lines(p),
                                                          party_footprint(p, INFINITY)))
                               : 0;
    }
    /* mu = 0 (the reuse says every reuse hits) with more weighted lines than
     * the cache: a skew stratum's weight w > 1 multiplies a program's lines
     * per set, and the reuse-only Phi does not see that the lines cannot all
     * stay. The cache is then full: shares in proportion to the lines. */
    if (!(mu > 0)) {
        double occ = 0;
        for (size_t i = 0; i < z->n; i++)
            occ += out[i].occupancy;
        if (occ > c)
            for (size_t i = 0; i < z->n; i++)
                out[i].occupancy *= c / occ;
    }
}

/* ---- one equilibrium ------------------------------------------------------ */

static int check_parties(const struct llc_contention_party *p, size_t n, double c, char *err,
                         size_t errlen)
{
    if (n == 0 || !(c >= 1) || !isfinite(c))
        return llc_errf(err, errlen, -EINVAL, "equilibrium: %zu programs, capacity %g lines", n, c);
    for (size_t i = 0; i < n; i++) {
        const struct llc_contention_party *q = &p[i];
        if (!(q->weight >= 0) || !isfinite(q->weight))
            return llc_errf(err, errlen, -EINVAL, "program %zu: weight %g", i, q->weight);
        if (!q->model && !(q->lambda >= 0 && isfinite(q->lambda)))
            return llc_errf(err, errlen, -EINVAL, "program %zu: footprint rate %g lines/s", i,
                            q->lambda);
        if (q->model &&
            (!(q->rate >= 0) || !isfinite(q->rate) || !(q->gamma > 0) || !isfinite(q->gamma)))
            return llc_errf(err, errlen, -EINVAL, "program %zu: rate %g, gamma %g", i, q->rate,
                            q->gamma);
        if (q->model && q->cold && (!(q->steady >= 0 && q->steady <= 1) || !(q->age >= 0)))
            return llc_errf(err, errlen, -EINVAL, "program %zu: steady share %g, age %g", i,
                            q->steady, q->age);
        if (q->model && !(llc_statmodel_model_total(q->model) > 0))
            return llc_errf(err, errlen, -ENODATA, "program %zu: no reuse samples", i);
    }
    return 0;
}

/* The LRU shares, set-associative (ways > 0) or fully associative. */
static void lru_solve(const struct llc_contention_party *p, size_t n, double c, unsigned ways,
                      struct llc_contention_share *out, double *t_star)
{
    if (ways > 0) {
        lru_assoc_shares(p, n, c, ways, out, t_star);
    } else {
        *t_star = lru_tstar(p, n, c);
        lru_shares(p, n, *t_star, out);
    }
}

/* A party with reuse of its own in the equilibrium, which RRIP splits. */
static bool rrip_splits(const struct llc_contention_party *p)
{
    return p->model && p->rate > 0 && p->weight > 0;
}

/* docs/METHODS.md §12.4: RRIP's scan resistance as two LRU clocks. A line
 * that missed is on probation; one that was hit is protected and stays
 * k = protect times as long. Each program is two parties: its protected
 * lines (its footprint at k times its distance, weight h) and the rest
 * (weight 1 - h). With g_p and g_f the shares of its reuses that hit at
 * the two clocks, a line is protected after a hit and on probation after
 * a miss, so a reference hits with the stationary probability
 *   h = g_f / (1 - g_p + g_f),
 * solved by iteration from the LRU solution. The occupancies are
 * the two parties' together: they still add up to C. */
static void rrip_shares(const struct llc_contention_party *p, size_t n, double c, unsigned ways,
                        struct llc_contention_share *out, double *t_star)
{
    struct llc_contention_party q[64];
    struct llc_contention_share s[64];
    double h[32];
    size_t at[32];
    lru_solve(p, n, c, ways, out, t_star);
    for (size_t i = 0; i < n; i++)
        h[i] = rrip_splits(&p[i]) ? 1 - out[i].miss_ratio : 0;
    /* plain steps while they contract (a few suffice: h moves little from
     * the LRU solution), halved once they stop contracting */
    double beta = 1, last = INFINITY;
    for (int it = 0; it < 100; it++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            at[i] = m;
            q[m] = p[i];
            if (!rrip_splits(&p[i])) {
                m++; /* one party: no reuse of its own to protect */
                continue;
            }
            /* both parties keep a weight, so both have a miss ratio */
            const double hp = fmin(fmax(h[i], 1e-9), 1 - 1e-9);
            q[m].gamma *= p[i].protect;
            q[m++].weight *= hp;
            q[m] = p[i];
            q[m++].weight *= 1 - hp;
        }
        lru_solve(q, m, c, ways, s, t_star);
        double worst = 0;
        for (size_t i = 0; i < n; i++) {
            const struct llc_contention_share *sp = &s[at[i]];
            if (!rrip_splits(&p[i])) {
                out[i] = *sp;
                continue;
            }
            const struct llc_contention_share *sf = &s[at[i] + 1];
            const double gp = 1 - sp->miss_ratio, gf = 1 - sf->miss_ratio;
            const double hn = 1 - gp + gf > 0 ? gf / (1 - gp + gf) : 1;
            worst = fmax(worst, fabs(hn - h[i]));
            out[i] = (struct llc_contention_share){.miss_ratio = 1 - hn,
                                                   .miss_rate = p[i].rate * (1 - hn),
                                                   .occupancy = sp->occupancy + sf->occupancy,
                                                   .cpi = NAN,
                                                   .rate = p[i].rate};
            h[i] += beta * (hn - h[i]);
        }
        if (worst < 1e-6)
            break;
        if (worst >= last)
            beta = 0.5;
        last = worst;
    }
}

int llc_contention_equilibrium(const struct llc_contention_party *p, size_t n, double capacity,
                               enum llc_contention_policy base, struct llc_contention_share *out,
                               struct llc_contention_info *info, char *err, size_t errlen)
{
    return sm_contention_equilibrium(p, n, capacity, base, 0, 0, out, info, err, errlen);
}

int llc_contention_equilibrium_assoc(const struct llc_contention_party *p, size_t n,
                                     double capacity, unsigned ways,
                                     struct llc_contention_share *out,
                                     struct llc_contention_info *info, char *err, size_t errlen)
{
    if (ways == 0 || !(capacity >= ways))
        return llc_errf(err, errlen, -EINVAL, "equilibrium: %u ways in %g lines", ways, capacity);
    return sm_contention_equilibrium(p, n, capacity, LLC_CONTENTION_LRU, 0, ways, out, info, err,
                                     errlen);
}

int sm_contention_equilibrium(const struct llc_contention_party *p, size_t n, double capacity,
                              enum llc_contention_policy base, double mu_hint, unsigned ways,
                              struct llc_contention_share *out, struct llc_contention_info *info,
                              char *err, size_t errlen)
{
    int rc = check_parties(p, n, capacity, err, errlen);
    if (rc)
        return rc;
    struct llc_contention_info in = {.beta = 1, .converged = true};
    if (base == LLC_CONTENTION_RANDOM) {
        double lines[64], kappa[64];
        if (n > LLC_ARRAY_LEN(lines))
            return llc_errf(err, errlen, -EINVAL, "equilibrium: %zu programs (at most %zu)", n,
                            LLC_ARRAY_LEN(lines));
        for (size_t i = 0; i < n; i++)
            lines[i] = party_lines(&p[i]);
        own_miss_kappa(p, n, lines, ways > 0 ? capacity / ways : 1, kappa);
        const double c_log = -log1p(-1 / fmax(capacity, 1 + 1e-9));
        struct sm_rtab *tab[64];
        party_tables(p, n, c_log, tab);
        const struct rnd z = {.p = p,
                              .n = n,
                              .c = capacity,
                              .c_log = c_log,
                              .kappa = kappa,
                              .tab = tab,
                              .lines = lines};
        in.mu = random_mu(&z, mu_hint);
        in.t_star = in.mu > 0 ? capacity / in.mu : INFINITY;
        random_shares(&z, in.mu, capacity, out);
    } else {
        if (n > 0 && n <= 32 && p[0].protect > 1) {
            rrip_shares(p, n, capacity, ways, out, &in.t_star);
        } else if (ways > 0 && n <= 64) {
            lru_assoc_shares(p, n, capacity, ways, out, &in.t_star);
        } else {
            in.t_star = lru_tstar(p, n, capacity);
            lru_shares(p, n, in.t_star, out);
        }
        in.mu = 0;
        for (size_t i = 0; i < n; i++)
            in.mu += out[i].miss_rate * (p[i].model ? p[i].weight : 1);
    }
    double occ = 0;
    for (size_t i = 0; i < n; i++) {
        occ += out[i].occupancy;
        if (p[i].model && p[i].rate > 0) {
            /* the cold-start model spreads only the steady first touches */
            const double lo = p[i].cold ? fmin(p[i].steady, 1)
                                        : llc_statmodel_model_dangling(p[i].model) /
                                              llc_statmodel_model_total(p[i].model);
            const double mr = out[i].miss_ratio;
            if (!(mr >= lo - 1e-9 && mr <= 1 + 1e-9))
                return llc_errf(err, errlen, -EDOM,
                                "equilibrium: program %zu: miss ratio %g outside [%g, 1]", i, mr,
                                lo);
        }
    }
    if (ways > 0) {
        /* the set-associative shares add up to C only when G grows without
         * bound, never to more (but for the grid's rounding) */
        in.occ_error = fabs(occ - capacity) / capacity;
        if (!(occ <= 1.02 * capacity))
            return llc_errf(
                err, errlen, -EDOM,
                "equilibrium: occupancies add up to %.9g lines, more than the %g of the "
                "cache",
                occ, capacity);
    } else if (isfinite(in.t_star)) {
        in.occ_error = fabs(occ - capacity) / capacity;
        if (!(in.occ_error <= 1e-6))
            return llc_errf(
                err, errlen, -EDOM,
                "equilibrium: occupancies add up to %.9g lines, not the %g of the cache", occ,
                capacity);
    }
    if (info)
        *info = in;
    return 0;
}

/* ---- docs/METHODS.md §12.6 probe anchor and unprofiled bound --------------------------------- */

const double llc_contention_stratum_z[LLC_CONTENTION_STRATA] = {-2, -1, 0, 1, 2};
const double llc_contention_stratum_pi[LLC_CONTENTION_STRATA] = {0.0668, 0.2417, 0.3829, 0.2417,
                                                                 0.0668};

static double anchor_cost(const struct llc_statmodel_model *m, double rate, const double *tau,
                          const double *phi, size_t n, double lng)
{
    double s = 0;
    for (size_t j = 0; j < n; j++) {
        if (!(phi[j] > 0))
            continue;
        const double f = llc_statmodel_footprint(m, exp(lng) * rate * tau[j]);
        const double r = f > 0 ? log(f) - log(phi[j]) : 1e3;
        s += r * r;
    }
    return s;
}

int llc_contention_anchor(const struct llc_statmodel_model *m, double rate, const double *tau,
                          const double *phi_hat, size_t n, double *gamma, double *rms, char *err,
                          size_t errlen)
{
    *gamma = 1;
    if (rms)
        *rms = NAN;
    size_t used = 0;
    for (size_t j = 0; j < n; j++)
        used += phi_hat[j] > 0 && tau[j] > 0;
    if (!(llc_statmodel_model_total(m) > 0) || !(rate > 0) || used == 0)
        return llc_errf(err, errlen, -ENODATA,
                        "anchor: no probe reading with a footprint (%zu of %zu)", used, n);
    const double g = 0.5 * (sqrt(5.0) - 1);
    double a = -3, b = 3;
    double x1 = b - g * (b - a), x2 = a + g * (b - a);
    double f1 = anchor_cost(m, rate, tau, phi_hat, n, x1),
           f2 = anchor_cost(m, rate, tau, phi_hat, n, x2);
    while (b - a > 1e-9) {
        if (f1 <= f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - g * (b - a);
            f1 = anchor_cost(m, rate, tau, phi_hat, n, x1);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + g * (b - a);
            f2 = anchor_cost(m, rate, tau, phi_hat, n, x2);
        }
    }
    const double x = 0.5 * (a + b);
    *gamma = exp(x);
    if (rms)
        *rms = sqrt(anchor_cost(m, rate, tau, phi_hat, n, x) / (double)used);
    return 0;
}

bool llc_contention_anchor_ok(double gamma)
{
    return fabs(log(gamma)) <= log(LLC_CONTENTION_ANCHOR_TOL) + 1e-12;
}

double llc_contention_unprofiled_lambda(const double *tau, const double *phi_hat, size_t n)
{
    double l = 0;
    for (size_t j = 0; j < n; j++)
        if (tau[j] > 0 && phi_hat[j] > 0)
            l = fmax(l, phi_hat[j] / tau[j]);
    return l;
}
