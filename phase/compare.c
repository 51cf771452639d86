/* Comparing two phase analyses of one run: similarity matrices of their
 * vector sequences (the ScarPhase paper Fig. 3c) and the adjusted Rand index of their
 * labellings. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"

/* L1 norms of the n rows, checking the elements are usable. */
static int row_sums(const double *x, size_t dim, size_t n, double *sums)
{
    for (size_t r = 0; r < n; r++) {
        double s = 0.0;
        for (size_t i = 0; i < dim; i++) {
            const double v = x[r * dim + i];
            if (!isfinite(v) || v < 0.0)
                return -EINVAL;
            s += v;
        }
        sums[r] = s;
    }
    return 0;
}

/* d~ between rows r and q, each scaled to sum 1 (a zero row stays zero). */
static double row_distance(const double *x, size_t dim, const double *sums, size_t r, size_t q)
{
    const double sr = sums[r] > 0.0 ? 1.0 / sums[r] : 0.0;
    const double sq = sums[q] > 0.0 ? 1.0 / sums[q] : 0.0;
    const double *u = x + r * dim, *v = x + q * dim;
    double d = 0.0;
    for (size_t i = 0; i < dim; i++)
        d += fabs(u[i] * sr - v[i] * sq);
    return d / 2.0;
}

int llc_phase_similarity_diff(const double *a, size_t dim_a, const double *b, size_t dim_b,
                              size_t n, double *diff, char *err, size_t errlen)
{
    if (n < 2)
        return llc_errf(err, errlen, -EINVAL,
                        "a similarity matrix needs at least 2 windows, got %zu", n);
    if (dim_a == 0 || dim_b == 0)
        return llc_errf(err, errlen, -EINVAL, "vector dimension must be positive");
    int rc = 0;
    double *sa = malloc(n * sizeof *sa);
    double *sb = malloc(n * sizeof *sb);
    if (!sa || !sb) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for %zu windows", n);
        goto out;
    }
    if (row_sums(a, dim_a, n, sa) < 0 || row_sums(b, dim_b, n, sb) < 0) {
        rc = llc_errf(err, errlen, -EINVAL, "a vector element is negative or not finite");
        goto out;
    }
    double total = 0.0;
    for (size_t r = 0; r < n; r++)
        for (size_t q = r + 1; q < n; q++)
            total += fabs(row_distance(a, dim_a, sa, r, q) - row_distance(b, dim_b, sb, r, q));
    *diff = total / ((double)n * (double)(n - 1) / 2.0);
out:
    free(sa);
    free(sb);
    return rc;
}

struct pair {
    int a, b;
};

static int cmp_pair(const void *x, const void *y)
{
    const struct pair *p = x, *q = y;
    if (p->a != q->a)
        return (p->a > q->a) - (p->a < q->a);
    return (p->b > q->b) - (p->b < q->b);
}

static int cmp_int(const void *x, const void *y)
{
    const int p = *(const int *)x, q = *(const int *)y;
    return (p > q) - (p < q);
}

static double choose2(size_t k)
{
    return (double)k * (double)(k - (k > 0)) / 2.0;
}

/* Sum over runs of equal elements of C(run, 2). */
static double sum_pairs_int(const int *sorted, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && sorted[j] == sorted[i])
            j++;
        s += choose2(j - i);
        i = j;
    }
    return s;
}

int llc_phase_ari(const int *a, const int *b, size_t n, double *ari, char *err, size_t errlen)
{
    if (n < 2) {
        *ari = 1.0;
        return 0;
    }
    int rc = 0;
    /* Sorting instead of a contingency table: label counts can reach n. */
    struct pair *pairs = malloc(n * sizeof *pairs);
    int *labels = malloc(n * sizeof *labels);
    if (!pairs || !labels) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for %zu labels", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        pairs[i] = (struct pair){a[i], b[i]};
    qsort(pairs, n, sizeof *pairs, cmp_pair);
    double index = 0.0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && pairs[j].a == pairs[i].a && pairs[j].b == pairs[i].b)
            j++;
        index += choose2(j - i);
        i = j;
    }
    for (size_t i = 0; i < n; i++)
        labels[i] = a[i];
    qsort(labels, n, sizeof *labels, cmp_int);
    const double sum_a = sum_pairs_int(labels, n);
    for (size_t i = 0; i < n; i++)
        labels[i] = b[i];
    qsort(labels, n, sizeof *labels, cmp_int);
    const double sum_b = sum_pairs_int(labels, n);

    const double expected = sum_a * sum_b / choose2(n);
    const double max = (sum_a + sum_b) / 2.0;
    /* Only two identical trivial partitions (one cluster, or all singletons)
     * leave the index undefined; they agree perfectly. */
    *ari = max == expected ? 1.0 : (index - expected) / (max - expected);
out:
    free(pairs);
    free(labels);
    return rc;
}
