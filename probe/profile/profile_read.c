/* Reader of llcprobe-profile files: JSON types and ranges here, field by
 * field; the semantic rules (consistency between fields) in
 * llc_profile_check, so the writer applies the same ones. */
#include "llcprobe/profile.h"

#include "llcprobe/common.h"
#include "mapfile/jget.h"
#include "profile/profile_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int oom(const struct jget *g)
{
    return llc_errf(g->err, g->errlen, -ENOMEM, "%s: out of memory", g->path);
}

/* obj[key]: a string (copied) or, when nullable, null (NULL). */
static int get_str(const struct jget *g, const json_t *obj, const char *key, const char *field,
                   bool nullable, char **out)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v)
        return jget_fail(g, -EINVAL, field, "missing");
    if (nullable && json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return jget_fail(g, -EINVAL, field, nullable ? "not a string or null" : "not a string");
    return (*out = strdup(json_string_value(v))) ? 0 : oom(g);
}

static int get_num(const struct jget *g, const json_t *obj, const char *key, const char *field,
                   bool nullable, double *out)
{
    int rc = jget_real(g, obj, key, field, nullable, out);
    if (rc == 0 && !isnan(*out) && !isfinite(*out))
        rc = jget_fail(g, -EINVAL, field, "not a finite number");
    return rc;
}

static int get_array(const struct jget *g, const json_t *obj, const char *key, const char *field,
                     json_t **out)
{
    *out = json_object_get(obj, key);
    if (!*out)
        return jget_fail(g, -EINVAL, field, "missing");
    if (!json_is_array(*out))
        return jget_fail(g, -EINVAL, field, "not an array");
    return 0;
}

static int read_program(const struct jget *g, const json_t *doc, struct llc_profile_program *pg)
{
    json_t *o, *cmd = NULL;
    int rc = jget_object(g, doc, "program", "program", &o);
    if (rc == 0)
        rc = get_str(g, o, "name", "program.name", false, &pg->name);
    if (rc == 0)
        rc = get_str(g, o, "source", "program.source", false, &pg->source);
    if (rc == 0)
        rc = get_array(g, o, "command", "program.command", &cmd);
    if (rc < 0)
        return rc;
    const size_t n = json_array_size(cmd);
    if (n && !(pg->command = calloc(n, sizeof(char *))))
        return oom(g);
    for (size_t i = 0; i < n; i++) {
        const json_t *a = json_array_get(cmd, i);
        if (!json_is_string(a))
            return jget_fail(g, -EINVAL, "program.command", "entry %zu is not a string", i);
        if (!(pg->command[i] = strdup(json_string_value(a))))
            return oom(g);
        pg->n_command = i + 1;
    }
    rc = get_str(g, o, "binary", "program.binary", true, &pg->binary);
    if (rc == 0)
        rc = get_str(g, o, "sha256", "program.sha256", true, &pg->sha256);
    if (rc == 0)
        rc = get_str(g, o, "workload", "program.workload", true, &pg->workload);
    if (rc == 0)
        rc = get_str(g, o, "trace", "program.trace", true, &pg->trace);
    return rc;
}

static int read_machine(const struct jget *g, const json_t *doc, struct llc_profile_machine *m)
{
    json_t *o, *llc;
    uint64_t v;
    int rc = jget_object(g, doc, "machine", "machine", &o);
    if (rc == 0)
        rc = get_str(g, o, "kind", "machine.kind", false, &m->kind);
    if (rc == 0)
        rc = get_str(g, o, "preset", "machine.preset", true, &m->preset);
    if (rc == 0)
        rc = jget_object(g, o, "llc", "machine.llc", &llc);
    if (rc == 0)
        rc = jget_uint(g, llc, "bytes", "machine.llc.bytes", 64, 1ull << 50, &m->llc.bytes);
    if (rc == 0)
        rc = jget_uint(g, llc, "lines", "machine.llc.lines", 1, 1ull << 44, &m->llc.lines);
    if (rc == 0)
        rc = jget_uint(g, llc, "sets", "machine.llc.sets", 1, 1ull << 32, &m->llc.sets);
    if (rc == 0 && (rc = jget_uint(g, llc, "ways", "machine.llc.ways", 1, 1024, &v)) == 0)
        m->llc.ways = (unsigned)v;
    if (rc == 0 && (rc = jget_uint(g, llc, "slices", "machine.llc.slices", 1, 1024, &v)) == 0)
        m->llc.slices = (unsigned)v;
    if (rc == 0)
        rc = get_str(g, llc, "policy", "machine.llc.policy", false, &m->llc.policy);
    if (rc == 0)
        rc = get_str(g, llc, "inclusion", "machine.llc.inclusion", false, &m->llc.inclusion);
    if (rc < 0)
        return rc;
    const json_t *info = json_object_get(o, "info");
    if (!info)
        return jget_fail(g, -EINVAL, "machine.info", "missing");
    if (!json_is_object(info))
        return jget_fail(g, -EINVAL, "machine.info", "not an object");
    if (json_object_size(info) && !(m->info_json = json_dumps(info, JSON_COMPACT | JSON_SORT_KEYS)))
        return oom(g);
    return 0;
}

