/* Virtual-address generators: uniform, stream, zipf. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "model/workload/wl_internal.h"

/* Zipf by rejection-inversion (Hörmann & Derflinger 1996, in the form of
 * Apache Commons RNG): O(1) time and memory for any n and alpha > 0, where an
 * alias table over millions of lines would cost hundreds of MiB. */
static double zipf_helper1(double x)
{
    return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

static double zipf_helper2(double x)
{
    return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x * (1.0 / 3) * (1 + 0.25 * x));
}

static double zipf_h(const struct wl_zipf *z, double x)
{
    return exp(-z->alpha * log(x));
}

static double zipf_hint(const struct wl_zipf *z, double x)
{
    const double lx = log(x);
    return zipf_helper2((1 - z->alpha) * lx) * lx;
}

static double zipf_hint_inv(const struct wl_zipf *z, double x)
{
    double t = x * (1 - z->alpha);
    if (t < -1)
        t = -1;
    return exp(zipf_helper1(t) * x);
}

/* The tail's mass, sum of k^-alpha over (head, n], by Euler-Maclaurin: the
 * integral plus endpoint corrections, accurate to ~1e-9 relative for
 * head >= 2^10. */
static double zipf_tail_mass(const struct wl_zipf *z, double head, double n)
{
    const double a = z->alpha;
    const double integral = a == 1 ? log(n / head) : (pow(n, 1 - a) - pow(head, 1 - a)) / (1 - a);
    const double ends = 0.5 * (pow(n, -a) - pow(head, -a));
    const double deriv = -a / 12 * (pow(n, -a - 1) - pow(head, -a - 1));
    return integral + ends + deriv;
}

static int zipf_init(struct wl_zipf *z, uint64_t n, double alpha)
{
    z->n = n;
    z->alpha = alpha;
    z->head = n < WL_ZIPF_HEAD ? (uint32_t)n : WL_ZIPF_HEAD;
    z->head_prob = malloc(z->head * sizeof(*z->head_prob));
    z->head_alias = malloc(z->head * sizeof(*z->head_alias));
    double *w = malloc(z->head * sizeof(*w));
    if (!z->head_prob || !z->head_alias || !w) {
        free(w);
        return -ENOMEM;
    }
    double head_sum = 0;
    for (uint32_t k = 0; k < z->head; k++) {
        w[k] = pow((double)k + 1, -alpha);
        head_sum += w[k];
    }
    for (uint32_t k = 0; k < z->head; k++)
        w[k] /= head_sum;
    const int rc = wl_alias_build(w, z->head, z->head_prob, z->head_alias);
    free(w);
    if (rc < 0)
        return rc;
    const double tail = z->head < n ? zipf_tail_mass(z, z->head, (double)n) : 0;
    z->head_mass = head_sum / (head_sum + tail);
    /* Rejection-inversion over ranks head+1 .. n (head >= 2, so the
     * hat of every rank lies inside its own integration cell). */
    z->h_x1 = zipf_hint(z, (double)z->head + 0.5);
    z->h_n = zipf_hint(z, (double)n + 0.5);
    z->s = 2 - zipf_hint_inv(z, zipf_hint(z, 2.5) - zipf_h(z, 2));
    return 0;
}

/* Popularity rank in [1, n]: the head by alias table (a few ns), the tail by
 * rejection-inversion over [head + 1, n] (tens of ns, but rarely). */
static uint64_t zipf_rank(const struct wl_zipf *z, struct llc_xoshiro *rng)
{
    if (llc_rng_unit(llc_xoshiro_next(rng)) < z->head_mass) {
        uint32_t k = (uint32_t)llc_xoshiro_below_fast(rng, z->head);
        if (llc_rng_unit(llc_xoshiro_next(rng)) >= z->head_prob[k])
            k = z->head_alias[k];
        return (uint64_t)k + 1;
    }
    for (;;) {
        const double u = z->h_n + llc_rng_unit(llc_xoshiro_next(rng)) * (z->h_x1 - z->h_n);
        const double x = zipf_hint_inv(z, u);
        double kd = floor(x + 0.5);
        if (kd < (double)z->head + 1)
            kd = (double)z->head + 1;
        else if (kd > (double)z->n)
            kd = (double)z->n;
        if (kd - x <= z->s || u >= zipf_hint(z, kd + 0.5) - zipf_h(z, kd))
            return (uint64_t)kd;
    }
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        const uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

void wl_zipf_free(struct wl_zipf *z)
{
    free(z->head_prob);
    free(z->head_alias);
    z->head_prob = NULL;
    z->head_alias = NULL;
}

int wl_basic_init(struct llc_workload *w, char *err, size_t errlen)
{
    w->nlines = (w->p.size + w->line_size - 1) / w->line_size;
    w->footprint = w->nlines * w->line_size;
    w->extent = w->footprint;
    if (w->kind == WL_STREAM) {
        w->footprint = w->p.size;
        w->extent = w->p.size;
    }
    if (w->kind == WL_ZIPF) {
        if (zipf_init(&w->zipf, w->nlines, w->p.alpha) < 0)
            return llc_errf(err, errlen, -ENOMEM, "zipf: out of memory");
        /* Hot lines scattered rather than packed at the start, like a real
         * heap's popular objects: rank r -> (a*r + b) mod n, gcd(a, n) = 1. */
        uint64_t a = 1;
        if (w->nlines > 1) {
            do
                a = 1 + llc_xoshiro_below_fast(&w->rng, w->nlines - 1);
            while (gcd_u64(a, w->nlines) != 1);
        }
        w->zipf.perm_a = a;
        w->zipf.perm_b = llc_xoshiro_below_fast(&w->rng, w->nlines);
    }
    if (w->nlines == 0)
        return llc_errf(err, errlen, -EINVAL, "%s: empty footprint", wl_kind_name(w->kind));
    return 0;
}

void wl_basic_fill(struct llc_workload *w, uint64_t *addrs, size_t n)
{
    const uint64_t base = w->base;
    const uint64_t line = w->line_size;
    switch (w->kind) {
    case WL_UNIFORM:
        for (size_t i = 0; i < n; i++)
            addrs[i] = base + llc_xoshiro_below_fast(&w->rng, w->nlines) * line;
        break;
    case WL_STREAM: {
        uint64_t pos = w->pos;
        const uint64_t stride = w->p.stride, size = w->p.size;
        for (size_t i = 0; i < n; i++) {
            addrs[i] = base + pos;
            pos += stride;
            if (pos >= size)
                pos -= size;
        }
        w->pos = pos;
        break;
    }
    case WL_ZIPF: {
        const struct wl_zipf *z = &w->zipf;
        for (size_t i = 0; i < n; i++) {
            const uint64_t r = zipf_rank(z, &w->rng) - 1;
            addrs[i] = base + ((z->perm_a * r + z->perm_b) % z->n) * line;
        }
        break;
    }
    default:
        break;
    }
}
