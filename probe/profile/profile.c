/* llcprobe-profile in memory: life cycle, lookups and the semantic checks
 * the reader and the writer share (docs/FORMATS-profile.md). */
#include "llcprobe/profile.h"

#include "llcprobe/common.h"
#include "profile/profile_internal.h"
#include "util/version.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void solo_unknown(struct llc_profile_solo *s)
{
    s->llc_miss_ratio = NAN;
    s->llc_accesses_per_reference = NAN;
    s->occupancy_lines = NAN;
}

void llc_profile_init(struct llc_profile *p)
{
    memset(p, 0, sizeof(*p));
}

int llc_profile_stamp(struct llc_profile *p, char *err, size_t errlen)
{
    char when[32];
    const time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
        return llc_errf(err, errlen, -EINVAL, "cannot format the current time");
    char *v = strdup(LLCPROBE_VERSION_STRING), *c = strdup(when);
    if (!v || !c) {
        free(v);
        free(c);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    free(p->llcprobe_version);
    free(p->created);
    p->llcprobe_version = v;
    p->created = c;
    return 0;
}

static void free_windows(struct llc_profile_windows *w)
{
    free(w->phase_of);
    free(w->instructions);
    free(w->references);
    free(w->first_touches);
    w->phase_of = NULL;
    w->instructions = w->references = w->first_touches = NULL;
    w->count = 0;
}

static void free_strata(struct llc_profile_phase *ph)
{
    for (size_t g = 0; g < ph->n_strata; g++) {
        llc_statmodel_hist_destroy(ph->strata[g].rdhist);
        llc_statmodel_hist_destroy(ph->strata[g].rdhist_own);
    }
    free(ph->strata);
    ph->strata = NULL;
    ph->n_strata = 0;
}

static void free_phases(struct llc_profile *p)
{
    for (size_t i = 0; i < p->n_phases; i++) {
        llc_statmodel_hist_destroy(p->phases[i].rdhist);
        llc_statmodel_hist_destroy(p->phases[i].rdhist_own);
        free_strata(&p->phases[i]);
        prof_spans_free(&p->phases[i]);
    }
    free(p->phases);
    p->phases = NULL;
    p->n_phases = 0;
}

static void free_probe(struct llc_profile_probe *pr)
{
    for (size_t i = 0; i < pr->n_phases; i++) {
        for (size_t k = 0; k < LLC_PROFILE_KEYS; k++)
            free(pr->per_phase[i].sets[k]);
        free(pr->per_phase[i].note);
    }
    free(pr->per_phase);
    pr->per_phase = NULL;
    pr->n_phases = 0;
}

void llc_profile_free(struct llc_profile *p)
{
    free(p->llcprobe_version);
    free(p->created);
    struct llc_profile_program *g = &p->program;
    free(g->name);
    free(g->source);
    for (size_t i = 0; i < g->n_command; i++)
        free(g->command[i]);
    free(g->command);
    free(g->binary);
    free(g->sha256);
    free(g->workload);
    free(g->trace);
    free(p->machine.kind);
    free(p->machine.preset);
    free(p->machine.llc.policy);
    free(p->machine.llc.inclusion);
    free(p->machine.info_json);
    free(p->sampler.kind);
    free(p->windows.unit);
    free_windows(&p->windows);
    free_phases(p);
    free_probe(&p->probe);
    free(p->probe.reason);
    llc_profile_init(p);
}

int llc_profile_alloc_windows(struct llc_profile *p, size_t n, char *err, size_t errlen)
{
    free_windows(&p->windows);
    const size_t m = n ? n : 1;
    int *ph = malloc(m * sizeof(*ph));
    double *ins = calloc(m, sizeof(*ins)), *refs = calloc(m, sizeof(*refs));
    if (!ph || !ins || !refs) {
        free(ph);
        free(ins);
        free(refs);
        return llc_errf(err, errlen, -ENOMEM, "out of memory (%zu windows)", n);
    }
    for (size_t i = 0; i < n; i++)
        ph[i] = -1;
    p->windows = (struct llc_profile_windows){.unit = p->windows.unit,
                                              .length = p->windows.length,
                                              .count = n,
                                              .phase_of = ph,
                                              .instructions = ins,
                                              .references = refs};
    return 0;
}

int llc_profile_alloc_first_touches(struct llc_profile *p, char *err, size_t errlen)
{
    free(p->windows.first_touches);
    p->windows.first_touches = calloc(p->windows.count ? p->windows.count : 1, sizeof(double));
    return p->windows.first_touches
               ? 0
               : llc_errf(err, errlen, -ENOMEM, "out of memory (%zu windows)", p->windows.count);
}

int llc_profile_alloc_phases(struct llc_profile *p, size_t n, char *err, size_t errlen)
{
    free_phases(p);
    if (n == 0)
        return 0;
    p->phases = calloc(n, sizeof(*p->phases));
    if (!p->phases)
        return llc_errf(err, errlen, -ENOMEM, "out of memory (%zu phases)", n);
    p->n_phases = n;
    for (size_t i = 0; i < n; i++) {
        p->phases[i].id = (int)i;
        p->phases[i].set_dispersion = NAN;
        solo_unknown(&p->phases[i].solo);
        const int rc = llc_statmodel_hist_create(&p->phases[i].rdhist, err, errlen);
        if (rc < 0) {
            free_phases(p);
            return rc;
        }
    }
    return 0;
}

int llc_profile_alloc_strata(struct llc_profile_phase *ph, size_t n, char *err, size_t errlen)
{
    free_strata(ph);
    if (n == 0)
        return 0;
    ph->strata = calloc(n, sizeof(*ph->strata));
    if (!ph->strata)
        return llc_errf(err, errlen, -ENOMEM, "out of memory (%zu strata)", n);
    ph->n_strata = n;
    for (size_t g = 0; g < n; g++) {
        const int rc = llc_statmodel_hist_create(&ph->strata[g].rdhist, err, errlen);
        if (rc < 0) {
            free_strata(ph);
            return rc;
        }
    }
    return 0;
}

int llc_profile_alloc_probe(struct llc_profile *p, size_t n, char *err, size_t errlen)
{
    free_probe(&p->probe);
    if (n == 0)
        return 0;
    p->probe.per_phase = calloc(n, sizeof(*p->probe.per_phase));
    if (!p->probe.per_phase)
        return llc_errf(err, errlen, -ENOMEM, "out of memory (%zu probe entries)", n);
    p->probe.n_phases = n;
    return 0;
}

long llc_profile_phase_index(const struct llc_profile *p, int id)
{
    for (size_t i = 0; i < p->n_phases; i++)
        if (p->phases[i].id == id)
            return (long)i;
    return -1;
}

const struct llc_profile_probe_phase *llc_profile_probe_of(const struct llc_profile *p, int id)
{
    for (size_t i = 0; i < p->probe.n_phases; i++)
        if (p->probe.per_phase[i].phase == id)
            return &p->probe.per_phase[i];
    return NULL;
}

int prof_fail(const char *name, char *err, size_t errlen, int code, const char *field,
              const char *fmt, ...)
{
    char why[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    return llc_errf(err, errlen, code, "%s: %s: %s", name, field, why);
}

bool prof_one_of(const char *s, const char *const *names)
{
    for (; s && *names; names++)
        if (strcmp(s, *names) == 0)
            return true;
    return false;
}

static const char *const prof_sources[] = {"workload", "trace", "live", NULL};
static const char *const prof_kinds[] = {"preset", "host", NULL};
static const char *const prof_policies[] = {"lru",   "random", "plru", "srrip",
                                            "brrip", "drrip",  NULL};
static const char *const prof_inclusions[] = {"inclusive", "exclusive", "nine", NULL};
static const char *const prof_samplers[] = {"trace", "rt", "lackey", "qemu", "pmu", NULL};
static const char *const prof_units[] = {"instructions", "references", NULL};

#define FAIL(field, ...) prof_fail(name, err, errlen, -EINVAL, field, __VA_ARGS__)

static bool pos(double x)
{
    return x > 0 && isfinite(x);
}

static bool nonneg(double x)
{
    return x >= 0 && isfinite(x);
}

/* Equal within rel relative (or 1e-9 absolute near 0). */
static bool close_to(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-9;
}

static int check_strings(const struct llc_profile *p, const char *name, char *err, size_t errlen)
{
    const struct llc_profile_program *g = &p->program;
    if (!p->llcprobe_version || !*p->llcprobe_version)
        return FAIL("llcprobe_version", "missing");
    if (!p->created || !*p->created)
        return FAIL("created", "missing");
    if (!g->name || !*g->name)
        return FAIL("program.name", "missing or empty");
    if (!prof_one_of(g->source, prof_sources))
        return FAIL("program.source", "'%s' is not workload, trace or live",
                    g->source ? g->source : "");
    for (size_t i = 0; i < g->n_command; i++)
        if (!g->command[i])
            return FAIL("program.command", "entry %zu is not a string", i);
    if (g->sha256) {
        size_t n = strlen(g->sha256);
        if (n != 64 || strspn(g->sha256, "0123456789abcdef") != 64)
            return FAIL("program.sha256", "'%s' is not 64 lower-case hex digits", g->sha256);
    }
    if (!prof_one_of(p->sampler.kind, prof_samplers))
        return FAIL("sampler.kind", "'%s' is not trace, rt, lackey, qemu or pmu",
                    p->sampler.kind ? p->sampler.kind : "");
    if (!(p->sampler.rate > 0 && p->sampler.rate <= 1))
        return FAIL("sampler.rate", "%g is outside (0, 1]", p->sampler.rate);
    return 0;
}

static int check_machine(const struct llc_profile *p, const char *name, char *err, size_t errlen)
{
    const struct llc_profile_machine *m = &p->machine;
    const struct llc_profile_llc *l = &m->llc;
    if (!prof_one_of(m->kind, prof_kinds))
        return FAIL("machine.kind", "'%s' is not preset or host", m->kind ? m->kind : "");
    if (strcmp(m->kind, "preset") == 0 && (!m->preset || !*m->preset))
        return FAIL("machine.preset", "missing for a preset machine");
    if (l->lines == 0 || l->bytes != l->lines * 64)
        return FAIL("machine.llc.lines", "%llu lines is not bytes / 64 (%llu bytes)",
                    (unsigned long long)l->lines, (unsigned long long)l->bytes);
    if (l->ways == 0 || l->sets == 0 || l->sets * l->ways != l->lines)
        return FAIL("machine.llc.sets", "%llu sets x %u ways is not %llu lines",
                    (unsigned long long)l->sets, l->ways, (unsigned long long)l->lines);
    if (l->slices == 0 || l->sets % l->slices)
        return FAIL("machine.llc.slices", "%u slices do not divide %llu sets", l->slices,
                    (unsigned long long)l->sets);
    if (!prof_one_of(l->policy, prof_policies))
        return FAIL("machine.llc.policy", "'%s' is not lru, random, plru, srrip, brrip or drrip",
                    l->policy ? l->policy : "");
    if (!prof_one_of(l->inclusion, prof_inclusions))
        return FAIL("machine.llc.inclusion", "'%s' is not inclusive, exclusive or nine",
                    l->inclusion ? l->inclusion : "");
    const struct llc_profile_timing *t = &p->timing;
    if (!pos(t->freq_hz))
        return FAIL("timing.freq_hz", "%g is not a positive number", t->freq_hz);
    if (!pos(t->base_cpi))
        return FAIL("timing.base_cpi", "%g is not a positive number", t->base_cpi);
    if (!(t->mlp >= 1 && isfinite(t->mlp)))
        return FAIL("timing.mlp", "%g is not a number >= 1", t->mlp);
    const double lat[] = {t->lat_l1, t->lat_l2, t->lat_llc, t->lat_mem};
    static const char *const latn[] = {"timing.latency_cycles.l1", "timing.latency_cycles.l2",
                                       "timing.latency_cycles.llc", "timing.latency_cycles.mem"};
    for (size_t i = 0; i < 4; i++)
        if (!nonneg(lat[i]))
            return FAIL(latn[i], "%g is not a non-negative number", lat[i]);
    if (!nonneg(t->miss_penalty_cycles))
        return FAIL("timing.miss_penalty_cycles", "%g is not a non-negative number",
                    t->miss_penalty_cycles);
    return 0;
}

static int check_windows(const struct llc_profile *p, const char *name, char *err, size_t errlen)
{
    const struct llc_profile_windows *w = &p->windows;
    char field[64];
    if (!prof_one_of(w->unit, prof_units))
        return FAIL("windows.unit", "'%s' is not instructions or references",
                    w->unit ? w->unit : "");
    if (w->length == 0)
        return FAIL("windows.length", "0 is not a window length");
    for (size_t i = 0; i < w->count; i++) {
        if (w->phase_of[i] != -1 && llc_profile_phase_index(p, w->phase_of[i]) < 0) {
            snprintf(field, sizeof(field), "windows.phase_of[%zu]", i);
            return FAIL(field, "%d is neither -1 nor a phase id", w->phase_of[i]);
        }
        if (!nonneg(w->instructions[i]) || !nonneg(w->references[i])) {
            snprintf(field, sizeof(field), "windows.%s[%zu]",
                     nonneg(w->instructions[i]) ? "references" : "instructions", i);
            return FAIL(field, "not a non-negative number");
        }
        if (w->first_touches && !nonneg(w->first_touches[i])) {
            snprintf(field, sizeof(field), "windows.first_touches[%zu]", i);
            return FAIL(field, "not a non-negative number");
        }
    }
    return 0;
}

/* Ids first: the window checks look phases up by id. */
static int check_phase_id(const struct llc_profile *p, size_t i, const char *name, char *err,
                          size_t errlen)
{
    char field[64];
    const int id = p->phases[i].id;
    snprintf(field, sizeof(field), "phases[%zu].id", i);
    if (id < 0)
        return FAIL(field, "%d is negative", id);
    for (size_t j = 0; j < i; j++)
        if (p->phases[j].id == id)
            return FAIL(field, "%d repeats phases[%zu].id", id, j);
    return 0;
}

/* Shares in range and adding up to 1, samples matching each histogram. */
static int check_strata(const struct llc_profile *p, size_t i, const char *name, char *err,
                        size_t errlen)
{
    const struct llc_profile_phase *ph = &p->phases[i];
    char field[96];
    if (ph->n_strata == 0)
        return 0;
    if (ph->n_strata > LLC_PROFILE_MAX_STRATA || !ph->strata) {
        snprintf(field, sizeof(field), "phases[%zu].strata", i);
        return FAIL(field, "%zu entries (1..%d)", ph->n_strata, LLC_PROFILE_MAX_STRATA);
    }
    double sets = 0, refs = 0;
    for (size_t g = 0; g < ph->n_strata; g++) {
        const struct llc_profile_stratum *s = &ph->strata[g];
#define SFIELD(f) (snprintf(field, sizeof(field), "phases[%zu].strata[%zu].%s", i, g, f), field)
        if (!(s->sets > 0 && s->sets <= 1))
            return FAIL(SFIELD("sets"), "%g is outside (0, 1]", s->sets);
        if (!(s->refs >= 0 && s->refs <= 1))
            return FAIL(SFIELD("refs"), "%g is outside [0, 1]", s->refs);
        if (!nonneg(s->rate_lo) || !nonneg(s->rate_hi) || s->rate_hi < s->rate_lo)
            return FAIL(SFIELD("rate"), "[%g, %g] is not a range of non-negative numbers",
                        s->rate_lo, s->rate_hi);
        if (!s->rdhist)
            return FAIL(SFIELD("rdhist"), "missing");
        const double total = llc_statmodel_hist_total(s->rdhist);
        if (!nonneg(s->samples) || !close_to(s->samples, total, 1e-9))
            return FAIL(SFIELD("samples"), "%g is not the histogram's sample count %g", s->samples,
                        total);
        if (s->refs > 0 && !(s->samples > 0))
            return FAIL(SFIELD("samples"), "0, but the stratum has references");
        if (s->rdhist_own && !close_to(llc_statmodel_hist_total(s->rdhist_own), total, 1e-9))
            return FAIL(SFIELD("rdhist_own"), "%g samples, but rdhist has %g",
                        llc_statmodel_hist_total(s->rdhist_own), total);
#undef SFIELD
        sets += s->sets;
        refs += s->refs;
    }
    snprintf(field, sizeof(field), "phases[%zu].strata", i);
    if (!close_to(sets, 1, 1e-6) || !close_to(refs, 1, 1e-6))
        return FAIL(field, "set shares add up to %.9g, reference shares to %.9g (not 1)", sets,
                    refs);
    return 0;
}

static int check_phase(const struct llc_profile *p, size_t i, const char *name, char *err,
                       size_t errlen)
{
    const struct llc_profile_phase *ph = &p->phases[i];
    char field[96];
#define PFIELD(f) (snprintf(field, sizeof(field), "phases[%zu].%s", i, f), field)
    uint64_t nwin = 0;
    for (size_t k = 0; k < p->windows.count; k++)
        nwin += p->windows.phase_of[k] == ph->id;
    if (nwin != ph->windows)
        return FAIL(PFIELD("windows"), "%llu, but windows.phase_of names it %llu times",
                    (unsigned long long)ph->windows, (unsigned long long)nwin);
    if (!nonneg(ph->instructions))
        return FAIL(PFIELD("instructions"), "%g is not a non-negative number", ph->instructions);
    if (!nonneg(ph->references))
        return FAIL(PFIELD("references"), "%g is not a non-negative number", ph->references);
    if (!nonneg(ph->refs_per_instruction) ||
        (ph->instructions > 0 &&
         !close_to(ph->refs_per_instruction, ph->references / ph->instructions, 1e-3)))
        return FAIL(PFIELD("refs_per_instruction"), "%g is not references / instructions (%g)",
                    ph->refs_per_instruction,
                    ph->instructions > 0 ? ph->references / ph->instructions : NAN);
    if (!ph->rdhist)
        return FAIL(PFIELD("rdhist"), "missing");
    const double total = llc_statmodel_hist_total(ph->rdhist);
    if (!nonneg(ph->samples) || !close_to(ph->samples, total, 1e-9))
        return FAIL(PFIELD("samples"), "%g is not the histogram's sample count %g", ph->samples,
                    total);
    if (ph->rdhist_own && !close_to(llc_statmodel_hist_total(ph->rdhist_own), total, 1e-9))
        return FAIL(PFIELD("rdhist_own"), "%g samples, but rdhist has %g",
                    llc_statmodel_hist_total(ph->rdhist_own), total);
    if (!pos(ph->solo.cpi))
        return FAIL(PFIELD("solo.cpi"), "%g is not a positive number", ph->solo.cpi);
    const double mr = ph->solo.llc_miss_ratio, apr = ph->solo.llc_accesses_per_reference;
    if (!isnan(mr) && !(mr >= 0 && mr <= 1))
        return FAIL(PFIELD("solo.llc_miss_ratio"), "%g is outside [0, 1] (null if unknown)", mr);
    if (!isnan(apr) && !(apr >= 0 && apr <= 1))
        return FAIL(PFIELD("solo.llc_accesses_per_reference"),
                    "%g is outside [0, 1] (null if unknown)", apr);
    const double occ = ph->solo.occupancy_lines;
    if (!isnan(occ) && !(occ >= 0 && occ <= (double)p->machine.llc.lines))
        return FAIL(PFIELD("solo.occupancy_lines"), "%g is outside [0, %llu] (null if unknown)",
                    occ, (unsigned long long)p->machine.llc.lines);
    if (!pos(ph->cpi0) || ph->cpi0 > ph->solo.cpi * (1 + 1e-9))
        return FAIL(PFIELD("cpi0"), "%g is not a positive number <= solo.cpi (%g)", ph->cpi0,
                    ph->solo.cpi);
    if (!isnan(ph->set_dispersion) && !nonneg(ph->set_dispersion))
        return FAIL(PFIELD("set_dispersion"), "%g is not a non-negative number (null if unknown)",
                    ph->set_dispersion);
#undef PFIELD
    const int rc = prof_spans_check(p, i, name, err, errlen);
    return rc < 0 ? rc : check_strata(p, i, name, err, errlen);
}

static int check_probe_phase(const struct llc_profile *p, size_t i, const char *name, char *err,
                             size_t errlen)
{
    const struct llc_profile_probe_phase *e = &p->probe.per_phase[i];
    char field[96];
#define QFIELD(f) (snprintf(field, sizeof(field), "probe.per_phase[%zu].%s", i, f), field)
    if (llc_profile_phase_index(p, e->phase) < 0)
        return FAIL(QFIELD("phase"), "%d is not a phase id", e->phase);
    for (size_t j = 0; j < i; j++)
        if (p->probe.per_phase[j].phase == e->phase)
            return FAIL(QFIELD("phase"), "%d repeats probe.per_phase[%zu].phase", e->phase, j);
    if (e->n_rates < 1 || e->n_rates > LLC_PROFILE_MAX_RATES)
        return FAIL(QFIELD("rates"), "%zu entries, expected 1..%d", e->n_rates,
                    LLC_PROFILE_MAX_RATES);
    for (size_t k = 0; k < e->n_rates; k++) {
        if (!pos(e->rates[k]))
            return FAIL(QFIELD("rates"), "entry %zu is not a positive number", k);
        if (!pos(e->tau_s[k]))
            return FAIL(QFIELD("tau_s"), "entry %zu is not a positive number", k);
        if (!nonneg(e->phi_hat[k]))
            return FAIL(QFIELD("phi_hat"), "entry %zu is not a non-negative number", k);
        if (!(e->q_max[k] >= 0 && e->q_max[k] <= 1))
            return FAIL(QFIELD("q_max"), "entry %zu is outside [0, 1]", k);
    }
    if (!nonneg(e->cv))
        return FAIL(QFIELD("cv"), "%g is not a non-negative number", e->cv);
    for (size_t g = 0; g < LLC_PROFILE_KEYS; g++) {
        if (!isfinite(e->keys[g]))
            return FAIL(QFIELD("keys"), "entry %zu is not a number", g);
        for (size_t k = 0; k < e->n_sets[g]; k++)
            if (e->sets[g][k] >= p->machine.llc.sets)
                return FAIL(QFIELD("sets"), "[%zu][%zu] = %u is not a set (< %llu)", g, k,
                            e->sets[g][k], (unsigned long long)p->machine.llc.sets);
    }
#undef QFIELD
    return 0;
}

int llc_profile_check(const struct llc_profile *p, const char *name, char *err, size_t errlen)
{
    int rc = check_strings(p, name, err, errlen);
    if (rc == 0)
        rc = check_machine(p, name, err, errlen);
    if (rc == 0 && p->n_phases == 0)
        rc = FAIL("phases", "no phase");
    for (size_t i = 0; rc == 0 && i < p->n_phases; i++)
        rc = check_phase_id(p, i, name, err, errlen);
    if (rc == 0)
        rc = check_windows(p, name, err, errlen);
    for (size_t i = 0; rc == 0 && i < p->n_phases; i++)
        rc = check_phase(p, i, name, err, errlen);
    if (rc == 0 && !p->probe.ok && p->probe.n_phases)
        rc = FAIL("probe.per_phase", "readings although status is missing");
    if (rc == 0 && !p->probe.ok && (!p->probe.reason || !*p->probe.reason))
        rc = FAIL("probe.reason", "missing (status is missing)");
    for (size_t i = 0; rc == 0 && i < p->probe.n_phases; i++)
        rc = check_probe_phase(p, i, name, err, errlen);
    return rc;
}

int llc_profile_check_predictable(const struct llc_profile *p, const char *name, char *err,
                                  size_t errlen)
{
    char field[64];
    for (size_t i = 0; i < p->n_phases; i++) {
        const struct llc_profile_phase *ph = &p->phases[i];
        if (!(ph->references > 0)) {
            snprintf(field, sizeof(field), "phases[%zu].references", i);
            return prof_fail(name, err, errlen, -ENODATA, field, "phase %d has no references",
                             ph->id);
        }
        if (!(ph->samples > 0)) {
            snprintf(field, sizeof(field), "phases[%zu].samples", i);
            return prof_fail(name, err, errlen, -ENODATA, field, "phase %d has no reuse samples",
                             ph->id);
        }
        if (!(ph->instructions > 0)) {
            snprintf(field, sizeof(field), "phases[%zu].instructions", i);
            return prof_fail(name, err, errlen, -ENODATA, field, "phase %d has no instructions",
                             ph->id);
        }
    }
    return 0;
}
