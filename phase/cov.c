/* CoV and Corrected CoV of a per-window metric under a phase labelling (docs/METHODS.md §10.9). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"

/* Group key: phases keep their id, every negative label is the junk phase,
 * and windows moved by the CCoV rule go to the virtual phase. */
#define GROUP_JUNK (-1)
#define GROUP_VIRTUAL (-2)

struct member {
    int group;
    double value;
};

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    return (x->group > y->group) - (x->group < y->group);
}

/* sd/|mean| from the population sum of squared deviations. */
static int finish_cov(double mean, double ss, size_t n, double *cov)
{
    const double sd = sqrt(ss / (double)n);
    if (sd == 0.0) {
        *cov = 0.0;
        return 0;
    }
    if (mean == 0.0)
        return -EDOM;
    *cov = sd / fabs(mean);
    return 0;
}

static int group_cov(const struct member *m, size_t n, double *cov)
{
    double mean = 0.0, ss = 0.0;
    for (size_t i = 0; i < n; i++)
        mean += m[i].value;
    mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (m[i].value - mean) * (m[i].value - mean);
    return finish_cov(mean, ss, n, cov);
}

static int whole_cov(const double *x, size_t n, double *cov)
{
    double mean = 0.0, ss = 0.0;
    for (size_t i = 0; i < n; i++)
        mean += x[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    return finish_cov(mean, ss, n, cov);
}

/* Weighted CoV over groups; the virtual group's CoV is `virtual_cov`. */
static int weighted_cov(struct member *m, size_t n, double virtual_cov, double *out, char *err,
                        size_t errlen)
{
    qsort(m, n, sizeof *m, cmp_member);
    double total = 0.0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && m[j].group == m[i].group)
            j++;
        double cov = virtual_cov;
        if (m[i].group != GROUP_VIRTUAL && group_cov(m + i, j - i, &cov) < 0)
            return llc_errf(err, errlen, -EDOM, "phase %d has mean 0 and a spread: CoV undefined",
                            m[i].group);
        total += (double)(j - i) / (double)n * cov;
        i = j;
    }
    *out = total;
    return 0;
}

static int check_metric(const double *metric, size_t n, char *err, size_t errlen)
{
    if (n == 0)
        return llc_errf(err, errlen, -EINVAL, "no windows");
    for (size_t t = 0; t < n; t++)
        if (!isfinite(metric[t]))
            return llc_errf(err, errlen, -EINVAL, "window %zu: metric is not finite", t);
    return 0;
}

/* Fills m with each window's group; single-window runs go to the virtual
 * phase when `correct`. */
static void assign_groups(const int *phases, const double *metric, size_t n, bool correct,
                          struct member *m)
{
    for (size_t t = 0; t < n; t++) {
        int g = phases[t] < 0 ? GROUP_JUNK : phases[t];
        if (correct && g != GROUP_JUNK) {
            const bool same_prev = t > 0 && phases[t - 1] == phases[t];
            const bool same_next = t + 1 < n && phases[t + 1] == phases[t];
            if (!same_prev && !same_next)
                g = GROUP_VIRTUAL;
        }
        m[t] = (struct member){.group = g, .value = metric[t]};
    }
}

static int cov_impl(const int *phases, const double *metric, size_t n, bool correct, double *out,
                    char *err, size_t errlen)
{
    int rc = check_metric(metric, n, err, errlen);
    if (rc < 0)
        return rc;
    struct member *m = malloc(n * sizeof *m);
    if (!m)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for %zu windows", n);

    double whole = 0.0;
    if (correct) {
        if (whole_cov(metric, n, &whole) < 0) {
            rc = llc_errf(err, errlen, -EDOM, "metric has mean 0 and a spread: CoV undefined");
            goto out;
        }
    }
    assign_groups(phases, metric, n, correct, m);
    rc = weighted_cov(m, n, whole, out, err, errlen);
out:
    free(m);
    return rc;
}

int llc_phase_cov(const int *phases, const double *metric, size_t n, double *cov, char *err,
                  size_t errlen)
{
    return cov_impl(phases, metric, n, false, cov, err, errlen);
}

int llc_phase_ccov(const int *phases, const double *metric, size_t n, double *ccov, char *err,
                   size_t errlen)
{
    return cov_impl(phases, metric, n, true, ccov, err, errlen);
}
