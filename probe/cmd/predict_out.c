/* llcprobe predict: the llcprobe-prediction v1 JSON, its CSVs (timeline
 * and phase tuples) and the summary on stdout. */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/predict.h"
#include "llcprobe/common.h"
#include "util/atomic_file.h"
#include "util/json.h"

#define PRED_FORMAT "llcprobe-prediction"
#define PRED_VERSION 1

static double per_s(double x, double s)
{
    return s > 0 ? x / s : NAN;
}

static const char *name_of(const struct pred_prog *p)
{
    return p->prof.program.name;
}

/* The profile's own solo CPI over its windows (measured, not modelled). */
static double measured_solo_cpi(const struct pred_prog *p)
{
    double ins = 0, cyc = 0;
    for (size_t k = 0; k < p->prof.n_phases; k++) {
        ins += p->prof.phases[k].instructions;
        cyc += p->prof.phases[k].instructions * p->prof.phases[k].solo.cpi;
    }
    return ins > 0 ? cyc / ins : NAN;
}

static int add_flag(char ***v, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int add_flag(char ***v, size_t *n, const char *fmt, ...)
{
    char buf[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    char **nv = realloc(*v, (*n + 1) * sizeof(char *));
    if (!nv)
        return -ENOMEM;
    *v = nv;
    if (!(nv[*n] = strdup(buf)))
        return -ENOMEM;
    (*n)++;
    return 0;
}

/* As the model takes it: none in an exclusive LLC modelled as one
 * (cfg.private_lines > 0, predict_model.c). */
static double pred_rrip_protect(const struct pred_machine *m, const struct pred_opts *o)
{
    return llc_contention_rrip_protect(o->policy, o->exclusive && m->private_lines > 0);
}

size_t pred_flags(const struct pred_prog *progs, size_t n, const struct pred_machine *m,
                  const struct pred_opts *o, const struct pred_result *r, char ***out)
{
    char **v = NULL;
    size_t k = 0;
    const enum llc_contention_policy base = llc_contention_base_policy(o->policy);
    const bool excl = strcmp(m->inclusion, "exclusive") == 0;
    const bool shifted = excl && o->exclusive && m->private_lines > 0;
    const double protect = pred_rrip_protect(m, o);
    if (protect > 1)
        add_flag(&v, &k,
                 "policy %s is predicted with the %s equilibrium and RRIP's protection: a line "
                 "that was hit stays %g times as long as one that was not (an approximation%s)",
                 llc_contention_policy_name(o->policy), llc_contention_policy_name(base), protect,
                 o->policy == LLC_CONTENTION_DRRIP
                     ? "; DRRIP's BRRIP mode, which its set dueling picks beside thrashing "
                       "programs, is not modelled"
                     : "");
    else if (o->policy != base)
        add_flag(&v, &k,
                 "policy %s is predicted with the %s equilibrium (an approximation: "
                 "recency-based policies keep what is reused soon)",
                 llc_contention_policy_name(o->policy), llc_contention_policy_name(base));
    const bool entered = shifted && base == LLC_CONTENTION_LRU && !o->exclusive_lru && o->assoc;
    if (shifted)
        add_flag(&v, &k,
                 "exclusive (victim) LLC: a program's lines reach it once its private L2 (%.0f "
                 "lines) evicts them, so each reuse is shifted by the L2's part%s",
                 m->private_lines,
                 entered ? "; in W-way sets the lines above a waiting line arrive with its "
                           "co-runners' L2 misses and leave on their hits, and it is evicted "
                           "when the W-th arrives (--exclusive-lru: only the lines still "
                           "there at the reuse)"
                         : "");
    else if (excl)
        add_flag(&v, &k,
                 "exclusive (victim) LLC modelled as inclusive (%s): a program's lines in its "
                 "private L2 are counted in the LLC",
                 !o->exclusive ? "--no-exclusive" : "its private caches are unknown");
    if (o->forced[0])
        add_flag(&v, &k, "--force: %s", o->forced);
    for (size_t i = 0; i < n; i++) {
        const size_t ns = pred_strata_phases(&progs[i]);
        if (ns)
            add_flag(&v, &k,
                     "%s: per-stratum reuse in %zu of %zu phases: sets grouped by how often "
                     "the phase references them, the cache solved per group (in place of the "
                     "probe's CV skew)",
                     name_of(&progs[i]), ns, progs[i].n_shown);
    }
    for (size_t i = 0; i < n; i++) {
        const struct pred_prog *p = &progs[i];
        if (!o->probe)
            continue;
        bool layout = false; /* the random model's skew of the layout (no probe CV here) */
        for (size_t q = 0; !p->probe_used && q < p->n_shown; q++)
            layout |= p->plain[q].cv > 0;
        if (!p->probe_used)
            add_flag(&v, &k, "%s: no probe readings (%s): %s, no anchor", name_of(p),
                     p->prof.probe.reason ? p->prof.probe.reason : "none recorded",
                     pred_strata_phases(p) ? "set usage from the strata only"
                     : layout              ? "set usage from the layout's spread over the sets"
                                           : "uniform set usage assumed");
        for (size_t q = 0; p->probe_used && q < p->prof.probe.n_phases; q++)
            if (p->prof.probe.per_phase[q].note)
                add_flag(&v, &k, "%s: phase %d: probe readings: %s", name_of(p),
                         p->prof.probe.per_phase[q].phase, p->prof.probe.per_phase[q].note);
        for (size_t q = 0; q < p->n_shown; q++)
            if (p->anchor[q] == PRED_ANCHOR_FLAGGED)
                add_flag(&v, &k,
                         "%s: phase %d: gamma %.3g outside [%.2f, %.2f]: probe and StatStack "
                         "disagree on the footprint's growth (prefetching, non-LRU policy, "
                         "sampling bias)",
                         name_of(p), p->phase_id[q], p->gamma[q], 1 / LLC_CONTENTION_ANCHOR_TOL,
                         LLC_CONTENTION_ANCHOR_TOL);
    }
    const struct llc_contention_run *run = r->run;
    if (run->warn_segments)
        add_flag(&v, &k,
                 "equilibrium: T* exceeds 10%% of the shortest phase run (consecutive "
                 "windows of one phase) in %.1f%% of the co-run (worst %.2g x the run): the "
                 "cache may not settle before the phase changes",
                 100 * run->warn_seconds / run->total_s, run->worst_tstar_ratio);
    size_t crossed = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t q = 0; q < progs[i].n_shown; q++)
            crossed += progs[i].plain[q].excess && progs[i].plain[q].excess->n > 0;
    if (crossed && llc_contention_base_policy(o->policy) == LLC_CONTENTION_LRU && o->assoc)
        add_flag(&v, &k,
                 "phases: %zu phases' reuses across their programs' other phases count the "
                 "lines those touched (phases[].cross_phase; --phase-local: each phase's own)",
                 crossed);
    size_t missed = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t q = 0; q < progs[i].n_shown; q++)
            missed += progs[i].plain[q].excess && progs[i].plain[q].excess->n > 0 &&
                      progs[i].plain[q].excess->has_misses;
    if (missed)
        add_flag(&v, &k,
                 "phases: %zu phases' reuses across their programs' other phases count the "
                 "misses those make beyond their own, beside this co-run and alone "
                 "(phases[].cross_phase; --phase-local: each phase's own)",
                 missed);
    if (run->whole_segments)
        add_flag(&v, &k,
                 "phases: in %.1f%% of the co-run T* spans a program's current phase run, so "
                 "its co-runners see its whole-program footprint there (its own figures stay "
                 "its phase's; --phase-local: each phase's own)",
                 100 * run->whole_seconds / run->total_s);
    size_t nc = 0;
    for (size_t t = 0; t < run->n_tuples; t++)
        nc += !run->tuples[t].info.converged;
    if (nc)
        add_flag(&v, &k,
                 "coupling: %zu of %zu phase tuples did not converge (beta down to 1/16, "
                 "200 steps each)",
                 nc, run->n_tuples);
    *out = v;
    return k;
}

