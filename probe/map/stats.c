/* Correlations and the map summary. */
#include "llcprobe/map.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double llc_map_pearson(const double *x, const double *y, size_t n)
{
    if (n < 2)
        return NAN;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        const double dx = x[i] - mx, dy = y[i] - my;
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

struct ranked {
    double v;
    size_t i;
};

static int by_value(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    return (x->v > y->v) - (x->v < y->v);
}

/* Ranks with ties sharing their mean rank. */
static int rank(const double *v, size_t n, double *out)
{
    struct ranked *r = malloc(n * sizeof(*r));
    if (!r)
        return -1;
    for (size_t i = 0; i < n; i++)
        r[i] = (struct ranked){v[i], i};
    qsort(r, n, sizeof(*r), by_value);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && r[j + 1].v == r[i].v)
            j++;
        const double mean_rank = 0.5 * (double)(i + j) + 1.0;
        for (size_t k = i; k <= j; k++)
            out[r[k].i] = mean_rank;
        i = j + 1;
    }
    free(r);
    return 0;
}

double llc_map_spearman(const double *x, const double *y, size_t n)
{
    double *rx = malloc(n * sizeof(*rx)), *ry = malloc(n * sizeof(*ry));
    double rho = NAN;
    if (!rx || !ry || rank(x, n, rx) < 0 || rank(y, n, ry) < 0)
        goto out;
    rho = llc_map_pearson(rx, ry, n);
out:
    free(rx);
    free(ry);
    return rho;
}

void llc_map_summarize(const struct llc_map_result *r, struct llc_map_summary *out)
{
    memset(out, 0, sizeof(*out));
    out->retest_pearson = NAN;
    double sum = 0, sum2 = 0;
    out->min = INFINITY;
    out->max = -INFINITY;
    for (uint32_t u = 0; u < r->units; u++) {
        if (!r->measured[u] || (r->excluded && r->excluded[u]))
            continue;
        const double m = (double)r->misses[u];
        out->n++;
        out->total_misses += r->misses[u];
        out->total_accesses += r->accesses[u];
        sum += m;
        sum2 += m * m;
        out->min = m < out->min ? m : out->min;
        out->max = m > out->max ? m : out->max;
        /* Insertion into the top ten, most misses first, lower id on ties. */
        unsigned pos = out->n_hottest;
        while (pos > 0 && r->misses[out->hottest[pos - 1]] < r->misses[u])
            pos--;
        if (pos < 10) {
            const unsigned last = out->n_hottest < 10 ? out->n_hottest : 9;
            memmove(&out->hottest[pos + 1], &out->hottest[pos],
                    (last - pos) * sizeof(out->hottest[0]));
            out->hottest[pos] = u;
            if (out->n_hottest < 10)
                out->n_hottest++;
        }
    }
    if (out->n == 0) {
        out->min = out->max = 0;
        return;
    }
    out->mean = sum / out->n;
    out->sd = out->n > 1 ? sqrt(fmax(0, (sum2 - sum * sum / out->n) / (out->n - 1))) : 0;
    if (r->sweeps < 2)
        return;
    double *a = malloc(out->n * sizeof(*a)), *b = malloc(out->n * sizeof(*b));
    if (a && b) {
        size_t k = 0;
        for (uint32_t u = 0; u < r->units; u++)
            if (r->measured[u] && !(r->excluded && r->excluded[u])) {
                a[k] = (double)r->sweep_misses[u];
                b[k++] = (double)r->sweep_misses[r->units + u];
            }
        out->retest_pearson = llc_map_pearson(a, b, k);
    }
    free(a);
    free(b);
}
