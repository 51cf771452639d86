/* A phase's measured spans (docs/METHODS.md §12.7): memory and the
 * checks the reader and the writer share. */
#include "llcprobe/profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "profile/profile_internal.h"

static void free_spans(struct llc_profile_spans *s)
{
    free(s->distance);
    free(s->samples);
    free(s->share);
    free(s->refs);
    *s = (struct llc_profile_spans){0};
}

void prof_spans_free(struct llc_profile_phase *ph)
{
    free_spans(&ph->spans);
}

int llc_profile_alloc_spans(const struct llc_profile *p, struct llc_profile_phase *ph, size_t n,
                            char *err, size_t errlen)
{
    struct llc_profile_spans *s = &ph->spans;
    free_spans(s);
    if (n == 0)
        return 0;
    s->distance = calloc(n, sizeof(double));
    s->samples = calloc(n, sizeof(double));
    s->share = calloc(n, sizeof(double));
    s->refs = calloc(n * (p->n_phases + 1), sizeof(double));
    if (!s->distance || !s->samples || !s->share || !s->refs) {
        free_spans(s);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    s->n = n;
    return 0;
}

#define FAIL(field, ...) prof_fail(name, err, errlen, -EINVAL, field, __VA_ARGS__)

int prof_spans_check(const struct llc_profile *p, size_t i, const char *name, char *err,
                     size_t errlen)
{
    const struct llc_profile_spans *s = &p->phases[i].spans;
    const size_t stride = p->n_phases + 1;
    char field[96];
#define SFIELD(f) (snprintf(field, sizeof(field), "phases[%zu].cross_spans.%s", i, f), field)
    if (s->n > LLC_PROFILE_SPAN_BINS)
        return FAIL(SFIELD("distances"), "%zu bins (at most %d)", s->n, LLC_PROFILE_SPAN_BINS);
    for (size_t k = 0; k < s->n; k++) {
        if (!(s->distance[k] >= 0 && isfinite(s->distance[k])) ||
            (k > 0 && !(s->distance[k] > s->distance[k - 1])))
            return FAIL(SFIELD("distances"), "entry %zu is not above the one before", k);
        if (!(s->samples[k] > 0 && isfinite(s->samples[k])))
            return FAIL(SFIELD("samples"), "entry %zu is not a positive number", k);
        if (!(s->share[k] >= 0 && s->share[k] <= 1))
            return FAIL(SFIELD("share"), "entry %zu is outside [0, 1]", k);
        for (size_t h = 0; h < stride; h++) {
            const double r = s->refs[k * stride + h];
            if (!(r >= 0 && isfinite(r)) || (h == i && r != 0))
                return FAIL(SFIELD("refs"), "entry [%zu][%zu] is not a non-negative number%s", k, h,
                            h == i ? " (the phase's own: 0)" : "");
        }
    }
#undef SFIELD
    return 0;
}