static int read_timing(const struct jget *g, const json_t *doc, struct llc_profile *p)
{
    json_t *o, *lat;
    struct llc_profile_timing *t = &p->timing;
    json_t *s;
    int rc = jget_object(g, doc, "timing", "timing", &o);
    if (rc == 0)
        rc = get_num(g, o, "freq_hz", "timing.freq_hz", false, &t->freq_hz);
    if (rc == 0)
        rc = get_num(g, o, "base_cpi", "timing.base_cpi", false, &t->base_cpi);
    if (rc == 0)
        rc = get_num(g, o, "mlp", "timing.mlp", false, &t->mlp);
    if (rc == 0)
        rc = jget_object(g, o, "latency_cycles", "timing.latency_cycles", &lat);
    if (rc == 0)
        rc = get_num(g, lat, "l1", "timing.latency_cycles.l1", false, &t->lat_l1);
    if (rc == 0)
        rc = get_num(g, lat, "l2", "timing.latency_cycles.l2", false, &t->lat_l2);
    if (rc == 0)
        rc = get_num(g, lat, "llc", "timing.latency_cycles.llc", false, &t->lat_llc);
    if (rc == 0)
        rc = get_num(g, lat, "mem", "timing.latency_cycles.mem", false, &t->lat_mem);
    if (rc == 0)
        rc = get_num(g, o, "miss_penalty_cycles", "timing.miss_penalty_cycles", false,
                     &t->miss_penalty_cycles);
    if (rc == 0)
        rc = jget_object(g, doc, "sampler", "sampler", &s);
    if (rc == 0)
        rc = get_str(g, s, "kind", "sampler.kind", false, &p->sampler.kind);
    if (rc == 0)
        rc = get_num(g, s, "rate", "sampler.rate", false, &p->sampler.rate);
    if (rc == 0)
        rc = jget_uint(g, s, "seed", "sampler.seed", 0, UINT64_MAX, &p->sampler.seed);
    return rc;
}

