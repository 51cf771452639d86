/* llcprobe predict: the profiles' per-stratum reuse (docs/METHODS.md
 * §12.6) as contention-model inputs: one StatStack model per stratum,
 * hung on the phases the model solves. */
#include <errno.h>
#include <stdlib.h>

#include "cmd/predict.h"
#include "llcprobe/common.h"

struct pred_strata {
    size_t n_models;
    struct llc_statmodel_model **models;
    struct llc_contention_stratum *s;       /* every phase's, one after another */
    struct llc_contention_strata *of_phase; /* [profile phase] */
};

void pred_strata_free(struct pred_prog *p)
{
    struct pred_strata *st = p->strata;
    if (!st)
        return;
    for (size_t k = 0; k < st->n_models; k++)
        llc_statmodel_release(st->models[k]);
    free(st->models);
    free(st->s);
    free(st->of_phase);
    free(st);
    p->strata = NULL;
}

int pred_strata_build(struct pred_prog *p, char *err, size_t errlen)
{
    const struct llc_profile *f = &p->prof;
    size_t total = 0;
    for (size_t j = 0; j < f->n_phases; j++)
        total += f->phases[j].n_strata;
    if (total == 0)
        return 0;
    struct pred_strata *st = calloc(1, sizeof(*st));
    if (!st)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    p->strata = st;
    st->models = calloc(total, sizeof(*st->models));
    st->s = calloc(total, sizeof(*st->s));
    st->of_phase = calloc(f->n_phases, sizeof(*st->of_phase));
    if (!st->models || !st->s || !st->of_phase)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < f->n_phases; j++) {
        const struct llc_profile_phase *ph = &f->phases[j];
        st->of_phase[j] =
            (struct llc_contention_strata){.n = ph->n_strata, .s = &st->s[st->n_models]};
        /* a stratum's few samples cannot tell censored reuse from data
         * never reused: its dangling samples keep the phase's ratio */
        const double raw = llc_statmodel_hist_dangling(ph->rdhist);
        const double kept = raw > 0 ? llc_statmodel_model_dangling(p->models[j]) / raw : -1;
        for (size_t g = 0; rc == 0 && g < ph->n_strata; g++) {
            const struct llc_profile_stratum *x = &ph->strata[g];
            struct llc_statmodel_model **m = &st->models[st->n_models];
            /* in the phase's own references where its reuse is */
            const struct llc_statmodel_hist *h =
                p->own[j] && x->rdhist_own ? x->rdhist_own : x->rdhist;
            char why[LLC_ERRLEN];
            if (x->samples > 0 &&
                (rc = pred_reuse_model(p, j, h, h != x->rdhist, kept, m, why, sizeof(why))) < 0)
                rc = llc_errf(err, errlen, rc, "%s: phases[%zu].strata[%zu].%s: %s", p->file, j, g,
                              h == x->rdhist ? "rdhist" : "rdhist_own", why);
            st->s[st->n_models++] =
                (struct llc_contention_stratum){.model = *m,
                                                .sets = x->sets,
                                                .refs = x->refs,
                                                .firsts = pred_recorded_firsts(p, x->rdhist)};
        }
        char why[LLC_ERRLEN];
        if (rc == 0 && (rc = llc_contention_strata_check(&st->of_phase[j], why, sizeof(why))) < 0)
            rc = llc_errf(err, errlen, rc, "%s: phases[%zu].strata: %s", p->file, j, why);
    }
    return rc;
}

void pred_strata_use(struct pred_prog *p, bool on)
{
    for (size_t k = 0; k < p->prof.n_phases && k < p->n_phases; k++) {
        const struct llc_contention_strata *s =
            on && p->strata && p->strata->of_phase[k].n ? &p->strata->of_phase[k] : NULL;
        p->plain[k].strata = s;
        p->anchored[k].strata = s;
    }
}

size_t pred_strata_phases(const struct pred_prog *p)
{
    size_t n = 0;
    for (size_t k = 0; k < p->n_shown; k++)
        n += p->plain[k].strata != NULL;
    return n;
}
