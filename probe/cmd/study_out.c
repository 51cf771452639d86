/* llcprobe study: study.json (llcprobe-study v1), groups.csv,
 * coschedules.csv, timeline.csv, and the summary on stdout. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/study.h"
#include "llcprobe/common.h"
#include "util/atomic_file.h"
#include "util/json.h"

#define STUDY_FORMAT "llcprobe-study"
#define STUDY_VERSION 1

static const char *pname(const struct study *s, size_t i)
{
    return s->progs[i].prof.program.name;
}

/* Distance of a co-schedule from the best, in % of the best's value
 * (positive = worse). */
double study_from_best(const struct study *s, double v)
{
    const double b = s->top[0].value;
    const double d = study_metric_higher_better(s->metric) ? b - v : v - b;
    return b != 0 ? 100 * d / fabs(b) : 0;
}

static json_t *sched_json(const struct study *s, const struct study_sched *c, const char *label)
{
    json_t *groups = json_array();
    for (size_t i = 0; i < c->ng; i++) {
        const struct study_group *g = &s->groups[c->g[i]];
        json_t *progs = json_array();
        for (size_t j = 0; j < g->n; j++)
            json_array_append_new(progs,
                                  json_pack("{s:s, s:o, s:o, s:o, s:o}", "name", pname(s, g->m[j]),
                                            "slowdown", llc_json_finite(g->slow[j]), "llc_misses",
                                            llc_json_finite(g->misses[j]), "occupancy_lines",
                                            llc_json_finite(g->occ[j]), "miss_ratio",
                                            llc_json_finite(g->mr[j])));
        json_array_append_new(groups, json_pack("{s:o}", "programs", progs));
    }
    return json_pack("{s:s, s:o, s:o, s:o}", "label", label, "value", llc_json_finite(c->value),
                     "from_best_pct", llc_json_finite(study_from_best(s, c->value)), "groups",
                     groups);
}

static const char *metric_doc(enum study_metric m)
{
    switch (m) {
    case STUDY_THROUGHPUT:
        return "weighted speedup: sum over programs of 1/slowdown (higher is better)";
    case STUDY_WORST:
        return "largest slowdown of any program (lower is better)";
    case STUDY_FAIRNESS:
        return "largest over smallest slowdown (lower is better)";
    default:
        return "total LLC misses of every program's first pass (lower is better)";
    }
}

/* The model's assumptions and what the study noticed, one line each. */
size_t study_assumptions(const struct study *s, char lines[][STUDY_LINE], size_t max)
{
    size_t n = 0;
#define ADD(...)                                           \
    do {                                                   \
        if (n < max)                                       \
            snprintf(lines[n++], STUDY_LINE, __VA_ARGS__); \
    } while (0)
    ADD("policy %s predicted with the %s equilibrium", llc_contention_policy_name(s->cfg.policy),
        llc_contention_base_policy(s->cfg.policy) == LLC_CONTENTION_RANDOM ? "random-replacement"
                                                                           : "LRU");
    ADD("CPI coupling on: access rates and CPI solved together");
    ADD("set skew from probe readings where a profile has them; the probe anchor (gamma) is not used");
    ADD("each program's phases co-simulated over its solo window sequence; a program that finishes "
        "first restarts, slowdown counts its first pass");
    size_t probe = 0;
    for (size_t i = 0; i < s->n; i++)
        probe += s->progs[i].probe_used;
    ADD("%zu of %zu profiles have probe readings", probe, s->n);
    size_t phases = 0;
    for (size_t i = 0; i < s->n; i++)
        phases += s->progs[i].n_shown;
    ADD("%zu of %zu phases solved per stratum of their sets (per-stratum reuse of the profiles)",
        s->strata_phases, phases);
    if (s->warn_groups)
        ADD("warning: in %zu of %zu groups the cache equilibrium (T*) is slower than 10%% of a phase run",
            s->warn_groups, s->n_groups);
    if (s->phase_local)
        ADD("--phase-local: each phase on its own (co-runners see a program's current phase "
            "only; a phase's reuses count only its own lines)");
    else
        ADD("%zu of %zu groups: where T* spans a program's phase run, its co-runners see its "
            "whole-program footprint",
            s->whole_groups, s->n_groups);
    if (s->forced[0])
        ADD("forced: %.600s", s->forced);
    for (size_t i = 0; i < s->n_failed; i++)
        ADD("left out: %.900s", s->failed[i]);
#undef ADD
    return n;
}

