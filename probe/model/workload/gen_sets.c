/* Set-shaped generators (hotsets, gaussian): physical addresses chosen
 * through the cache geometry, so the requested per-set intensity is what the
 * LLC sees. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "model/workload/wl_internal.h"

void wl_sets_free(struct wl_sets *s)
{
    free(s->line_of);
    free(s->prob);
    free(s->alias);
    free(s->weight);
    s->line_of = NULL;
    s->prob = NULL;
    s->alias = NULL;
    s->weight = NULL;
}

/* Walks the region's lines in address order and keeps the first
 * lines_per_set of each set: the footprint is as compact as the slice hash
 * allows. */
static int build_line_table(struct wl_sets *s, const struct llc_sim_geometry *g, uint64_t base,
                            uint64_t *extent, char *err, size_t errlen)
{
    const uint64_t want = (uint64_t)s->nsets * s->lines_per_set;
    uint32_t *count = calloc(s->nsets, sizeof(*count));
    int rc = 0;
    if (!count) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for the set table");
        goto out;
    }
    /* A sane hash fills every set within a few times the footprint. */
    const uint64_t limit = want * 64 < UINT32_MAX ? want * 64 : UINT32_MAX;
    uint64_t filled = 0, l = 0;
    for (; l < limit && filled < want; l++) {
        struct llc_sim_loc loc;
        llc_sim_geometry_locate(g, base + l * g->line_size, &loc);
        uint32_t *c = &count[loc.set];
        if (*c < s->lines_per_set) {
            s->line_of[(uint64_t)loc.set * s->lines_per_set + *c] = (uint32_t)l;
            (*c)++;
            filled++;
        }
    }
    if (filled < want) {
        rc = llc_errf(err, errlen, -EINVAL,
                      "the cache geometry's slice hash leaves some sets without lines");
        goto out;
    }
    *extent = l * g->line_size;
out:
    free(count);
    return rc;
}

/* Vose's alias method: O(1) draws from any weight vector. */
int wl_alias_build(const double *w, uint32_t n, double *prob, uint32_t *alias)
{
    int rc = 0;
    uint32_t *small = malloc(n * sizeof(*small));
    uint32_t *large = malloc(n * sizeof(*large));
    double *scaled = malloc(n * sizeof(*scaled));
    if (!small || !large || !scaled) {
        rc = -ENOMEM;
        goto out;
    }
    uint32_t ns = 0, nl = 0;
    for (uint32_t i = 0; i < n; i++) {
        scaled[i] = w[i] * n;
        if (scaled[i] < 1)
            small[ns++] = i;
        else
            large[nl++] = i;
    }
    while (ns && nl) {
        const uint32_t a = small[--ns], b = large[--nl];
        prob[a] = scaled[a];
        alias[a] = b;
        scaled[b] = scaled[b] + scaled[a] - 1;
        if (scaled[b] < 1)
            small[ns++] = b;
        else
            large[nl++] = b;
    }
    /* Leftovers are 1 up to rounding. */
    while (nl) {
        const uint32_t b = large[--nl];
        prob[b] = 1;
        alias[b] = b;
    }
    while (ns) {
        const uint32_t a = small[--ns];
        prob[a] = 1;
        alias[a] = a;
    }
out:
    free(small);
    free(large);
    free(scaled);
    return rc;
}

static int hotsets_weights(struct llc_workload *w, char *err, size_t errlen)
{
    struct wl_sets *s = &w->sets;
    const uint32_t n = s->nsets;
    uint32_t hot = (uint32_t)(w->p.frac * n + 0.5);
    if (hot < 1)
        hot = 1;
    if (hot > n)
        hot = n;
    uint32_t *order = malloc(n * sizeof(*order));
    const double cold_w = hot < n ? (1 - w->p.weight) / (n - hot) : 0;
    const double hot_w = hot < n ? w->p.weight / hot : 1.0 / n;
    for (uint32_t i = 0; i < n; i++)
        s->weight[i] = cold_w;
    if (!order)
        return llc_errf(err, errlen, -ENOMEM, "hotsets: out of memory");
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    /* Partial Fisher-Yates: the first `hot` entries are a uniform sample. */
    for (uint32_t i = 0; i < hot; i++) {
        const uint32_t j = i + (uint32_t)llc_xoshiro_below_fast(&w->rng, n - i);
        const uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
        s->weight[order[i]] = hot_w;
    }
    free(order);
    return 0;
}

