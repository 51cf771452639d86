/* llcprobe predict: from profiles to the contention model's inputs, and
 * the runs (model, anchored variant, FOA/SDC beside, phase-pair grid). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/predict.h"
#include "llcprobe/common.h"

void pred_prog_free(struct pred_prog *p)
{
    pred_strata_free(p);
    for (size_t k = 0; p->models && k < p->n_phases; k++)
        llc_statmodel_release(p->models[k]);
    for (size_t k = 0; p->raw && k < p->n_phases; k++)
        llc_statmodel_release(p->raw[k]);
    free(p->models);
    free(p->raw);
    free(p->baseline);
    free(p->own);
    free(p->plain);
    free(p->anchored);
    free(p->phase_id);
    free(p->gamma);
    free(p->gamma_rms);
    free(p->probe_cv);
    free(p->layout);
    free(p->disp);
    free(p->anchor);
    free(p->window_phase);
    free(p->window_ins);
    free(p->excess);
    free(p->excess_alone);
    free(p->excess_first);
    free(p->mr_alone);
    llc_profile_free(&p->prof);
    const char *file = p->file;
    memset(p, 0, sizeof(*p));
    p->file = file;
}

/* Phases whose lines per set vary less than this (variance over mean) are
 * laid out evenly (docs/METHODS.md §12.2); the rest count as placed at
 * random. The sim profiles' dispersions fall in two groups, 0.001-0.24
 * (workloads that choose their lines set by set) and 0.8-1.2 (pages at
 * random, the real programs' with the structure of their pages); the
 * binomial thinning is checked only for the first, and in the second it
 * moved the real programs' miss ratios by up to 0.004 (docs/RESULTS.md
 * §10.6) at ten times the cost. */
#define PRED_EVEN_LAYOUT 0.5

/* The run's distinct lines as its samples estimate them: one dangling
 * sample per line's last touch. */
static double sampled_lines(const struct llc_profile *f)
{
    double refs = 0, dangling = 0, samples = 0;
    for (size_t j = 0; j < f->n_phases; j++) {
        refs += f->phases[j].references;
        dangling += llc_statmodel_hist_dangling(f->phases[j].rdhist);
        samples += llc_statmodel_hist_total(f->phases[j].rdhist);
    }
    return samples > 0 ? dangling / samples * refs : 0;
}

/* p->lines and p->firsts_scale: a profile that counted its windows' first
 * touches knows its distinct lines exactly, where the dangling samples
 * (a few hundred in a short run) carry their Poisson noise; the count
 * rescales every phase's, so that their sum is the count. */
static void program_lines(struct pred_prog *p)
{
    const struct llc_profile *f = &p->prof;
    const double sampled = sampled_lines(f);
    double counted = 0;
    for (size_t w = 0; f->windows.first_touches && w < f->windows.count; w++)
        counted += f->windows.first_touches[w];
    const bool use = f->windows.first_touches && counted > 0 && sampled > 0;
    p->lines = use ? counted : sampled;
    p->firsts_scale = use ? counted / sampled : 1;
}

double pred_recorded_firsts(const struct pred_prog *p, const struct llc_statmodel_hist *h)
{
    const double tot = llc_statmodel_hist_total(h);
    return tot > 0 ? fmin(1, llc_statmodel_hist_dangling(h) / tot * p->firsts_scale) : 0;
}

/* Model phase k's reuse models from histogram h: models[k] (censoring
 * undone where asked) and, where that differs, raw[k] as recorded, whose
 * dangling share stays the count of the cold start's first touches. */
static int phase_models(struct pred_prog *p, size_t k, const struct llc_statmodel_hist *h,
                        char *err, size_t errlen)
{
    int rc = pred_reuse_model(p, k, h, p->own[k], -1, &p->models[k], err, errlen);
    if (rc == 0 && p->uncensor)
        rc = llc_statmodel_prepare(h, &p->raw[k], err, errlen);
    p->plain[k].firsts = pred_recorded_firsts(p, h);
    return rc;
}

/* The pooled phase for unclassified windows: all samples, the references
 * and instructions of every phase. */
static int pooled(struct pred_prog *p, size_t k, char *err, size_t errlen)
{
    const struct llc_profile *f = &p->prof;
    struct llc_statmodel_hist *h = NULL;
    double ins = 0, refs = 0, cyc0 = 0;
    int rc = llc_statmodel_hist_create(&h, err, errlen);
    for (size_t j = 0; rc == 0 && j < f->n_phases; j++) {
        rc = llc_statmodel_hist_merge(h, f->phases[j].rdhist, err, errlen);
        ins += f->phases[j].instructions;
        refs += f->phases[j].references;
        cyc0 += f->phases[j].instructions * f->phases[j].cpi0;
    }
    if (rc == 0)
        rc = phase_models(p, k, h, err, errlen);
    llc_statmodel_hist_destroy(h);
    p->plain[k].api = refs / ins;
    p->plain[k].cpi0 = cyc0 / ins;
    p->phase_id[k] = -1;
    return rc;
}

