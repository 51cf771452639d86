/* Aligning two cuttings of one run by position (instructions): each window
 * of one is paired with the window of the other it overlaps most, so two
 * labellings with different window counts can be compared window by window
 * instead of index by index (which drifts once one side's windows are
 * longer). */
#include <errno.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"

static int total(const uint64_t *len, size_t n, uint64_t *out)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        if (len[i] > UINT64_MAX - s)
            return -EOVERFLOW;
        s += len[i];
    }
    *out = s;
    return 0;
}

int llc_phase_align(const uint64_t *len_a, size_t n_a, const uint64_t *len_b, size_t n_b,
                    size_t *map, struct llc_phase_alignment *info, char *err, size_t errlen)
{
    struct llc_phase_alignment a = {0};
    if (total(len_a, n_a, &a.total_a) < 0 || total(len_b, n_b, &a.total_b) < 0)
        return llc_errf(err, errlen, -EOVERFLOW, "window lengths add up to more than 2^64 - 1");
    const uint64_t hi = a.total_a > a.total_b ? a.total_a : a.total_b;
    const uint64_t lo = a.total_a > a.total_b ? a.total_b : a.total_a;
    a.total_diff = hi ? (double)(hi - lo) / (double)hi : 0.0;
    /* Both sequences are sorted ranges: one pass, j at the first b window
     * that may still overlap window i. */
    size_t j = 0;
    uint64_t a0 = 0, b0 = 0; /* starts of window i and window j */
    for (size_t i = 0; i < n_a; i++) {
        const uint64_t a1 = a0 + len_a[i];
        while (j < n_b && b0 + len_b[j] <= a0) {
            b0 += len_b[j];
            j++;
        }
        size_t best = LLC_PHASE_NO_WINDOW;
        uint64_t best_overlap = 0, s = b0;
        for (size_t k = j; k < n_b && s < a1; k++) {
            const uint64_t e = s + len_b[k];
            const uint64_t lo_k = s > a0 ? s : a0, hi_k = e < a1 ? e : a1;
            if (hi_k > lo_k && hi_k - lo_k > best_overlap) {
                best_overlap = hi_k - lo_k;
                best = k;
            }
            s = e;
        }
        /* A window mostly past b's end (the run's last, partial window
         * against exp-bbv's last whole interval) is not b's to label. */
        if (best_overlap < len_a[i] - len_a[i] / 2)
            best = LLC_PHASE_NO_WINDOW;
        map[i] = best;
        a.matched += best != LLC_PHASE_NO_WINDOW;
        a0 = a1;
    }
    *info = a;
    return 0;
}

int llc_phase_ari_aligned(const int *labels_a, size_t n_a, const int *labels_b, size_t n_b,
                          const size_t *map, double *ari, size_t *compared, char *err,
                          size_t errlen)
{
    int rc = 0;
    int *x = malloc((n_a + 1) * sizeof *x), *y = malloc((n_a + 1) * sizeof *y);
    if (!x || !y) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for %zu labels", n_a);
        goto out;
    }
    size_t n = 0;
    for (size_t i = 0; i < n_a; i++) {
        if (map[i] == LLC_PHASE_NO_WINDOW)
            continue;
        if (map[i] >= n_b) {
            rc = llc_errf(err, errlen, -EINVAL, "window %zu is mapped to window %zu of %zu", i,
                          map[i], n_b);
            goto out;
        }
        x[n] = labels_a[i];
        y[n] = labels_b[map[i]];
        n++;
    }
    rc = llc_phase_ari(x, y, n, ari, err, errlen);
    if (rc == 0)
        *compared = n;
out:
    free(x);
    free(y);
    return rc;
}
