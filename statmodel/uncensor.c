/* Reuse of a run that ended (docs/METHODS.md §7.7). A sample taken at
 * reference s of a run of `end` references sees its reuse at distance d
 * only if s + d < end; otherwise it is recorded as dangling. Over the run
 * the histogram describes the reuse pairs exactly, but as the description
 * of the program in the middle of its run, where the models apply it (a
 * reuse there reaches back, and the run's start is the cold-start model's
 * age), it has too few long reuses and too many dangling samples.
 *
 * With samples spread like the references of the stretches [start_i,
 * start_i + len_i) (a phase's windows), a reuse at distance d is seen with
 * probability pi(d) = sum_i clamp(end - d - start_i, 0, len_i) / sum_i
 * len_i. Each finite sample stands for 1 / pi(d) (the Horvitz-Thompson
 * estimate), and the dangling count loses the samples the weights put back,
 * so the total stays N_s; where it would fall below 0 (sampling noise), it
 * is 0 and the finite counts are scaled to keep N_s. */
#include "llcprobe/statmodel.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"

double llc_statmodel_seen_share(const double *start, const double *len, size_t n, double end,
                                double d)
{
    double seen = 0, all = 0;
    for (size_t i = 0; i < n; i++) {
        all += len[i];
        seen += fmin(len[i], fmax(0, end - d - start[i]));
    }
    return all > 0 ? seen / all : 0;
}

/* seen_share for distances that only grow: the stretches are in order, so
 * the cut end - d only moves back over them (prefix sums, one walk). */
struct seen_walk {
    const double *start, *len;
    double *prefix; /* prefix[i] = sum of len[0..i-1] */
    size_t n, j;    /* j: stretches wholly before the cut */
    double end;
};

static double seen_at(struct seen_walk *s, double d)
{
    const double cut = s->end - d;
    while (s->j > 0 && s->start[s->j - 1] + s->len[s->j - 1] > cut)
        s->j--;
    const double part = s->j < s->n ? fmin(s->len[s->j], fmax(0, cut - s->start[s->j])) : 0;
    return (s->prefix[s->j] + part) / s->prefix[s->n];
}

int llc_statmodel_hist_uncensor(const struct llc_statmodel_hist *h, const double *start,
                                const double *len, size_t n, double end, double kept,
                                struct llc_statmodel_hist *out, char *err, size_t errlen)
{
    if (n == 0 || !(end > 0) || !isfinite(end))
        return llc_errf(err, errlen, -EINVAL, "uncensor: %zu stretches in a run of %g references",
                        n, end);
    double all = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(start[i] >= 0) || !(len[i] >= 0) || !(start[i] + len[i] <= end * (1 + 1e-9)))
            return llc_errf(err, errlen, -EINVAL,
                            "uncensor: stretch %zu [%g, +%g) outside the run of %g references", i,
                            start[i], len[i], end);
        if (i > 0 && !(start[i] >= start[i - 1] + len[i - 1] * (1 - 1e-9)))
            return llc_errf(err, errlen, -EINVAL,
                            "uncensor: stretch %zu starts at %g, inside or before stretch %zu", i,
                            start[i], i - 1);
        all += len[i];
    }
    if (!(all > 0))
        return llc_errf(err, errlen, -EINVAL, "uncensor: the stretches hold no references");
    size_t nb = 0;
    for (size_t b = llc_statmodel_hist_next(h, 0); b < LLC_STATMODEL_BUCKETS;
         b = llc_statmodel_hist_next(h, b + 1))
        nb++;
    struct llc_statmodel_bucket_count *pairs = malloc((nb ? nb : 1) * sizeof(*pairs));
    struct seen_walk walk = {.start = start,
                             .len = len,
                             .prefix = malloc((n + 1) * sizeof(double)),
                             .n = n,
                             .j = n,
                             .end = end};
    if (!pairs || !walk.prefix) {
        free(pairs);
        free(walk.prefix);
        return llc_errf(err, errlen, -ENOMEM, "uncensor: out of memory");
    }
    walk.prefix[0] = 0;
    for (size_t i = 0; i < n; i++)
        walk.prefix[i + 1] = walk.prefix[i] + len[i];
    double finite = 0, weighted = 0;
    size_t k = 0;
    for (size_t b = llc_statmodel_hist_next(h, 0); b < LLC_STATMODEL_BUCKETS;
         b = llc_statmodel_hist_next(h, b + 1)) {
        const double c = llc_statmodel_hist_count(h, b);
        /* a sample was seen, so some position allowed its distance: where
         * the bucket's middle is past every stretch, its smallest distance */
        double pi = seen_at(&walk, llc_statmodel_bucket_mid(b));
        if (!(pi > 0))
            pi = llc_statmodel_seen_share(start, len, n, end, (double)llc_statmodel_bucket_lo(b));
        const double w = pi > 0 ? 1 / pi : 1;
        pairs[k++] = (struct llc_statmodel_bucket_count){.bucket = b, .count = c * w};
        finite += c;
        weighted += c * w;
    }
    const double total = finite + llc_statmodel_hist_dangling(h);
    double n_inf =
        kept >= 0 && kept <= 1 ? kept * llc_statmodel_hist_dangling(h) : total - weighted;
    if (n_inf < 0)
        n_inf = 0;
    if (weighted > 0 && total - n_inf != weighted)
        for (size_t j = 0; j < k; j++)
            pairs[j].count *= (total - n_inf) / weighted;
    const int rc = llc_statmodel_hist_set_pairs(out, pairs, k, n_inf, err, errlen);
    free(pairs);
    free(walk.prefix);
    return rc;
}