static void anchor_phase(struct pred_prog *p, size_t k)
{
    const struct llc_profile *f = &p->prof;
    const struct llc_profile_probe_phase *e = llc_profile_probe_of(f, p->phase_id[k]);
    char err[LLC_ERRLEN];
    p->gamma[k] = 1;
    p->gamma_rms[k] = NAN;
    p->anchor[k] = PRED_ANCHOR_NONE;
    if (!e)
        return;
    p->plain[k].cv = p->probe_cv[k] = e->cv;
    const struct llc_profile_phase *ph = &f->phases[k];
    const double a = ph->refs_per_instruction * f->timing.freq_hz / ph->solo.cpi;
    if (llc_contention_anchor(p->models[k], a, e->tau_s, e->phi_hat, e->n_rates, &p->gamma[k],
                              &p->gamma_rms[k], err, sizeof(err)) == 0)
        p->anchor[k] = llc_contention_anchor_ok(p->gamma[k]) ? PRED_ANCHOR_OK : PRED_ANCHOR_FLAGGED;
}

/* The model phase of profile window w: its phase's index, or the pooled
 * phase's (after the profile's phases) for an unclassified window. */
static long model_phase(const struct llc_profile *f, size_t w)
{
    return f->windows.phase_of[w] < 0 ? (long)f->n_phases
                                      : llc_profile_phase_index(f, f->windows.phase_of[w]);
}

int pred_reuse_model(const struct pred_prog *p, size_t k, const struct llc_statmodel_hist *h,
                     bool own, double kept, struct llc_statmodel_model **out, char *err,
                     size_t errlen)
{
    const struct llc_profile *f = &p->prof;
    const size_t nw = f->windows.count;
    if (!p->uncensor || nw == 0 || !f->windows.references)
        return llc_statmodel_prepare(h, out, err, errlen);
    double *start = malloc(nw * sizeof(double)), *len = malloc(nw * sizeof(double)), end = 0;
    struct llc_statmodel_hist *u = NULL;
    size_t n = 0;
    int rc = start && len ? llc_statmodel_hist_create(&u, err, errlen)
                          : llc_errf(err, errlen, -ENOMEM, "out of memory");
    /* own distances: the phase's windows are one run of its references */
    for (size_t w = 0; rc == 0 && w < nw; w++) {
        const double refs = f->windows.references[w];
        const bool mine = refs > 0 && (k >= f->n_phases || model_phase(f, w) == (long)k);
        if (mine && !own) {
            start[n] = end;
            len[n++] = refs;
        }
        if (refs > 0 && (mine || !own))
            end += refs;
    }
    if (own && end > 0) {
        start[0] = 0;
        len[0] = end;
        n = 1;
    }
    /* no window of the phase holds references: nothing says where its
     * samples were taken */
    if (rc == 0 && n > 0)
        rc = llc_statmodel_hist_uncensor(h, start, len, n, end, kept, u, err, errlen);
    if (rc == 0)
        rc = llc_statmodel_prepare(n > 0 ? u : h, out, err, errlen);
    llc_statmodel_hist_destroy(u);
    free(start);
    free(len);
    return rc;
}

/* Windows with instructions, as indices into the phases; a profile without
 * windows runs each phase once for its instructions. */
static int windows(struct pred_prog *p, char *err, size_t errlen)
{
    const struct llc_profile *f = &p->prof;
    const size_t nw = f->windows.count ? f->windows.count : f->n_phases;
    p->window_phase = malloc(nw * sizeof(int));
    p->window_ins = malloc(nw * sizeof(double));
    if (!p->window_phase || !p->window_ins)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    for (size_t w = 0; w < nw; w++) {
        double ins;
        long k;
        if (f->windows.count) {
            ins = f->windows.instructions[w];
            k = model_phase(f, w);
        } else {
            ins = f->phases[w].instructions;
            k = (long)w;
        }
        if (ins > 0) {
            p->window_phase[p->n_windows] = (int)k;
            p->window_ins[p->n_windows++] = ins;
        }
    }
    if (p->n_windows == 0)
        return llc_errf(err, errlen, -ENODATA,
                        "%s: windows.instructions: no window has instructions", p->file);
    return 0;
}

/* Each profile phase's excess (docs/METHODS.md §12.7) on the windows'
 * references into out[], with the phases' miss ratios mr (NULL: the
 * lines only). */