static json_t *summary_json(const struct llc_contention_prog_summary *u,
                            const struct pred_machine *m, double freq)
{
    (void)freq;
    return json_pack(
        "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "miss_ratio",
        llc_json_finite(u->miss_ratio), "miss_rate_per_s",
        llc_json_finite(per_s(u->misses, u->seconds)), "occupancy_lines",
        llc_json_finite(u->occupancy), "occupancy_bytes", llc_json_finite(u->occupancy * 64),
        "occupancy_pct_llc", llc_json_finite(100 * u->occupancy / (double)m->lines), "cpi",
        llc_json_finite(u->cpi), "solo_cpi", llc_json_finite(u->solo_cpi), "slowdown",
        llc_json_finite(u->slowdown), "instructions", llc_json_finite(u->instructions), "seconds",
        llc_json_finite(u->seconds), "solo_seconds", llc_json_finite(u->solo_seconds));
}

static json_t *baseline_json(const struct pred_baseline_sum *u, const struct pred_machine *m)
{
    const double occ = u->time > 0 ? u->occ_time / u->time : NAN;
    return json_pack("{s:o, s:o, s:o, s:o, s:o}", "miss_ratio",
                     llc_json_finite(u->refs > 0 ? u->misses / u->refs : NAN), "occupancy_lines",
                     llc_json_finite(occ), "occupancy_pct_llc",
                     llc_json_finite(100 * occ / (double)m->lines), "cpi",
                     llc_json_finite(u->ins > 0 ? u->cycles / u->ins : NAN), "slowdown",
                     llc_json_finite(u->solo_cycles > 0 ? u->cycles / u->solo_cycles : NAN));
}

