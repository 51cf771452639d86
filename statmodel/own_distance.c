/* A reuse's distance in its phase's own references (docs/METHODS.md
 * §12.7): the references strictly between a sample and its reuse that
 * fall in windows of the sample's phase. A sampler counts every reference
 * of the program; a phase's model runs on its own. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"
#include "sm_internal.h"

struct llc_statmodel_own_clock {
    size_t n;       /* windows */
    size_t labels;  /* distinct labels >= 0 */
    double *start;  /* first reference of each window, n + 1 (the end last) */
    int *slot;      /* each window's label as an index into the labels, -1: none */
    double *before; /* [slot * (n + 1) + w]: references of that label in windows < w */
    int *ids;       /* the labels */
};

void llc_statmodel_own_clock_destroy(struct llc_statmodel_own_clock *c)
{
    if (!c)
        return;
    free(c->start);
    free(c->slot);
    free(c->before);
    free(c->ids);
    free(c);
}

int llc_statmodel_own_clock_create(const double *refs, const int *labels, size_t n,
                                   struct llc_statmodel_own_clock **out, char *err, size_t errlen)
{
    *out = NULL;
    int rc = 0;
    int *ids = malloc((n ? n : 1) * sizeof(*ids));
    struct llc_statmodel_own_clock *c = calloc(1, sizeof(*c));
    if (!ids || !c || !(c->start = malloc((n + 1) * sizeof(double))) ||
        !(c->slot = malloc((n ? n : 1) * sizeof(int)))) {
        rc = llc_errf(err, errlen, -ENOMEM, "own clock: out of memory");
        goto out;
    }
    c->n = n;
    c->start[0] = 0;
    for (size_t w = 0; w < n; w++) {
        if (!(refs[w] >= 0) || !isfinite(refs[w])) {
            rc = llc_errf(err, errlen, -EINVAL, "own clock: window %zu has %g references", w,
                          refs[w]);
            goto out;
        }
        c->start[w + 1] = c->start[w] + refs[w];
        c->slot[w] = -1;
        if (labels[w] < 0)
            continue;
        size_t j = 0;
        while (j < c->labels && ids[j] != labels[w])
            j++;
        if (j == c->labels)
            ids[c->labels++] = labels[w];
        c->slot[w] = (int)j;
    }
    c->before = malloc((c->labels ? c->labels : 1) * (n + 1) * sizeof(double));
    if (!c->before) {
        rc = llc_errf(err, errlen, -ENOMEM, "own clock: out of memory");
        goto out;
    }
    for (size_t j = 0; j < c->labels; j++) {
        double *b = &c->before[j * (n + 1)];
        b[0] = 0;
        for (size_t w = 0; w < n; w++)
            b[w + 1] = b[w] + (c->slot[w] == (int)j ? refs[w] : 0);
    }
    c->ids = ids;
    ids = NULL;
    *out = c;
    c = NULL;
out:
    llc_statmodel_own_clock_destroy(c);
    free(ids);
    return rc;
}

/* The window holding reference t (n: at or past the end). */
static size_t window_of(const struct llc_statmodel_own_clock *c, double t)
{
    if (!(t < c->start[c->n]))
        return c->n;
    return sm_last_at_most(c->start, c->n, t);
}

/* References of label slot j before reference t. */
static double own_before(const struct llc_statmodel_own_clock *c, int j, double t)
{
    const size_t w = window_of(c, t);
    const double *b = &c->before[(size_t)j * (c->n + 1)];
    if (w == c->n)
        return b[c->n];
    return b[w] + (c->slot[w] == j ? t - c->start[w] : 0);
}

int llc_statmodel_own_clock_label(const struct llc_statmodel_own_clock *c, uint64_t pos)
{
    const size_t w = window_of(c, (double)pos);
    return w == c->n || c->slot[w] < 0 ? -1 : c->ids[c->slot[w]];
}

uint64_t llc_statmodel_own_distance(const struct llc_statmodel_own_clock *c, uint64_t pos,
                                    uint64_t distance)
{
    const size_t w = window_of(c, (double)pos);
    if (w == c->n || c->slot[w] < 0)
        return distance;
    const int j = c->slot[w];
    /* the references in between are pos + 1 .. pos + distance */
    const double own =
        own_before(c, j, (double)pos + 1 + (double)distance) - own_before(c, j, (double)pos + 1);
    /* a reuse that ran past the windows keeps its own part */
    const double past = (double)pos + 1 + (double)distance - c->start[c->n];
    const double d = own + (past > 0 ? past : 0);
    return d < (double)distance ? (uint64_t)llround(d) : distance;
}

const int *llc_statmodel_own_clock_labels(const struct llc_statmodel_own_clock *c, size_t *n)
{
    *n = c->labels;
    return c->ids;
}

double llc_statmodel_own_clock_span(const struct llc_statmodel_own_clock *c, uint64_t pos,
                                    uint64_t distance, double *refs)
{
    const double a = (double)pos + 1, b = a + (double)distance;
    double labelled = 0;
    for (size_t j = 0; j < c->labels; j++) {
        refs[j] = own_before(c, (int)j, b) - own_before(c, (int)j, a);
        labelled += refs[j];
    }
    /* past the windows: the start's, as llc_statmodel_own_distance has it */
    const size_t w = window_of(c, (double)pos);
    const double past = b - fmax(a, c->start[c->n]);
    if (w < c->n && c->slot[w] >= 0 && past > 0) {
        refs[c->slot[w]] += past;
        labelled += past;
    }
    return fmax(0, (double)distance - labelled);
}