static int excess_all(struct pred_prog *p, const double *mr, struct llc_contention_excess *out,
                      char *err, size_t errlen)
{
    double *refs = malloc(p->n_windows * sizeof(*refs));
    int rc = refs ? 0 : llc_errf(err, errlen, -ENOMEM, "out of memory");
    for (size_t w = 0; rc == 0 && w < p->n_windows; w++)
        refs[w] = p->window_ins[w] * p->plain[p->window_phase[w]].api;
    for (size_t k = 0; rc == 0 && k < p->prof.n_phases; k++) {
        char why[LLC_ERRLEN];
        const struct llc_profile_spans *sp = &p->prof.phases[k].spans;
        const struct llc_statmodel_model *const *m =
            (const struct llc_statmodel_model *const *)p->models;
        /* own distances: the spans its reuses measured */
        if (p->own[k])
            rc = llc_contention_excess_spans(m, p->n_phases, k, sp->distance, sp->share, sp->refs,
                                             p->prof.n_phases + 1, sp->n, mr, &out[k], why,
                                             sizeof(why));
        else
            rc = llc_contention_excess_build(m, p->n_phases, p->window_phase, refs, p->n_windows, k,
                                             mr, &out[k], why, sizeof(why));
        if (rc < 0)
            rc = llc_errf(err, errlen, rc, "%s: phases[%zu]: %s", p->file, k, why);
    }
    free(refs);
    return rc;
}

/* The lines each profile phase's reuses meet from the program's other
 * phases (docs/METHODS.md §12.7), on the windows' references; used by
 * default (pred_cross_phase_use). */
static int cross_phase(struct pred_prog *p, char *err, size_t errlen)
{
    if (p->prof.n_phases < 2)
        return 0;
    p->excess = calloc(p->prof.n_phases, sizeof(*p->excess));
    int rc = p->excess ? excess_all(p, NULL, p->excess, err, errlen)
                       : llc_errf(err, errlen, -ENOMEM, "out of memory");
    if (rc == 0)
        pred_cross_phase_use(p, true);
    return rc;
}

/* Each phase's evictions per reference alone (llc_contention_evictions_alone). */
static int phases_alone(struct pred_prog *p, const struct llc_contention_config *cfg, double *ev,
                        char *err, size_t errlen)
{
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < p->prof.n_phases; k++) {
        struct llc_contention_phase ph = p->plain[k];
        ph.excess = ph.excess_alone = NULL;
        char why[LLC_ERRLEN];
        rc = llc_contention_evictions_alone(&ph, p->prof.timing.freq_hz, cfg, &ev[k], why,
                                            sizeof(why));
        if (rc < 0)
            rc = llc_errf(err, errlen, rc, "%s: phases[%zu]: %s", p->file, k, why);
    }
    return rc;
}

/* The misses alone: each phase's evictions per reference on its own
 * first (its other phases unseen), then in its program's own timeline on
 * those (a phase that fits misses beside its other phases, and evicts
 * then: phased's 2 MB phase alone 0.10 of its references). The first
 * excesses stay: the tables keep R on them. */
static int alone(struct pred_prog *p, const struct llc_contention_config *cfg, char *err,
                 size_t errlen)
{
    const size_t n = p->prof.n_phases;
    /* one per model (the whole program's too, which no window runs) */
    p->mr_alone = calloc(p->n_phases, sizeof(*p->mr_alone));
    p->excess_first = calloc(n, sizeof(*p->excess_first));
    p->excess_alone = calloc(n, sizeof(*p->excess_alone));
    int rc = p->mr_alone && p->excess_first && p->excess_alone
                 ? phases_alone(p, cfg, p->mr_alone, err, errlen)
                 : llc_errf(err, errlen, -ENOMEM, "out of memory");
    if (rc == 0)
        rc = excess_all(p, p->mr_alone, p->excess_first, err, errlen);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        p->plain[k].excess = p->anchored[k].excess = &p->excess_first[k];
        p->plain[k].excess_alone = p->anchored[k].excess_alone = NULL;
    }
    struct llc_contention_run *run = NULL;
    if (rc == 0) {
        const struct llc_contention_prog cp = pred_contention_prog(p, false);
        rc = llc_contention_timeline(&cp, 1, cfg, &run, err, errlen);
    }
    if (rc == 0 && llc_contention_evictions_in(run, 0, n, cfg->capacity, p->mr_alone) < 0)
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
    llc_contention_run_free(run);
    if (rc == 0)
        rc = excess_all(p, p->mr_alone, p->excess_alone, err, errlen);
    return rc;
}