/* Coefficient of variation of N(1, sigma^2) truncated to (0, inf). */
static double truncated_cv(double sigma)
{
    const double a = -1 / sigma;
    const double lambda = exp(-a * a / 2) / sqrt(2 * M_PI) / (0.5 * erfc(a / M_SQRT2));
    const double mean = 1 + sigma * lambda;
    const double var = sigma * sigma * (1 + a * lambda - lambda * lambda);
    return sqrt(var > 0 ? var : 0) / mean;
}

/* Intensities must be positive, and cutting the Gaussian at 0 shrinks its
 * spread (cv 0.5 would come out as 0.46); so pick the sigma whose truncated
 * distribution has exactly the requested CV. truncated_cv rises
 * monotonically from 0 towards the half-normal's 0.756. */
static double sigma_for_cv(double cv)
{
    if (cv < 0.2) /* truncation below 1e-6 of the mass: no correction */
        return cv;
    double lo = cv, hi = 64;
    for (int i = 0; i < 100; i++) {
        const double mid = 0.5 * (lo + hi);
        if (truncated_cv(mid) < cv)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

static void gaussian_weights(struct llc_workload *w)
{
    struct wl_sets *s = &w->sets;
    const double sigma = sigma_for_cv(w->p.cv);
    double sum = 0;
    for (uint32_t i = 0; i < s->nsets; i++) {
        double v;
        do
            v = 1 + sigma * wl_rng_normal(&w->rng);
        while (v <= 0);
        s->weight[i] = v;
        sum += v;
    }
    for (uint32_t i = 0; i < s->nsets; i++)
        s->weight[i] /= sum;
}

int wl_sets_init(struct llc_workload *w, const struct llc_sim_geometry *g, char *err, size_t errlen)
{
    const char *kind = wl_kind_name(w->kind);
    if (!g)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: set-shaped workloads need the cache geometry (run them in the "
                        "simulator)",
                        kind);
    struct wl_sets *s = &w->sets;
    s->nsets = llc_sim_geometry_sets(g);
    const uint64_t per_set_bytes = (uint64_t)s->nsets * g->line_size;
    if (w->p.size < per_set_bytes)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: size must be at least %llu bytes (one line in each of the %u LLC "
                        "sets)",
                        kind, (unsigned long long)per_set_bytes, s->nsets);
    s->lines_per_set = (uint32_t)(w->p.size / per_set_bytes);
    const uint64_t want = (uint64_t)s->nsets * s->lines_per_set;
    s->line_of = malloc(want * sizeof(*s->line_of));
    s->prob = malloc(s->nsets * sizeof(*s->prob));
    s->alias = malloc(s->nsets * sizeof(*s->alias));
    s->weight = malloc(s->nsets * sizeof(*s->weight));
    if (!s->line_of || !s->prob || !s->alias || !s->weight)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory for the set table", kind);
    int rc = build_line_table(s, g, w->base, &w->extent, err, errlen);
    if (rc < 0)
        return rc;
    w->line_size = g->line_size;
    w->nlines = want;
    w->footprint = want * g->line_size;
    if (w->kind == WL_HOTSETS) {
        rc = hotsets_weights(w, err, errlen);
        if (rc < 0)
            return rc;
    } else {
        gaussian_weights(w);
    }
    if (wl_alias_build(s->weight, s->nsets, s->prob, s->alias) < 0)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory for the alias table", kind);
    return 0;
}

void wl_sets_fill(struct llc_workload *w, uint64_t *addrs, size_t n)
{
    const struct wl_sets *s = &w->sets;
    const uint64_t base = w->base, line = w->line_size;
    const uint32_t lps = s->lines_per_set;
    for (size_t i = 0; i < n; i++) {
        uint32_t set = (uint32_t)llc_xoshiro_below_fast(&w->rng, s->nsets);
        if (llc_rng_unit(llc_xoshiro_next(&w->rng)) >= s->prob[set])
            set = s->alias[set];
        const uint32_t j = lps > 1 ? (uint32_t)llc_xoshiro_below_fast(&w->rng, lps) : 0;
        addrs[i] = base + (uint64_t)s->line_of[(uint64_t)set * lps + j] * line;
    }
}