/* e's values v at its points, or null without them. */
static json_t *points_json(const struct llc_contention_excess *e, const double *v, bool have)
{
    if (!e || !have)
        return json_null();
    json_t *a = json_array();
    for (size_t k = 0; k < e->n; k++)
        json_array_append_new(a, llc_json_finite(v[k]));
    return a;
}

/* The lines the program's other phases add to the phase's reuses, by own
 * distance (docs/METHODS.md §12.7), and with random replacement the
 * misses they add beside this co-run (e) and alone (alone); null where
 * none are added. */
static json_t *cross_phase_json(const struct llc_contention_excess *e,
                                const struct llc_contention_excess *alone)
{
    if (!e || e->n == 0)
        return json_null();
    return json_pack("{s:o, s:o, s:o, s:o}", "distances", points_json(e, e->x, true), "lines",
                     points_json(e, e->lines, true), "misses",
                     points_json(e, e->misses, e->has_misses), "misses_alone",
                     points_json(alone, alone ? alone->misses : NULL,
                                 alone && alone->has_misses && alone->n == e->n));
}

/* How a phase's skew is solved (docs/METHODS.md §12.3, §12.6): the
 * layout's Poisson strata, the 5 key values of a measured CV, or none. */
static const char *skew_of(const struct llc_contention_phase *ph)
{
    return ph->layout ? "layout" : ph->cv > 0 ? "key_values" : "none";
}

static json_t *phases_json(const struct pred_prog *p)
{
    static const char *const status[] = {"none", "ok", "flagged"};
    json_t *a = json_array();
    for (size_t k = 0; k < p->n_shown; k++)
        json_array_append_new(
            a, json_pack("{s:i, s:o, s:o, s:s, s:o, s:o, s:s, s:s, s:o, s:o}", "phase",
                         p->phase_id[k], "gamma", llc_json_finite(p->gamma[k]), "gamma_rms_log",
                         llc_json_finite(p->gamma_rms[k]), "anchor", status[p->anchor[k]], "cv",
                         llc_json_finite(p->probe_cv[k]), "cv_skew",
                         llc_json_finite(p->plain[k].cv), "skew_strata", skew_of(&p->plain[k]),
                         "reuse_distances", p->own[k] ? "own" : "program", "refs_per_instruction",
                         llc_json_finite(p->plain[k].api), "cross_phase",
                         cross_phase_json(p->plain[k].excess, p->plain[k].excess_alone)));
    return a;
}

static json_t *programs_json(const struct pred_prog *progs, size_t n, const struct pred_machine *m,
                             const struct pred_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct pred_prog *p = &progs[i];
        const double f = p->prof.timing.freq_hz;
        json_t *o = json_pack(
            "{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:b, s:o}", "name", name_of(p), "file", p->file,
            "model", summary_json(&r->run->summary[i], m, f), "foa",
            baseline_json(&r->foa_sum[i], m), "sdc", baseline_json(&r->sdc_sum[i], m), "anchored",
            r->anchored ? summary_json(&r->anchored->summary[i], m, f) : json_null(),
            "measured_solo_cpi", llc_json_finite(measured_solo_cpi(p)), "probe_used", p->probe_used,
            "phases", phases_json(p));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *share_json(const struct llc_contention_share *s,
                          const struct llc_contention_share *solo)
{
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "miss_ratio", llc_json_finite(s->miss_ratio),
                     "miss_rate_per_s", llc_json_finite(s->miss_rate), "occupancy_lines",
                     llc_json_finite(s->occupancy), "cpi", llc_json_finite(s->cpi), "solo_cpi",
                     llc_json_finite(solo->cpi), "slowdown", llc_json_finite(s->cpi / solo->cpi));
}