int pred_cross_phase_misses(struct pred_prog *p, size_t i, const struct llc_contention_config *cfg,
                            const struct llc_contention_run *corun, char *err, size_t errlen)
{
    if (!p->excess || !p->plain[0].excess || cfg->policy != LLC_CONTENTION_RANDOM)
        return 0;
    const size_t n = p->prof.n_phases;
    int rc = p->mr_alone ? 0 : alone(p, cfg, err, errlen);
    if (rc < 0)
        return rc;
    /* until the co-run's: the misses alone for both (the tables keep R on
     * these, so the co-run's come in a separate array) */
    for (size_t k = 0; k < n; k++) {
        const struct llc_contention_excess *e = &p->excess_alone[k];
        p->plain[k].excess_alone = p->anchored[k].excess_alone = e;
        p->plain[k].excess = p->anchored[k].excess = corun ? &p->excess[k] : e;
    }
    if (!corun)
        return 0;
    double *mr = malloc(p->n_phases * sizeof(*mr));
    if (!mr)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    memcpy(mr, p->mr_alone, p->n_phases * sizeof(*mr));
    rc = llc_contention_evictions_in(corun, i, n, cfg->capacity, mr);
    if (rc < 0)
        rc = llc_errf(err, errlen, rc, "out of memory");
    if (rc == 0)
        rc = excess_all(p, mr, p->excess, err, errlen);
    free(mr);
    return rc;
}

/* Cold start (docs/METHODS.md §12.2): each phase's references in its profile (the pooled
 * phase: all of them), or 0 for the stationary model. */
static void set_cold(struct pred_prog *p, bool cold)
{
    double all = 0;
    for (size_t j = 0; j < p->prof.n_phases; j++)
        all += p->prof.phases[j].references;
    for (size_t k = 0; k < p->n_phases; k++) {
        const double refs = !cold ? 0 : k < p->prof.n_phases ? p->prof.phases[k].references : all;
        p->plain[k].references = refs;
        p->anchored[k].references = refs;
    }
}

void pred_first_touches_use(struct pred_prog *p, bool on)
{
    const struct llc_profile *f = &p->prof;
    const bool use = on && f->windows.first_touches;
    for (size_t k = 0; k < p->n_phases; k++) {
        double firsts = 0, run = 0;
        for (size_t w = 0; use && w < f->windows.count; w++)
            if (model_phase(f, w) == (long)k) {
                firsts += f->windows.first_touches[w];
                run += f->windows.references[w];
            }
        const double a0 = use && p->plain[k].references > 0
                              ? llc_contention_cold_age(p->plain[k].model, p->plain[k].firsts,
                                                        p->plain[k].references, run, firsts)
                              : 0;
        p->plain[k].age0 = a0;
        p->anchored[k].age0 = a0;
        /* The pooled phase's windows come from anywhere in the run: without
         * its measured first touches it is as old as its program. */
        const bool pooled = k >= f->n_phases;
        p->plain[k].program_age = pooled && a0 == 0;
        p->anchored[k].program_age = pooled && a0 == 0;
    }
}

