/* Whole-program estimate from phase-guided profiling (docs/METHODS.md §11.1). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"

struct sample {
    int phase;
    double value;
};

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmp_sample(const void *a, const void *b)
{
    const struct sample *x = a, *y = b;
    if (x->phase != y->phase)
        return (x->phase > y->phase) - (x->phase < y->phase);
    return (x->value > y->value) - (x->value < y->value);
}

/* Windows labelled `phase` in a sorted label array. */
static size_t count_label(const int *sorted, size_t n, int phase)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < phase)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < n && sorted[end] == phase)
        end++;
    return end - lo;
}

int llc_phase_profile_estimate(const int *phases, const bool *profiled, const double *values,
                               size_t n, double *estimate, double *coverage, char *err,
                               size_t errlen)
{
    int rc = 0;
    int *labels = malloc((n ? n : 1) * sizeof *labels);
    struct sample *samples = malloc((n ? n : 1) * sizeof *samples);
    if (!labels || !samples) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for %zu windows", n);
        goto out;
    }
    size_t n_labels = 0, n_samples = 0;
    for (size_t t = 0; t < n; t++) {
        if (phases[t] < 0)
            continue;
        labels[n_labels++] = phases[t];
        if (!profiled[t])
            continue;
        if (!isfinite(values[t])) {
            rc = llc_errf(err, errlen, -EINVAL, "profiled window %zu has no finite value", t);
            goto out;
        }
        samples[n_samples++] = (struct sample){.phase = phases[t], .value = values[t]};
    }
    if (n_samples == 0) {
        rc = llc_errf(err, errlen, -EDOM, "no window of a phase was profiled");
        goto out;
    }
    qsort(labels, n_labels, sizeof *labels, cmp_int);
    qsort(samples, n_samples, sizeof *samples, cmp_sample);

    double weighted = 0.0;
    size_t covered = 0;
    for (size_t i = 0; i < n_samples;) {
        size_t j = i;
        while (j < n_samples && samples[j].phase == samples[i].phase)
            j++;
        /* Several profiles of one phase mean mispredictions: the median
         * resists the odd window that was really another phase. */
        const size_t k = j - i;
        const double median = k % 2 ? samples[i + k / 2].value
                                    : (samples[i + k / 2 - 1].value + samples[i + k / 2].value) / 2;
        const size_t windows = count_label(labels, n_labels, samples[i].phase);
        weighted += (double)windows * median;
        covered += windows;
        i = j;
    }
    *estimate = weighted / (double)covered;
    *coverage = (double)covered / (double)n;
out:
    free(labels);
    free(samples);
    return rc;
}