static int read_windows(const struct jget *g, const json_t *doc, struct llc_profile *p)
{
    json_t *o, *ph, *ins, *refs;
    uint64_t count;
    char *unit = NULL;
    int rc = jget_object(g, doc, "windows", "windows", &o);
    if (rc == 0)
        rc = get_str(g, o, "unit", "windows.unit", false, &unit);
    p->windows.unit = unit;
    if (rc == 0)
        rc = jget_uint(g, o, "length", "windows.length", 1, UINT64_MAX, &p->windows.length);
    if (rc == 0)
        rc = jget_uint(g, o, "count", "windows.count", 0, 1ull << 32, &count);
    if (rc == 0)
        rc = get_array(g, o, "phase_of", "windows.phase_of", &ph);
    if (rc == 0)
        rc = get_array(g, o, "instructions", "windows.instructions", &ins);
    if (rc == 0)
        rc = get_array(g, o, "references", "windows.references", &refs);
    if (rc == 0)
        rc = llc_profile_alloc_windows(p, (size_t)count, g->err, g->errlen);
    if (rc < 0)
        return rc;
    if (json_array_size(ph) != count)
        return jget_fail(g, -EINVAL, "windows.phase_of",
                         "%zu entries, expected windows.count = %llu", json_array_size(ph),
                         (unsigned long long)count);
    for (size_t i = 0; i < count; i++) {
        const json_t *v = json_array_get(ph, i);
        if (!json_is_integer(v) || json_integer_value(v) < -1 || json_integer_value(v) > INT32_MAX)
            return jget_fail(g, -EINVAL, "windows.phase_of", "entry %zu is not a phase id or -1",
                             i);
        p->windows.phase_of[i] = (int)json_integer_value(v);
    }
    rc = jget_reals(g, ins, "windows.instructions", (size_t)count, p->windows.instructions);
    if (rc == 0)
        rc = jget_reals(g, refs, "windows.references", (size_t)count, p->windows.references);
    const json_t *ft = json_object_get(o, "first_touches"); /* optional */
    if (rc == 0 && ft && !json_is_array(ft))
        rc = jget_fail(g, -EINVAL, "windows.first_touches", "not an array");
    if (rc == 0 && ft && json_array_size(ft) != count)
        rc = jget_fail(g, -EINVAL, "windows.first_touches",
                       "%zu entries, expected windows.count = %llu", json_array_size(ft),
                       (unsigned long long)count);
    if (rc == 0 && ft && (rc = llc_profile_alloc_first_touches(p, g->err, g->errlen)) == 0)
        rc = jget_reals(g, ft, "windows.first_touches", (size_t)count, p->windows.first_touches);
    return rc;
}

/* A histogram's text form at key, parsed into h. */
static int read_hist(const struct jget *g, const json_t *o, const char *key, const char *field,
                     struct llc_statmodel_hist *h)
{
    char e2[LLC_ERRLEN];
    const char *text;
    int rc = jget_string(g, o, key, field, &text);
    if (rc == 0 && llc_statmodel_hist_parse(text, h, e2, sizeof(e2)) < 0)
        rc = jget_fail(g, -EINVAL, field, "%s", e2);
    return rc;
}

/* An optional rdhist_own: created (freed with the profile) and read. */
static int read_own(const struct jget *g, const json_t *o, const char *field,
                    struct llc_statmodel_hist **h)
{
    const int rc = llc_statmodel_hist_create(h, g->err, g->errlen);
    return rc < 0 ? rc : read_hist(g, o, "rdhist_own", field, *h);
}

/* phases[i].strata (optional): [{sets, refs, rate: [lo, hi], samples, rdhist}]. */
static int read_strata(const struct jget *g, const json_t *o, size_t i,
                       struct llc_profile_phase *ph)
{
    char f[128];
    json_t *arr, *rate;
    snprintf(f, sizeof(f), "phases[%zu].strata", i);
    int rc = get_array(g, o, "strata", f, &arr);
    if (rc == 0 && (json_array_size(arr) == 0 || json_array_size(arr) > LLC_PROFILE_MAX_STRATA))
        rc = jget_fail(g, -EINVAL, f, "%zu entries (1..%d)", json_array_size(arr),
                       LLC_PROFILE_MAX_STRATA);
    if (rc == 0)
        rc = llc_profile_alloc_strata(ph, json_array_size(arr), g->err, g->errlen);
    for (size_t k = 0; rc == 0 && k < ph->n_strata; k++) {
        const json_t *s = json_array_get(arr, k);
        struct llc_profile_stratum *st = &ph->strata[k];
#define F(name) (snprintf(f, sizeof(f), "phases[%zu].strata[%zu].%s", i, k, name), f)
        if (!json_is_object(s))
            return jget_fail(g, -EINVAL,
                             (snprintf(f, sizeof(f), "phases[%zu].strata[%zu]", i, k), f),
                             "not an object");
        rc = get_num(g, s, "sets", F("sets"), false, &st->sets);
        if (rc == 0)
            rc = get_num(g, s, "refs", F("refs"), false, &st->refs);
        if (rc == 0)
            rc = get_array(g, s, "rate", F("rate"), &rate);
        if (rc == 0 && json_array_size(rate) != 2)
            rc = jget_fail(g, -EINVAL, F("rate"), "%zu entries, expected [lowest, highest]",
                           json_array_size(rate));
        double lohi[2];
        if (rc == 0)
            rc = jget_reals(g, rate, F("rate"), 2, lohi);
        st->rate_lo = lohi[0];
        st->rate_hi = lohi[1];
        if (rc == 0)
            rc = get_num(g, s, "samples", F("samples"), false, &st->samples);
        if (rc == 0)
            rc = read_hist(g, s, "rdhist", F("rdhist"), st->rdhist);
        if (rc == 0 && json_object_get(s, "rdhist_own"))
            rc = read_own(g, s, F("rdhist_own"), &st->rdhist_own);
#undef F
    }
    return rc;
}