int pred_prog_build(struct pred_prog *p, bool use_probe, bool cold, bool uncensor, char *err,
                    size_t errlen)
{
    p->uncensor = uncensor;
    const struct llc_profile *f = &p->prof;
    bool unclassified = false;
    for (size_t w = 0; w < f->windows.count; w++)
        unclassified |= f->windows.phase_of[w] < 0;
    /* The pooled phase serves unclassified windows, and a program of
     * several phases as its co-runners see it over T*s that span them */
    const size_t n = f->n_phases + (unclassified || f->n_phases >= 2);
    p->n_phases = n;
    p->n_shown = f->n_phases + unclassified;
    p->models = calloc(n, sizeof(*p->models));
    p->plain = calloc(n, sizeof(*p->plain));
    p->anchored = calloc(n, sizeof(*p->anchored));
    p->phase_id = calloc(n, sizeof(int));
    p->gamma = calloc(n, sizeof(double));
    p->gamma_rms = calloc(n, sizeof(double));
    p->probe_cv = calloc(n, sizeof(double));
    p->layout = calloc(n, sizeof(*p->layout));
    p->disp = calloc(n, sizeof(double));
    p->anchor = calloc(n, sizeof(*p->anchor));
    p->raw = calloc(n, sizeof(*p->raw));
    p->baseline = calloc(n, sizeof(*p->baseline));
    p->own = calloc(n, sizeof(*p->own));
    if (!p->own || !p->models || !p->plain || !p->anchored || !p->phase_id || !p->gamma ||
        !p->gamma_rms || !p->probe_cv || !p->layout || !p->disp || !p->anchor || !p->raw ||
        !p->baseline)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    p->probe_used = use_probe && f->probe.ok && f->probe.n_phases > 0;
    program_lines(p);
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < f->n_phases; k++) {
        const struct llc_profile_phase *ph = &f->phases[k];
        p->phase_id[k] = ph->id;
        p->plain[k] =
            (struct llc_contention_phase){.api = ph->refs_per_instruction, .cpi0 = ph->cpi0};
        char why[LLC_ERRLEN];
        /* own distances need the spans measured with them, and the pooled
         * phase for unclassified windows' columns (several phases: always) */
        p->own[k] = p->own_distances && ph->rdhist_own && ph->spans.n > 0 && n > f->n_phases;
        rc = phase_models(p, k, p->own[k] ? ph->rdhist_own : ph->rdhist, why, sizeof(why));
        if (rc < 0)
            rc = llc_errf(err, errlen, rc, "%s: phases[%zu].%s: %s", p->file, k,
                          p->own[k] ? "rdhist_own" : "rdhist", why);
    }
    if (rc == 0 && n > f->n_phases)
        rc = pooled(p, f->n_phases, err, errlen);
    /* Distinct lines of the whole program, the cap of every phase's
     * footprint. Per phase it would be wrong: a line's last touch may fall
     * in a later phase. */
    const double lines = rc == 0 ? p->lines : 0;
    /* The pooled phase's lines are every phase's: their dispersions'
     * mean, weighted by references. */
    double disp = 0, disp_refs = 0;
    for (size_t j = 0; j < f->n_phases; j++)
        if (!isnan(f->phases[j].set_dispersion)) {
            disp += f->phases[j].references * f->phases[j].set_dispersion;
            disp_refs += f->phases[j].references;
        }
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const double d = k < f->n_phases ? f->phases[k].set_dispersion
                         : disp_refs > 0 ? disp / disp_refs
                                         : NAN;
        p->disp[k] = d;
        p->plain[k].model = p->models[k];
        p->plain[k].lines = lines;
        p->plain[k].evenness = d < PRED_EVEN_LAYOUT ? 1 - d : 0;
        p->plain[k].penalty = f->timing.miss_penalty_cycles;
        p->plain[k].gamma = 1;
        p->gamma[k] = 1;
        p->gamma_rms[k] = NAN;
        if (p->probe_used && p->phase_id[k] >= 0)
            anchor_phase(p, k);
        p->anchored[k] = p->plain[k];
        p->anchored[k].gamma = p->gamma[k];
    }
    if (rc == 0)
        set_cold(p, cold);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        p->baseline[k] = p->plain[k];
        if (p->raw[k])
            p->baseline[k].model = p->raw[k];
    }
    if (rc == 0)
        rc = windows(p, err, errlen);
    if (rc == 0)
        rc = cross_phase(p, err, errlen);
    if (rc == 0)
        rc = pred_strata_build(p, err, errlen);
    return rc;
}

void pred_cross_phase_use(struct pred_prog *p, bool on)
{
    for (size_t k = 0; p->excess && k < p->prof.n_phases; k++) {
        p->plain[k].excess = on ? &p->excess[k] : NULL;
        p->anchored[k].excess = on ? &p->excess[k] : NULL;
        p->plain[k].excess_alone = on && p->excess_alone ? &p->excess_alone[k] : NULL;
        p->anchored[k].excess_alone = p->plain[k].excess_alone;
    }
}

void pred_prog_layout_cv(struct pred_prog *p, const struct llc_contention_config *cfg, double sets)
{
    /* lines at random in `sets` sets, lam per set, vary by a CV of
     * 1/sqrt(lam): the grid's Poisson count; only the rest is skew. lam:
     * the program's lines the cache can hold. The random model has no
     * grid: there the spread is at least the layout's own, CV^2 = D / lam
     * for the phase's measured dispersion D (variance over mean of its
     * lines per set), counted for the references that come back (a
     * stream's lines, each touched once, press on every set alike). */
    const enum llc_contention_policy base = llc_contention_base_policy(cfg->policy);
    const bool grid = cfg->assoc && base == LLC_CONTENTION_LRU;
    const bool layout = cfg->assoc && base == LLC_CONTENTION_RANDOM;
    const double lines = p->lines > 0 ? fmin(p->lines, cfg->capacity) : cfg->capacity;
    const double lam = sets > 0 ? lines / sets : 0;
    for (size_t k = 0; k < p->n_phases; k++) {
        const double cv = p->probe_cv[k], rest = cv * cv - (lam > 0 ? 1 / lam : 0);
        double eff = !grid ? cv : rest > 0 ? sqrt(rest) : 0;
        bool own_spread = false;
        double own = 0;
        if (layout && lam > 0 && isfinite(p->disp[k])) {
            own = fmax(0, p->disp[k] * (1 - p->plain[k].firsts) / lam);
            own_spread = own > 0 && own >= eff * eff;
            eff = fmax(eff, sqrt(own));
        }
        p->plain[k].cv = eff;
        p->anchored[k].cv = eff;
        p->plain[k].layout_cv = p->anchored[k].layout_cv = sqrt(own);
        if (own_spread)
            llc_contention_layout_strata(1 / (eff * eff), &p->layout[k]);
        p->plain[k].layout = p->anchored[k].layout = own_spread ? &p->layout[k] : NULL;
    }
}