static json_t *tuples_json(const struct pred_prog *progs, size_t n, const struct pred_result *r)
{
    json_t *a = json_array();
    const struct llc_contention_run *run = r->run;
    for (size_t t = 0; t < run->n_tuples; t++) {
        const struct llc_contention_tuple_result *tr = &run->tuples[t];
        if (!pred_tuple_shown(progs, n, tr))
            continue;
        json_t *ph = json_array(), *pr = json_array(), *age = json_array(), *wh = json_array();
        for (size_t i = 0; i < n; i++) {
            json_array_append_new(ph, json_integer(progs[i].phase_id[tr->phase[i]]));
            /* its co-runners saw its whole-program footprint */
            json_array_append_new(wh, json_boolean(tr->phase[2 * n + i] > 0));
            /* cold start: the phase's own references so far (null: warm) */
            json_array_append_new(age,
                                  tr->phase[n + i] < 0 ? json_null() : llc_json_finite(tr->age[i]));
            json_t *s = share_json(&tr->share[i], &tr->solo[i]);
            json_object_set_new(s, "foa_miss_ratio", llc_json_finite(r->foa[t * n + i].miss_ratio));
            json_object_set_new(
                s, "foa_slowdown",
                llc_json_finite(r->foa[t * n + i].cpi / r->foa_solo[t * n + i].cpi));
            json_object_set_new(s, "sdc_miss_ratio", llc_json_finite(r->sdc[t * n + i].miss_ratio));
            json_object_set_new(
                s, "sdc_slowdown",
                llc_json_finite(r->sdc[t * n + i].cpi / r->sdc_solo[t * n + i].cpi));
            json_array_append_new(pr, s);
        }
        json_array_append_new(
            a, json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:i, s:o, s:o}", "phases", ph, "ages",
                         age, "whole", wh, "seconds", llc_json_finite(tr->seconds), "t_star_s",
                         llc_json_finite(tr->info.t_star), "min_phase_run_s",
                         llc_json_finite(tr->min_window_s), "converged", tr->info.converged,
                         "iterations", (int)tr->info.iterations, "beta",
                         llc_json_finite(tr->info.beta), "programs", pr));
    }
    return a;
}

static json_t *grid_json(const struct pred_prog *progs, const struct pred_result *r)
{
    if (!r->grid)
        return json_null();
    json_t *pa = json_array(), *pb = json_array(), *rows[4];
    for (int k = 0; k < 4; k++)
        rows[k] = json_array();
    for (size_t a = 0; a < r->grid_a; a++)
        json_array_append_new(pa, json_integer(progs[0].phase_id[a]));
    for (size_t b = 0; b < r->grid_b; b++)
        json_array_append_new(pb, json_integer(progs[1].phase_id[b]));
    for (size_t a = 0; a < r->grid_a; a++) {
        json_t *row[4];
        for (int k = 0; k < 4; k++)
            row[k] = json_array();
        for (size_t b = 0; b < r->grid_b; b++) {
            const struct llc_contention_share *s = &r->grid[(a * r->grid_b + b) * 2];
            const struct llc_contention_share *s1 = &r->grid_solo[(a * r->grid_b + b) * 2];
            for (int j = 0; j < 2; j++) {
                json_array_append_new(row[j], llc_json_finite(s[j].cpi / s1[j].cpi));
                json_array_append_new(row[2 + j], llc_json_finite(s[j].miss_ratio));
            }
        }
        for (int k = 0; k < 4; k++)
            json_array_append_new(rows[k], row[k]);
    }
    return json_pack("{s:[s,s], s:o, s:o, s:o, s:o, s:o, s:o}", "programs", name_of(&progs[0]),
                     name_of(&progs[1]), "phases_a", pa, "phases_b", pb, "slowdown_a", rows[0],
                     "slowdown_b", rows[1], "miss_ratio_a", rows[2], "miss_ratio_b", rows[3]);
}