static int read_phase(const struct jget *g, const json_t *o, size_t i, struct llc_profile_phase *ph)
{
    char f[96];
    uint64_t v;
    json_t *solo;
#define F(name) (snprintf(f, sizeof(f), "phases[%zu].%s", i, name), f)
    if (!json_is_object(o))
        return jget_fail(g, -EINVAL, (snprintf(f, sizeof(f), "phases[%zu]", i), f),
                         "not an object");
    int rc = jget_uint(g, o, "id", F("id"), 0, INT32_MAX, &v);
    if (rc == 0) {
        ph->id = (int)v;
        rc = jget_uint(g, o, "windows", F("windows"), 0, UINT64_MAX, &ph->windows);
    }
    if (rc == 0)
        rc = get_num(g, o, "instructions", F("instructions"), false, &ph->instructions);
    if (rc == 0)
        rc = get_num(g, o, "references", F("references"), false, &ph->references);
    if (rc == 0)
        rc = get_num(g, o, "refs_per_instruction", F("refs_per_instruction"), false,
                     &ph->refs_per_instruction);
    if (rc == 0)
        rc = get_num(g, o, "samples", F("samples"), false, &ph->samples);
    if (rc == 0)
        rc = read_hist(g, o, "rdhist", F("rdhist"), ph->rdhist);
    if (rc == 0 && json_object_get(o, "rdhist_own"))
        rc = read_own(g, o, F("rdhist_own"), &ph->rdhist_own);
    if (rc == 0)
        rc = jget_object(g, o, "solo", F("solo"), &solo);
    if (rc == 0)
        rc = get_num(g, solo, "cpi", F("solo.cpi"), false, &ph->solo.cpi);
    if (rc == 0)
        rc = get_num(g, solo, "llc_miss_ratio", F("solo.llc_miss_ratio"), true,
                     &ph->solo.llc_miss_ratio);
    if (rc == 0)
        rc = get_num(g, solo, "llc_accesses_per_reference", F("solo.llc_accesses_per_reference"),
                     true, &ph->solo.llc_accesses_per_reference);
    if (rc == 0)
        rc = get_num(g, solo, "occupancy_lines", F("solo.occupancy_lines"), true,
                     &ph->solo.occupancy_lines);
    if (rc == 0)
        rc = get_num(g, o, "cpi0", F("cpi0"), false, &ph->cpi0);
    if (rc == 0 && json_object_get(o, "set_dispersion"))
        rc = get_num(g, o, "set_dispersion", F("set_dispersion"), true, &ph->set_dispersion);
    if (rc == 0 && json_object_get(o, "strata"))
        rc = read_strata(g, o, i, ph);
#undef F
    return rc;
}