struct llc_contention_prog pred_contention_prog(const struct pred_prog *p, bool anchored)
{
    const struct llc_contention_phase *ph = anchored ? p->anchored : p->plain;
    const bool whole = !p->phase_local && p->n_phases >= 2 && p->n_phases > p->prof.n_phases;
    return (struct llc_contention_prog){.freq_hz = p->prof.timing.freq_hz,
                                        .phases = ph,
                                        .n_phases = p->n_phases,
                                        .window_phase = p->window_phase,
                                        .window_instructions = p->window_ins,
                                        .n_windows = p->n_windows,
                                        .whole = whole ? &ph[p->prof.n_phases] : NULL};
}

static void fill_progs(struct pred_prog *progs, size_t n, bool anchored,
                       struct llc_contention_prog *cp)
{
    for (size_t i = 0; i < n; i++)
        cp[i] = pred_contention_prog(&progs[i], anchored);
}

void pred_result_free(struct pred_result *r)
{
    llc_contention_run_free(r->run);
    llc_contention_run_free(r->anchored);
    free(r->foa);
    free(r->sdc);
    free(r->foa_solo);
    free(r->sdc_solo);
    free(r->grid);
    free(r->grid_solo);
    memset(r, 0, sizeof(*r));
}

/* FOA and SDC per tuple of the model's run, and their sums along the run's
 * timeline (over the stretch the run sums: all programs together, at the
 * model's instruction progress). */
static int baselines(struct pred_prog *progs, size_t n, const struct llc_contention_config *cfg,
                     struct pred_result *r, char *err, size_t errlen)
{
    const struct llc_contention_run *run = r->run;
    const size_t nt = run->n_tuples;
    r->foa = calloc(nt * n, sizeof(*r->foa));
    r->sdc = calloc(nt * n, sizeof(*r->sdc));
    r->foa_solo = calloc(nt * n, sizeof(*r->foa_solo));
    r->sdc_solo = calloc(nt * n, sizeof(*r->sdc_solo));
    if (!r->foa || !r->sdc || !r->foa_solo || !r->sdc_solo)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    double freq[PRED_MAX_PROGRAMS];
    int rc = 0;
    /* The baselines see phases, not ages: a tuple met before at other
     * ages, and a phase met before alone, are copied, not solved again. */
    for (size_t t = 0; rc == 0 && t < nt; t++) {
        const int *tp = run->tuples[t].phase;
        size_t same = t;
        for (size_t u = 0; same == t && u < t; u++)
            if (memcmp(run->tuples[u].phase, tp, n * sizeof(*tp)) == 0)
                same = u;
        if (same < t) {
            memcpy(&r->foa[t * n], &r->foa[same * n], n * sizeof(*r->foa));
            memcpy(&r->sdc[t * n], &r->sdc[same * n], n * sizeof(*r->sdc));
            memcpy(&r->foa_solo[t * n], &r->foa_solo[same * n], n * sizeof(*r->foa_solo));
            memcpy(&r->sdc_solo[t * n], &r->sdc_solo[same * n], n * sizeof(*r->sdc_solo));
            continue;
        }
        const struct llc_contention_phase *ph[PRED_MAX_PROGRAMS];
        for (size_t i = 0; i < n; i++) {
            ph[i] = &progs[i].baseline[tp[i]];
            freq[i] = progs[i].prof.timing.freq_hz;
        }
        rc = llc_contention_baseline(ph, freq, n, cfg, LLC_CONTENTION_FOA, &r->foa[t * n], err,
                                     errlen);
        if (rc == 0)
            rc = llc_contention_baseline(ph, freq, n, cfg, LLC_CONTENTION_SDC, &r->sdc[t * n], err,
                                         errlen);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            size_t u = 0; /* an earlier tuple with program i in the same phase */
            while (u < t && run->tuples[u].phase[i] != tp[i])
                u++;
            if (u < t)
                r->foa_solo[t * n + i] = r->foa_solo[u * n + i];
            else
                rc = llc_contention_baseline(&ph[i], &freq[i], 1, cfg, LLC_CONTENTION_FOA,
                                             &r->foa_solo[t * n + i], err, errlen);
            r->sdc_solo[t * n + i] = r->foa_solo[t * n + i]; /* alone both give all ways */
        }
    }
    for (size_t k = 0; rc == 0 && k < run->n_segments; k++) {
        const struct llc_contention_segment *s = &run->segments[k];
        const struct llc_contention_tuple_result *tr = &run->tuples[s->tuple];
        for (size_t i = 0; i < n; i++) {
            if (s->t0 >= run->summary[i].seconds * (1 - 1e-12))
                continue; /* past the stretch summed */
            const struct llc_contention_phase *ph = &progs[i].plain[tr->phase[i]];
            const double ins = s->dt * freq[i] / tr->share[i].cpi;
            for (int b = 0; b < 2; b++) {
                const struct llc_contention_share *x =
                    b ? &r->sdc[s->tuple * n + i] : &r->foa[s->tuple * n + i];
                const struct llc_contention_share *x1 =
                    b ? &r->sdc_solo[s->tuple * n + i] : &r->foa_solo[s->tuple * n + i];
                struct pred_baseline_sum *u = b ? &r->sdc_sum[i] : &r->foa_sum[i];
                u->ins += ins;
                u->refs += ins * ph->api;
                u->misses += ins * ph->api * x->miss_ratio;
                u->cycles += ins * x->cpi;
                u->solo_cycles += ins * x1->cpi;
                u->occ_time += x->occupancy * s->dt;
                u->time += s->dt;
            }
        }
    }
    return rc;
}