static int write_timeline_csv(const char *path, const struct pred_prog *progs, size_t n,
                              const struct pred_result *r, char *err, size_t errlen)
{
    struct llc_afile *f;
    int rc = llc_afile_open(path, &f, err, errlen);
    if (rc < 0)
        return rc;
    FILE *s = llc_afile_stream(f);
    const struct llc_contention_run *run = r->run;
    fprintf(s, "t0_s,dt_s,program,name,window,phase,miss_ratio,miss_rate_per_s,occupancy_lines,cpi,"
               "solo_cpi,slowdown\n");
    for (size_t k = 0; k < run->n_segments; k++) {
        const struct llc_contention_segment *g = &run->segments[k];
        const struct llc_contention_tuple_result *tr = &run->tuples[g->tuple];
        for (size_t i = 0; i < n; i++) {
            const struct llc_contention_share *x = &tr->share[i], *x1 = &tr->solo[i];
            fprintf(s, "%.17g,%.17g,%zu,%s,%zu,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", g->t0, g->dt, i,
                    name_of(&progs[i]), run->segment_window[k * n + i],
                    progs[i].phase_id[tr->phase[i]], x->miss_ratio, x->miss_rate, x->occupancy,
                    x->cpi, x1->cpi, x->cpi / x1->cpi);
        }
    }
    return llc_afile_commit(f, err, errlen);
}

static int write_tuples_csv(const char *path, const struct pred_prog *progs, size_t n,
                            const struct pred_result *r, char *err, size_t errlen)
{
    struct llc_afile *f;
    int rc = llc_afile_open(path, &f, err, errlen);
    if (rc < 0)
        return rc;
    FILE *s = llc_afile_stream(f);
    const struct llc_contention_run *run = r->run;
    fprintf(
        s,
        "tuple,program,name,phase,seconds,t_star_s,miss_ratio,occupancy_lines,cpi,solo_cpi,slowdown,"
        "foa_miss_ratio,foa_slowdown,sdc_miss_ratio,sdc_slowdown,whole\n");
    for (size_t t = 0; t < run->n_tuples; t++) {
        const struct llc_contention_tuple_result *tr = &run->tuples[t];
        for (size_t i = 0; pred_tuple_shown(progs, n, tr) && i < n; i++) {
            const size_t j = t * n + i;
            fprintf(s, "%zu,%zu,%s,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d\n",
                    t, i, name_of(&progs[i]), progs[i].phase_id[tr->phase[i]], tr->seconds,
                    tr->info.t_star, tr->share[i].miss_ratio, tr->share[i].occupancy,
                    tr->share[i].cpi, tr->solo[i].cpi, tr->share[i].cpi / tr->solo[i].cpi,
                    r->foa[j].miss_ratio, r->foa[j].cpi / r->foa_solo[j].cpi, r->sdc[j].miss_ratio,
                    r->sdc[j].cpi / r->sdc_solo[j].cpi, tr->phase[2 * n + i] > 0);
        }
    }
    return llc_afile_commit(f, err, errlen);
}

static char *with_suffix(const char *prefix, const char *suffix)
{
    const size_t n = strlen(prefix) + strlen(suffix) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s", prefix, suffix);
    return s;
}