static int write_json(const char *dir, const struct study *s, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/study.json", dir);
    json_t *doc = llc_json_doc_new(STUDY_FORMAT, STUDY_VERSION);
    json_t *progs = json_array(), *pair = json_array(), *ranked = json_array(),
           *flags = json_array(), *failed = json_array();
    for (size_t i = 0; i < s->n; i++) {
        const struct llc_profile *p = &s->progs[i].prof;
        json_array_append_new(progs,
                              json_pack("{s:s, s:s, s:s*, s:i}", "name", p->program.name, "profile",
                                        s->progs[i].file, "sha256", p->program.sha256, "phases",
                                        (json_int_t)p->n_phases));
        json_t *row = json_array();
        for (size_t j = 0; j < s->n; j++)
            json_array_append_new(row, llc_json_finite(s->pair[i * s->n + j]));
        json_array_append_new(pair, row);
    }
    for (size_t i = 0; i < s->n_top; i++) {
        char label[32];
        snprintf(label, sizeof(label), i == 0 ? "best" : "runner-up %zu", i);
        json_array_append_new(ranked, sched_json(s, &s->top[i], label));
    }
    char lines[64][STUDY_LINE];
    const size_t nl = study_assumptions(s, lines, 64);
    for (size_t i = 0; i < nl; i++)
        json_array_append_new(flags, json_string(lines[i]));
    for (size_t i = 0; i < s->n_failed; i++)
        json_array_append_new(failed, json_string(s->failed[i]));
    const struct pred_machine *m = &s->machine;
    const struct study_search *q = &s->search;
    int rc = json_object_update_new(
        doc,
        json_pack(
            "{s:i, s:i, s:s, s:s, s:o, s:o, s:{s:s, s:s, s:I, s:I, s:I, s:i, s:s, s:s}, "
            "s:{s:s, s:f, s:f, s:b, s:o, s:o, s:b, s:o, s:o, s:b, s:i, s:I, s:f, s:f}, "
            "s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:o}",
            "programs_n", (json_int_t)s->n, "cores", (json_int_t)s->k, "metric",
            study_metric_name(s->metric), "metric_definition", metric_doc(s->metric), "programs",
            progs, "failed", failed, "machine", "kind", m->kind, "preset", m->preset, "llc_bytes",
            (json_int_t)m->bytes, "llc_sets", (json_int_t)m->sets, "llc_lines",
            (json_int_t)m->lines, "llc_ways", (int)m->ways, "policy", m->policy, "inclusion",
            m->inclusion, "search", "method", q->method, "co_schedules", q->n_schedules,
            "evaluated", q->evaluated, "best_exact", q->best_exact, "best_bound",
            llc_json_finite(q->best_bound), "optimality_gap_pct", llc_json_finite(q->gap_pct),
            "worst_exact", q->worst_exact, "worst_bound", llc_json_finite(q->worst_bound),
            "worst_gap_pct", llc_json_finite(q->worst_gap_pct), "median_sampled", q->median_sampled,
            "samples", (int)q->samples, "seed", (json_int_t)q->seed, "predict_s", s->predict_s,
            "search_s", s->search_s, "ranked", ranked, "median",
            sched_json(s, &s->median, "median"), "worst", sched_json(s, &s->worst, "worst"),
            "pairwise_slowdown", pair, "assumptions", flags, "groups_n", (json_int_t)s->n_groups,
            "worst_vs_best_pct", llc_json_finite(study_from_best(s, s->worst.value)),
            "median_vs_best_pct", llc_json_finite(study_from_best(s, s->median.value))));
    if (rc < 0 || !doc) {
        json_decref(doc);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    rc = llc_json_write_atomic(path, doc, err, errlen);
    json_decref(doc);
    return rc;
}

/* Opens DIR/NAME for an atomic write. */
static int open_csv(const char *dir, const char *name, struct llc_afile **f, char *err,
                    size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return llc_afile_open(path, f, err, errlen);
}

static int write_groups(const char *dir, const struct study *s, char *err, size_t errlen)
{
    struct llc_afile *f;
    int rc = open_csv(dir, "groups.csv", &f, err, errlen);
    if (rc < 0)
        return rc;
    FILE *o = llc_afile_stream(f);
    fprintf(o, "group,size,position,program,slowdown,llc_misses,occupancy_lines,miss_ratio\n");
    for (size_t g = 0; g < s->n_groups; g++) {
        const struct study_group *x = &s->groups[g];
        for (size_t j = 0; j < x->n; j++)
            fprintf(o, "%zu,%u,%zu,%s,%.9g,%.9g,%.9g,%.9g\n", g, x->n, j, pname(s, x->m[j]),
                    x->slow[j], x->misses[j], x->occ[j], x->mr[j]);
    }
    return llc_afile_commit(f, err, errlen);
}

static void sched_csv(FILE *o, const struct study *s, const struct study_sched *c,
                      const char *label)
{
    for (size_t i = 0; i < c->ng; i++) {
        const struct study_group *g = &s->groups[c->g[i]];
        for (size_t j = 0; j < g->n; j++)
            fprintf(o, "%s,%.9g,%.6g,%zu,%s,%.9g,%.9g\n", label, c->value,
                    study_from_best(s, c->value), i, pname(s, g->m[j]), g->slow[j], g->misses[j]);
    }
}

static int write_scheds(const char *dir, const struct study *s, char *err, size_t errlen)
{
    struct llc_afile *f;
    int rc = open_csv(dir, "coschedules.csv", &f, err, errlen);
    if (rc < 0)
        return rc;
    FILE *o = llc_afile_stream(f);
    fprintf(o, "coschedule,value,from_best_pct,group,program,slowdown,llc_misses\n");
    for (size_t i = 0; i < s->n_top; i++) {
        char label[32];
        snprintf(label, sizeof(label), i ? "runner-up-%zu" : "best", i);
        sched_csv(o, s, &s->top[i], label);
    }
    sched_csv(o, s, &s->median, "median");
    sched_csv(o, s, &s->worst, "worst");
    return llc_afile_commit(f, err, errlen);
}

static int write_timeline(const char *dir, const struct study *s, char *err, size_t errlen)
{
    struct llc_afile *f;
    int rc = open_csv(dir, "timeline.csv", &f, err, errlen);
    if (rc < 0)
        return rc;
    FILE *o = llc_afile_stream(f);
    fprintf(o, "group,program,t0_s,dt_s,occupancy_lines,miss_ratio\n");
    for (size_t i = 0; i < s->top[0].ng; i++) {
        const struct study_group *g = &s->groups[s->top[0].g[i]];
        const struct llc_contention_run *r = s->runs[i];
        for (size_t k = 0; k < r->n_segments; k++) {
            const struct llc_contention_tuple_result *t = &r->tuples[r->segments[k].tuple];
            for (size_t j = 0; j < g->n; j++)
                fprintf(o, "%zu,%s,%.17g,%.17g,%.9g,%.9g\n", i, pname(s, g->m[j]),
                        r->segments[k].t0, r->segments[k].dt, t->share[j].occupancy,
                        t->share[j].miss_ratio);
        }
    }
    return llc_afile_commit(f, err, errlen);
}

int study_write(const char *dir, const struct study *s, char *err, size_t errlen)
{
    int rc = write_json(dir, s, err, errlen);
    if (rc == 0)
        rc = write_groups(dir, s, err, errlen);
    if (rc == 0)
        rc = write_scheds(dir, s, err, errlen);
    if (rc == 0)
        rc = write_timeline(dir, s, err, errlen);
    return rc;
}

static void print_sched(const struct study *s, const struct study_sched *c, const char *label)
{
    printf("%-8s %s %.6g (%+.2f%% from best):", label, study_metric_name(s->metric), c->value,
           study_from_best(s, c->value));
    for (size_t i = 0; i < c->ng; i++) {
        const struct study_group *g = &s->groups[c->g[i]];
        printf(" {");
        for (size_t j = 0; j < g->n; j++)
            printf("%s%s %.3f", j ? ", " : "", pname(s, g->m[j]), g->slow[j]);
        printf("}");
    }
    printf("\n");
}

void study_print(const struct study *s)
{
    const struct study_search *q = &s->search;
    printf(
        "study: %zu programs, %zu per LLC, %zu groups predicted in %.2f s; %s over %.4g co-schedules "
        "in %.2f s\n",
        s->n, s->k, s->n_groups, s->predict_s, q->method, q->n_schedules, s->search_s);
    if (!q->best_exact)
        printf("best not proven optimal: optimality gap at most %.3g%%\n", q->gap_pct);
    print_sched(s, &s->top[0], "best");
    print_sched(s, &s->median, q->median_sampled ? "median~" : "median");
    print_sched(s, &s->worst, "worst");
    for (size_t i = 0; i < s->n_failed; i++)
        printf("left out: %s\n", s->failed[i]);
}