/* The run's tuple of phases (a, b) if a pair's run met it warm: its solo
 * figures are the grid's own (each phase alone, same configuration), and
 * so is its co-run from them, which the grid then copies instead of
 * solving again. The solo check keeps out a tuple solved from anything
 * but the plain phases alone. */
static const struct llc_contention_tuple_result *run_tuple(const struct llc_contention_run *run,
                                                           const size_t *at, size_t nb, size_t a,
                                                           size_t b,
                                                           const struct llc_contention_share *sa,
                                                           const struct llc_contention_share *sb)
{
    if (!at || !at[a * nb + b])
        return NULL;
    const struct llc_contention_tuple_result *t = &run->tuples[at[a * nb + b] - 1];
    if (memcmp(&t->solo[0], sa, sizeof(*sa)) != 0 || memcmp(&t->solo[1], sb, sizeof(*sb)) != 0)
        return NULL;
    return t;
}

/* Program i's phase k alone as the run solved it in a tuple that met the
 * phase warm (the timeline solves each warm phase alone once, with the
 * configuration the grid uses). */
static bool run_solo(const struct llc_contention_run *run, size_t i, size_t k,
                     struct llc_contention_share *out)
{
    for (size_t t = 0; t < run->n_tuples; t++) {
        const int *ph = run->tuples[t].phase;
        if ((size_t)ph[i] == k && ph[run->n + i] < 0) {
            *out = run->tuples[t].solo[i];
            return true;
        }
    }
    return false;
}

bool pred_tuple_shown(const struct pred_prog *progs, size_t n,
                      const struct llc_contention_tuple_result *tr)
{
    for (size_t i = 0; i < n; i++)
        if ((size_t)tr->phase[i] >= progs[i].n_shown)
            return false;
    return true;
}