/* phases[i].cross_spans (optional): {distances, samples, share, refs}. */
static int read_spans(const struct jget *g, const json_t *o, size_t i, struct llc_profile *p)
{
    char f[128];
    struct llc_profile_phase *ph = &p->phases[i];
    const size_t stride = p->n_phases + 1;
#define F(name) (snprintf(f, sizeof(f), "phases[%zu].cross_spans%s", i, name), f)
    json_t *s = json_object_get(o, "cross_spans"), *d, *n, *sh, *refs;
    if (!json_is_object(s))
        return jget_fail(g, -EINVAL, F(""), "not an object");
    int rc = get_array(g, s, "distances", F(".distances"), &d);
    if (rc == 0 && (json_array_size(d) == 0 || json_array_size(d) > LLC_PROFILE_SPAN_BINS))
        rc = jget_fail(g, -EINVAL, F(".distances"), "%zu entries (1..%d)", json_array_size(d),
                       LLC_PROFILE_SPAN_BINS);
    if (rc == 0)
        rc = llc_profile_alloc_spans(p, ph, json_array_size(d), g->err, g->errlen);
    const size_t nb = ph->spans.n;
    if (rc == 0)
        rc = jget_reals(g, d, F(".distances"), nb, ph->spans.distance);
    if (rc == 0 && (rc = get_array(g, s, "samples", F(".samples"), &n)) == 0)
        rc = jget_reals(g, n, F(".samples"), nb, ph->spans.samples);
    if (rc == 0 && (rc = get_array(g, s, "share", F(".share"), &sh)) == 0)
        rc = jget_reals(g, sh, F(".share"), nb, ph->spans.share);
    if (rc == 0 && (rc = get_array(g, s, "refs", F(".refs"), &refs)) == 0 &&
        json_array_size(refs) != nb)
        rc = jget_fail(g, -EINVAL, F(".refs"), "%zu entries, expected %zu", json_array_size(refs),
                       nb);
    for (size_t k = 0; rc == 0 && k < nb; k++) {
        char row[64];
        snprintf(row, sizeof(row), ".refs[%zu]", k);
        rc = jget_reals(g, json_array_get(refs, k), F(row), stride, &ph->spans.refs[k * stride]);
    }
#undef F
    return rc;
}

static int read_phases(const struct jget *g, const json_t *doc, struct llc_profile *p)
{
    json_t *arr;
    int rc = get_array(g, doc, "phases", "phases", &arr);
    if (rc == 0)
        rc = llc_profile_alloc_phases(p, json_array_size(arr), g->err, g->errlen);
    for (size_t i = 0; rc == 0 && i < p->n_phases; i++) {
        const json_t *o = json_array_get(arr, i);
        rc = read_phase(g, o, i, &p->phases[i]);
        if (rc == 0 && json_object_get(o, "cross_spans"))
            rc = read_spans(g, o, i, p);
    }
    return rc;
}

/* An array of 1..max finite numbers (their count in *n). */
static int get_reals_upto(const struct jget *g, const json_t *o, const char *key, const char *field,
                          size_t want, double *out)
{
    json_t *arr;
    int rc = get_array(g, o, key, field, &arr);
    for (size_t k = 0; rc == 0 && k < want && k < json_array_size(arr); k++) {
        const json_t *v = json_array_get(arr, k);
        if (!json_is_number(v) || !isfinite(json_number_value(v)))
            return jget_fail(g, -EINVAL, field, "entry %zu is not a number", k);
        out[k] = json_number_value(v);
    }
    if (rc == 0 && json_array_size(arr) != want)
        rc = jget_fail(g, -EINVAL, field, "%zu entries, expected %zu", json_array_size(arr), want);
    return rc;
}