int pred_write(const char *prefix, const struct pred_prog *progs, size_t n,
               const struct pred_machine *m, const struct pred_opts *o, const struct pred_result *r,
               char *err, size_t errlen)
{
    char **flags = NULL;
    const size_t nf = pred_flags(progs, n, m, o, r, &flags);
    char *json = with_suffix(prefix, ".prediction.json"),
         *csv = with_suffix(prefix, ".prediction.csv");
    char *tcsv = with_suffix(prefix, ".tuples.csv");
    json_t *doc = llc_json_doc_new(PRED_FORMAT, PRED_VERSION), *fl = json_array();
    int rc = 0;
    if (!json || !csv || !tcsv || !doc || !fl) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < nf; k++)
        json_array_append_new(fl, json_string(flags[k]));
    const enum llc_contention_policy base = llc_contention_base_policy(o->policy);
    json_object_set_new(doc, "machine",
                        json_pack("{s:s, s:s?, s:{s:I, s:I, s:I, s:i, s:s}, s:s, s:s}", "kind",
                                  m->kind, "preset", m->preset[0] ? m->preset : NULL, "llc",
                                  "bytes", (json_int_t)m->bytes, "lines", (json_int_t)m->lines,
                                  "sets", (json_int_t)m->sets, "ways", (int)m->ways, "inclusion",
                                  m->inclusion, "policy", llc_contention_policy_name(o->policy),
                                  "model_policy", llc_contention_policy_name(base)));
    json_object_set_new(json_object_get(doc, "machine"), "private_lines",
                        json_real(m->private_lines));
    json_object_set_new(json_object_get(doc, "machine"), "rrip_protect",
                        json_real(pred_rrip_protect(m, o)));
    json_object_set_new(
        doc, "options",
        json_pack("{s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b}", "coupling",
                  o->coupling, "probe", o->probe, "anchored", o->anchored, "cold_start", o->cold,
                  "first_touches", o->first_touches, "set_associative", o->assoc, "strata",
                  o->strata, "uncensored", o->uncensor, "exclusive", o->exclusive, "exclusive_lru",
                  o->exclusive_lru, "phase_local", o->phase_local, "own_distances",
                  o->own_distances, "force", o->force));
    json_object_set_new(doc, "programs", programs_json(progs, n, m, r));
    json_object_set_new(doc, "tuples", tuples_json(progs, n, r));
    json_object_set_new(doc, "pair_grid", grid_json(progs, r));
    json_object_set_new(doc, "timeline",
                        json_pack("{s:o, s:I, s:I, s:o, s:o, s:s}", "total_s",
                                  llc_json_finite(r->run->total_s), "segments",
                                  (json_int_t)r->run->n_segments, "equilibrium_warn_segments",
                                  (json_int_t)r->run->warn_segments, "equilibrium_warn_s",
                                  llc_json_finite(r->run->warn_seconds), "worst_tstar_over_window",
                                  llc_json_finite(r->run->worst_tstar_ratio), "csv", csv));
    json_object_set_new(json_object_get(doc, "timeline"), "whole_s",
                        llc_json_finite(r->run->whole_seconds));
    json_object_set_new(doc, "flags", fl);
    fl = NULL;
    json_object_set_new(doc, "prediction_ms", llc_json_finite(r->seconds * 1e3));
    json_object_set_new(doc, "prediction_cpu_ms", llc_json_finite(r->cpu_seconds * 1e3));
    rc = llc_json_write_atomic(json, doc, err, errlen);
    if (rc == 0)
        rc = write_timeline_csv(csv, progs, n, r, err, errlen);
    if (rc == 0)
        rc = write_tuples_csv(tcsv, progs, n, r, err, errlen);
out:
    for (size_t k = 0; k < nf; k++)
        free(flags[k]);
    free(flags);
    json_decref(fl);
    json_decref(doc);
    free(json);
    free(csv);
    free(tcsv);
    return rc;
}

void pred_print(FILE *out, const struct pred_prog *progs, size_t n, const struct pred_machine *m,
                const struct pred_opts *o, const struct pred_result *r)
{
    const enum llc_contention_policy base = llc_contention_base_policy(o->policy);
    fprintf(out,
            "predict: %zu programs on %s (%llu lines, %llu sets x %u ways), policy %s (model %s), "
            "coupling %s, probe %s\n",
            n, m->label, m->lines, m->sets, m->ways, llc_contention_policy_name(o->policy),
            llc_contention_policy_name(base), o->coupling ? "on" : "off", o->probe ? "on" : "off");
    fprintf(out, "  %-16s %10s %9s %10s %7s %7s %8s  %-15s %-15s\n", "program", "miss_ratio",
            "misses/s", "occupancy", "%llc", "cpi", "slowdown", "FOA mr/slowdown",
            "SDC mr/slowdown");
    for (size_t i = 0; i < n; i++) {
        const struct llc_contention_prog_summary *u = &r->run->summary[i];
        const struct pred_baseline_sum *fa = &r->foa_sum[i], *sd = &r->sdc_sum[i];
        fprintf(out, "  %-16s %10.5f %9.3g %10.0f %6.1f%% %7.3f %8.4f  %.4f/%-8.4f %.4f/%-8.4f\n",
                name_of(&progs[i]), u->miss_ratio, per_s(u->misses, u->seconds), u->occupancy,
                100 * u->occupancy / (double)m->lines, u->cpi, u->slowdown, fa->misses / fa->refs,
                fa->cycles / fa->solo_cycles, sd->misses / sd->refs, sd->cycles / sd->solo_cycles);
    }
    fprintf(out,
            "  co-run %.4g s modelled, %zu phase tuples, %zu segments; prediction took %.1f ms\n",
            r->run->total_s, r->run->n_tuples, r->run->n_segments, r->seconds * 1e3);
}