/* Every phase pair of the first two programs, the two alone together. */
static int pair_grid(struct pred_prog *progs, size_t n, const struct llc_contention_config *cfg,
                     struct pred_result *r, char *err, size_t errlen)
{
    const size_t na = progs[0].n_shown, nb = progs[1].n_shown;
    const struct llc_contention_run *run = r->run;
    r->grid_a = na;
    r->grid_b = nb;
    r->grid = calloc(na * nb * 2, sizeof(*r->grid));
    r->grid_solo = calloc(na * nb * 2, sizeof(*r->grid_solo));
    /* With random replacement the misses of a program's other phases are
     * those of its co-run (docs/METHODS.md §12.7), which depend on the
     * whole group: the grid takes them alone, solved afresh, so that a
     * pair's grid is the same in any group. */
    const bool alone = progs[0].excess_alone || progs[1].excess_alone;
    /* A pair's run: tuple index + 1 of each phase pair it met, 0 = none. */
    size_t *at = n == 2 && !alone ? calloc(na * nb, sizeof(*at)) : NULL;
    if (!r->grid || !r->grid_solo || (n == 2 && !alone && !at)) {
        free(at);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    /* Warm tuples only (age class -1 for both): a young one is a cold start.
     * Not one solved for the co-runners' view of a whole program (marked,
     * or its pooled phase past the grid's). */
    for (size_t t = 0; at && t < run->n_tuples; t++) {
        const int *ph = run->tuples[t].phase;
        if (pred_tuple_shown(progs, n, &run->tuples[t]) && ph[2] < 0 && ph[3] < 0 && ph[4] == 0 &&
            ph[5] == 0 && !at[(size_t)ph[0] * nb + (size_t)ph[1]])
            at[(size_t)ph[0] * nb + (size_t)ph[1]] = t + 1;
    }
    const double freq[2] = {progs[0].prof.timing.freq_hz, progs[1].prof.timing.freq_hz};
    int rc = 0;
    /* Each phase alone once (the run's, where it met the phase warm: the
     * same solve, alone does not depend on the others), then every pair
     * from those solo rates. */
    for (size_t a = 0; rc == 0 && a < na; a++)
        if (!run_solo(run, 0, a, &r->grid_solo[a * nb * 2]))
            rc = llc_contention_solo(&progs[0].plain[a], freq[0], cfg, &r->grid_solo[a * nb * 2],
                                     err, errlen);
    for (size_t b = 0; rc == 0 && b < nb; b++)
        if (!run_solo(run, 1, b, &r->grid_solo[b * 2 + 1]))
            rc = llc_contention_solo(&progs[1].plain[b], freq[1], cfg, &r->grid_solo[b * 2 + 1],
                                     err, errlen);
    for (size_t a = 0; rc == 0 && a < na; a++)
        for (size_t b = 0; rc == 0 && b < nb; b++) {
            struct llc_contention_phase pa = progs[0].plain[a], pb = progs[1].plain[b];
            if (alone) {
                pa.excess = pa.excess_alone ? pa.excess_alone : pa.excess;
                pb.excess = pb.excess_alone ? pb.excess_alone : pb.excess;
            }
            const struct llc_contention_phase *ph[2] = {&pa, &pb};
            struct llc_contention_share *solo = &r->grid_solo[(a * nb + b) * 2];
            solo[0] = r->grid_solo[a * nb * 2];
            solo[1] = r->grid_solo[b * 2 + 1];
            const struct llc_contention_tuple_result *t =
                run_tuple(run, at, nb, a, b, &solo[0], &solo[1]);
            if (t) {
                r->grid[(a * nb + b) * 2] = t->share[0];
                r->grid[(a * nb + b) * 2 + 1] = t->share[1];
                continue;
            }
            rc = llc_contention_corun(ph, freq, 2, cfg, solo, &r->grid[(a * nb + b) * 2], NULL, err,
                                      errlen);
        }
    free(at);
    return rc;
}

int pred_run(struct pred_prog *progs, size_t n, const struct pred_machine *m,
             const struct pred_opts *o, struct pred_result *r, char *err, size_t errlen)
{
    struct llc_contention_config cfg;
    struct llc_contention_prog cp[PRED_MAX_PROGRAMS];
    llc_contention_config_default(&cfg);
    cfg.capacity = (double)m->lines;
    cfg.ways = m->ways;
    cfg.policy = o->policy;
    cfg.coupling = o->coupling;
    cfg.skew = true;     /* the probe's CV is 0 without it (--no-probe); the layout's stays */
    cfg.together = true; /* the figures of the stretch all programs run together */
    cfg.assoc = o->assoc;
    cfg.anchor = false;
    cfg.private_lines = o->exclusive ? m->private_lines : 0;
    cfg.exclusive_lru = o->exclusive_lru;
    cfg.exclusive_entered = true; /* LRU in W-way victim sets (docs/METHODS.md §12.2) */
    memset(r, 0, sizeof(*r));
    /* The random model's R tabulated per phase, and the set-associative
     * grid's hit probability, shared by every solve of this prediction
     * (the models stay in place until pred_prog_free). */
    int rc = llc_contention_tables_create(&cfg.tables, err, errlen);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        pred_strata_use(&progs[i], o->strata);
        pred_first_touches_use(&progs[i], o->first_touches);
    }
    for (size_t i = 0; i < n; i++)
        pred_prog_layout_cv(&progs[i], &cfg, (double)m->sets);
    bool again = false;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = pred_cross_phase_misses(&progs[i], i, &cfg, NULL, err, errlen);
        again |= n > 1 && progs[i].excess_alone;
    }
    fill_progs(progs, n, false, cp);
    if (rc == 0)
        rc = llc_contention_timeline(cp, n, &cfg, &r->run, err, errlen);
    /* With random replacement the other phases' misses in the co-run come
     * from a first timeline, priced with theirs alone: a second one on
     * those (docs/METHODS.md §12.7) */
    for (size_t i = 0; rc == 0 && again && i < n; i++)
        rc = pred_cross_phase_misses(&progs[i], i, &cfg, r->run, err, errlen);
    if (rc == 0 && again) {
        llc_contention_run_free(r->run);
        r->run = NULL;
        rc = llc_contention_timeline(cp, n, &cfg, &r->run, err, errlen);
    }
    bool any_probe = false;
    for (size_t i = 0; i < n; i++)
        any_probe |= progs[i].probe_used;
    /* A second timeline, on request only: no headline figure uses it. */
    if (rc == 0 && o->probe && o->anchored && any_probe) {
        cfg.anchor = true;
        fill_progs(progs, n, true, cp);
        rc = llc_contention_timeline(cp, n, &cfg, &r->anchored, err, errlen);
        cfg.anchor = false;
    }
    if (rc == 0)
        rc = baselines(progs, n, &cfg, r, err, errlen);
    /* The phase-pair grid is for the files (JSON and heatmap) only. */
    if (rc == 0 && n >= 2 && o->prefix)
        rc = pair_grid(progs, n, &cfg, r, err, errlen);
    llc_contention_tables_free(cfg.tables);
    return rc;
}