static int read_probe_phase(const struct jget *g, const json_t *o, size_t i,
                            struct llc_profile_probe_phase *e)
{
    char f[96];
    uint64_t v;
    json_t *rates = NULL, *sets = NULL;
#define F(name) (snprintf(f, sizeof(f), "probe.per_phase[%zu].%s", i, name), f)
    if (!json_is_object(o))
        return jget_fail(g, -EINVAL, (snprintf(f, sizeof(f), "probe.per_phase[%zu]", i), f),
                         "not an object");
    int rc = jget_uint(g, o, "phase", F("phase"), 0, INT32_MAX, &v);
    if (rc == 0) {
        e->phase = (int)v;
        rc = get_array(g, o, "rates", F("rates"), &rates);
    }
    if (rc < 0)
        return rc;
    e->n_rates = json_array_size(rates);
    if (e->n_rates < 1 || e->n_rates > LLC_PROFILE_MAX_RATES)
        return jget_fail(g, -EINVAL, F("rates"), "%zu entries, expected 1..%d", e->n_rates,
                         LLC_PROFILE_MAX_RATES);
    rc = get_reals_upto(g, o, "rates", F("rates"), e->n_rates, e->rates);
    if (rc == 0)
        rc = get_reals_upto(g, o, "tau_s", F("tau_s"), e->n_rates, e->tau_s);
    if (rc == 0)
        rc = get_reals_upto(g, o, "phi_hat", F("phi_hat"), e->n_rates, e->phi_hat);
    if (rc == 0)
        rc = get_reals_upto(g, o, "q_max", F("q_max"), e->n_rates, e->q_max);
    if (rc == 0)
        rc = get_num(g, o, "cv", F("cv"), false, &e->cv);
    if (rc == 0)
        rc = get_reals_upto(g, o, "keys", F("keys"), LLC_PROFILE_KEYS, e->keys);
    if (rc == 0)
        rc = get_array(g, o, "sets", F("sets"), &sets);
    if (rc == 0 && json_array_size(sets) != LLC_PROFILE_KEYS)
        rc = jget_fail(g, -EINVAL, F("sets"), "%zu strata, expected %d", json_array_size(sets),
                       LLC_PROFILE_KEYS);
    for (size_t s = 0; rc == 0 && s < LLC_PROFILE_KEYS; s++) {
        const json_t *st = json_array_get(sets, s);
        if (!json_is_array(st))
            return jget_fail(g, -EINVAL, F("sets"), "stratum %zu is not an array", s);
        const size_t n = json_array_size(st);
        if (n && !(e->sets[s] = malloc(n * sizeof(uint32_t))))
            return oom(g);
        for (size_t k = 0; k < n; k++) {
            const json_t *x = json_array_get(st, k);
            if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                json_integer_value(x) > UINT32_MAX)
                return jget_fail(g, -EINVAL, F("sets"), "[%zu][%zu] is not a set index", s, k);
            e->sets[s][k] = (uint32_t)json_integer_value(x);
            e->n_sets[s] = k + 1;
        }
    }
    /* note: optional (files before it had none) */
    if (rc == 0 && json_object_get(o, "note"))
        rc = get_str(g, o, "note", F("note"), true, &e->note);
#undef F
    return rc;
}

static int read_probe(const struct jget *g, const json_t *doc, struct llc_profile *p)
{
    json_t *o, *arr;
    const char *status;
    int rc = jget_object(g, doc, "probe", "probe", &o);
    if (rc == 0)
        rc = jget_string(g, o, "status", "probe.status", &status);
    if (rc < 0)
        return rc;
    if (strcmp(status, "ok") && strcmp(status, "missing"))
        return jget_fail(g, -EINVAL, "probe.status", "'%s' is not ok or missing", status);
    p->probe.ok = strcmp(status, "ok") == 0;
    if (json_object_get(o, "reason") &&
        (rc = get_str(g, o, "reason", "probe.reason", true, &p->probe.reason)) < 0)
        return rc;
    rc = get_array(g, o, "per_phase", "probe.per_phase", &arr);
    if (rc == 0)
        rc = llc_profile_alloc_probe(p, json_array_size(arr), g->err, g->errlen);
    for (size_t i = 0; rc == 0 && i < p->probe.n_phases; i++)
        rc = read_probe_phase(g, json_array_get(arr, i), i, &p->probe.per_phase[i]);
    return rc;
}

int llc_profile_read(const char *path, struct llc_profile *p, char *err, size_t errlen)
{
    struct jget g = {.path = path, .err = err, .errlen = errlen};
    json_t *doc = NULL;
    llc_profile_init(p);
    int rc = jget_load(&g, LLC_PROFILE_FORMAT, LLC_PROFILE_VERSION, &doc);
    if (rc == 0)
        rc = get_str(&g, doc, "llcprobe_version", "llcprobe_version", false, &p->llcprobe_version);
    if (rc == 0)
        rc = get_str(&g, doc, "created", "created", false, &p->created);
    if (rc == 0)
        rc = read_program(&g, doc, &p->program);
    if (rc == 0)
        rc = read_machine(&g, doc, &p->machine);
    if (rc == 0)
        rc = read_timing(&g, doc, p);
    if (rc == 0)
        rc = read_phases(&g, doc, p);
    if (rc == 0)
        rc = read_windows(&g, doc, p);
    if (rc == 0)
        rc = read_probe(&g, doc, p);
    if (rc == 0)
        rc = llc_profile_check(p, path, err, errlen);
    json_decref(doc);
    if (rc < 0)
        llc_profile_free(p);
    return rc;
}
