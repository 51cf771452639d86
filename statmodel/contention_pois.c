/* P(Pois(x) < w), the set-associative LRU grid's hit probability
 * (docs/METHODS.md §12.2): a line survives while fewer than w distinct
 * others of its set were touched, x of them expected (lines spread over the
 * sets at random, the binomial count with many sets). Exact, and
 * tabulated for a prediction that evaluates it millions of times.
 *
 * The table: cubic Hermite in x on nodes h = 1/64 apart, on the exact
 * values and slopes dP/dx = -pmf(w - 1, x). The error is below h^4 / 384
 * times P's largest fourth derivative, a third difference of Poisson
 * probabilities: up to 3 near x = 0 for w < 8 (w = 2: 4.7e-10), small
 * and falling with w from there on. tests/contention/test_contention_pois.c
 * measures 4.4e-10 for w < 8, 3.2e-12 at w = 8 and 5e-13 at w = 16. The
 * table ends at the first node where P < 1e-9: past it the exact sum
 * answers, so the grid's stopping rule (P < 1e-12) sees exact values. */
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "contention_internal.h"

/* 1 / k! (k < 64) for the polynomial below. */
static const double inv_fact[64] = {1,
                                    1,
                                    0.5,
                                    0.16666666666666666,
                                    0.041666666666666664,
                                    0.0083333333333333332,
                                    0.0013888888888888889,
                                    0.00019841269841269841,
                                    2.4801587301587302e-05,
                                    2.7557319223985893e-06,
                                    2.7557319223985888e-07,
                                    2.505210838544172e-08,
                                    2.08767569878681e-09,
                                    1.6059043836821613e-10,
                                    1.1470745597729725e-11,
                                    7.6471637318198164e-13,
                                    4.7794773323873853e-14,
                                    2.8114572543455206e-15,
                                    1.5619206968586225e-16,
                                    8.2206352466243295e-18,
                                    4.1103176233121648e-19,
                                    1.9572941063391263e-20,
                                    8.8967913924505741e-22,
                                    3.8681701706306841e-23,
                                    1.6117375710961184e-24,
                                    6.4469502843844736e-26,
                                    2.4795962632247976e-27,
                                    9.183689863795546e-29,
                                    3.2798892370698378e-30,
                                    1.1309962886447716e-31,
                                    3.7699876288159054e-33,
                                    1.2161250415535179e-34,
                                    3.8003907548547434e-36,
                                    1.1516335620771951e-37,
                                    3.3871575355211618e-39,
                                    9.6775929586318907e-41,
                                    2.6882202662866363e-42,
                                    7.2654601791530714e-44,
                                    1.911963205040282e-45,
                                    4.9024697565135435e-47,
                                    1.2256174391283858e-48,
                                    2.9893108271424046e-50,
                                    7.117406731291439e-52,
                                    1.6552108677421951e-53,
                                    3.7618428812322616e-55,
                                    8.3596508471828045e-57,
                                    1.817315401561479e-58,
                                    3.866628513960594e-60,
                                    8.0554760707512364e-62,
                                    1.6439747083165791e-63,
                                    3.287949416633158e-65,
                                    6.4469596404571724e-67,
                                    1.2397999308571486e-68,
                                    2.3392451525606576e-70,
                                    4.3319354677049218e-72,
                                    7.8762463049180392e-74,
                                    1.4064725544496498e-75,
                                    2.4674957095607893e-77,
                                    4.2543029475186022e-79,
                                    7.2106829618959365e-81,
                                    1.2017804936493226e-82,
                                    1.9701319568021682e-84,
                                    3.1776321883905942e-86,
                                    5.0438606164930067e-88};

/* e^-x sum_{k<w} x^k / k!, the sum as four Horner chains in x^4 (k = r
 * mod 4, combined as (A + x B) + x^2 (C + x D)): a quarter of the forward
 * sum's chain of dependent multiplications, which was most of the
 * set-associative grid's time; positive terms, so the same value to a few
 * ulps. Past x = 745 e^-x is 0, as the forward sum gives. */
double sm_contention_pois_hit(double x, unsigned w)
{
    if (!(x > 0))
        return 1;
    if (x > 745)
        return 0;
    if (w > LLC_ARRAY_LEN(inv_fact)) {
        double term = exp(-x), sum = term;
        for (unsigned k = 1; k < w; k++) {
            term *= x / k;
            sum += term;
        }
        return sum < 1 ? sum : 1;
    }
    const double x2 = x * x, x4 = x2 * x2;
    double a = 0, b = 0, c = 0, d = 0;
    for (unsigned k = (w + 3) & ~3u; k >= 4; k -= 4) {
        a = a * x4 + (k - 4 < w ? inv_fact[k - 4] : 0);
        b = b * x4 + (k - 3 < w ? inv_fact[k - 3] : 0);
        c = c * x4 + (k - 2 < w ? inv_fact[k - 2] : 0);
        d = d * x4 + (k - 1 < w ? inv_fact[k - 1] : 0);
    }
    const double s = exp(-x) * ((a + x * b) + x2 * (c + x * d));
    return s < 1 ? s : 1;
}

/* pmf(k, x) = e^-x x^k / k!, in logs (x^k / k! overflows past k ~ 170;
 * here k < 64, but x up to the table's end). */
static double pois_pmf(unsigned k, double x)
{
    if (!(x > 0))
        return k == 0 ? 1 : 0;
    return exp(-x + k * log(x) - lgamma(k + 1.0));
}

#define NODES_PER_UNIT 64

struct sm_pois_table *sm_pois_table_new(unsigned w)
{
    if (w < 1 || w > LLC_CONTENTION_POIS_WAYS)
        return NULL;
    /* P falls below 1e-9 before x = w + 12 sqrt(w) + 30 (w = 64: 190) */
    const double x_max = w + 12 * sqrt(w) + 30;
    const size_t cap = (size_t)(x_max * NODES_PER_UNIT) + 1;
    struct sm_pois_table *t = malloc(sizeof(*t));
    double(*c)[4] = malloc(cap * sizeof(*c));
    if (!t || !c) {
        free(t);
        free(c);
        return NULL;
    }
    const double h = 1.0 / NODES_PER_UNIT;
    double p0 = 1, d0 = -h * pois_pmf(w - 1, 0);
    size_t j = 0;
    for (; j < cap && p0 >= 1e-9; j++) {
        const double x1 = (double)(j + 1) * h;
        const double p1 = sm_contention_pois_hit(x1, w), d1 = -h * pois_pmf(w - 1, x1);
        c[j][0] = p0;
        c[j][1] = d0;
        c[j][2] = 3 * (p1 - p0) - 2 * d0 - d1;
        c[j][3] = 2 * (p0 - p1) + d0 + d1;
        p0 = p1;
        d0 = d1;
    }
    *t = (struct sm_pois_table){.inv_h = NODES_PER_UNIT, .x_end = (double)j * h, .c = c};
    return t;
}

void sm_pois_table_free(struct sm_pois_table *t)
{
    if (t)
        free((void *)t->c);
    free(t);
}
