/* Writer of llcprobe-profile files: JSON and the window series as CSV, both
 * atomically, after the reader's checks. */
#include "llcprobe/profile.h"

#include "llcprobe/common.h"
#include "util/atomic_file.h"
#include "util/json.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Whole numbers as JSON integers (the file reads like the format's
 * example), NaN as null, the rest as reals. */
static json_t *jnum(double x)
{
    if (isnan(x))
        return json_null();
    if (x == floor(x) && fabs(x) < 9007199254740992.0)
        return json_integer((json_int_t)x);
    return json_real(x);
}

static json_t *jstr(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* json_object_set_new that remembers a failure (allocation) in *bad. */
static void put(json_t *o, const char *key, json_t *v, bool *bad)
{
    if (!v || !o || json_object_set_new(o, key, v) < 0)
        *bad = true;
}

static void push(json_t *a, json_t *v, bool *bad)
{
    if (!v || !a || json_array_append_new(a, v) < 0)
        *bad = true;
}

static json_t *reals(const double *x, size_t n, bool *bad)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        push(a, jnum(x[i]), bad);
    return a;
}

static json_t *program_json(const struct llc_profile_program *g, bool *bad)
{
    json_t *o = json_object(), *cmd = json_array();
    for (size_t i = 0; i < g->n_command; i++)
        push(cmd, json_string(g->command[i]), bad);
    put(o, "name", jstr(g->name), bad);
    put(o, "source", jstr(g->source), bad);
    put(o, "command", cmd, bad);
    put(o, "binary", jstr(g->binary), bad);
    put(o, "sha256", jstr(g->sha256), bad);
    put(o, "workload", jstr(g->workload), bad);
    put(o, "trace", jstr(g->trace), bad);
    return o;
}

static json_t *machine_json(const struct llc_profile_machine *m, bool *bad)
{
    json_t *o = json_object(), *llc = json_object();
    json_t *info = m->info_json ? json_loads(m->info_json, 0, NULL) : json_object();
    if (info && !json_is_object(info)) {
        json_decref(info);
        info = NULL;
    }
    put(llc, "bytes", json_integer((json_int_t)m->llc.bytes), bad);
    put(llc, "lines", json_integer((json_int_t)m->llc.lines), bad);
    put(llc, "sets", json_integer((json_int_t)m->llc.sets), bad);
    put(llc, "ways", json_integer(m->llc.ways), bad);
    put(llc, "slices", json_integer(m->llc.slices), bad);
    put(llc, "policy", jstr(m->llc.policy), bad);
    put(llc, "inclusion", jstr(m->llc.inclusion), bad);
    put(o, "kind", jstr(m->kind), bad);
    put(o, "preset", jstr(m->preset), bad);
    put(o, "llc", llc, bad);
    put(o, "info", info, bad);
    return o;
}

static json_t *timing_json(const struct llc_profile_timing *t, bool *bad)
{
    json_t *o = json_object(), *lat = json_object();
    put(lat, "l1", jnum(t->lat_l1), bad);
    put(lat, "l2", jnum(t->lat_l2), bad);
    put(lat, "llc", jnum(t->lat_llc), bad);
    put(lat, "mem", jnum(t->lat_mem), bad);
    put(o, "freq_hz", jnum(t->freq_hz), bad);
    put(o, "base_cpi", jnum(t->base_cpi), bad);
    put(o, "mlp", jnum(t->mlp), bad);
    put(o, "latency_cycles", lat, bad);
    put(o, "miss_penalty_cycles", jnum(t->miss_penalty_cycles), bad);
    return o;
}

static json_t *windows_json(const struct llc_profile_windows *w, bool *bad)
{
    json_t *o = json_object(), *ph = json_array();
    for (size_t i = 0; i < w->count; i++)
        push(ph, json_integer(w->phase_of[i]), bad);
    put(o, "unit", jstr(w->unit), bad);
    put(o, "length", json_integer((json_int_t)w->length), bad);
    put(o, "count", json_integer((json_int_t)w->count), bad);
    put(o, "phase_of", ph, bad);
    put(o, "instructions", reals(w->instructions, w->count, bad), bad);
    put(o, "references", reals(w->references, w->count, bad), bad);
    if (w->first_touches)
        put(o, "first_touches", reals(w->first_touches, w->count, bad), bad);
    return o;
}

/* The histogram's text form as a JSON string (NULL and *bad on failure). */
static json_t *hist_json(const struct llc_statmodel_hist *h, bool *bad, char *err, size_t errlen)
{
    const int len = llc_statmodel_hist_format(h, NULL, 0, err, errlen);
    char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!text || llc_statmodel_hist_format(h, text, (size_t)len + 1, err, errlen) < 0) {
        free(text);
        *bad = true;
        return NULL;
    }
    json_t *s = json_string(text);
    free(text);
    return s;
}

static json_t *strata_json(const struct llc_profile_phase *ph, bool *bad, char *err, size_t errlen)
{
    json_t *arr = json_array();
    for (size_t g = 0; g < ph->n_strata; g++) {
        const struct llc_profile_stratum *s = &ph->strata[g];
        json_t *o = json_object(), *rate = json_array();
        push(rate, jnum(s->rate_lo), bad);
        push(rate, jnum(s->rate_hi), bad);
        put(o, "sets", json_real(s->sets), bad);
        put(o, "refs", json_real(s->refs), bad);
        put(o, "rate", rate, bad);
        put(o, "samples", jnum(s->samples), bad);
        put(o, "rdhist", hist_json(s->rdhist, bad, err, errlen), bad);
        if (s->rdhist_own)
            put(o, "rdhist_own", hist_json(s->rdhist_own, bad, err, errlen), bad);
        push(arr, o, bad);
    }
    return arr;
}

static json_t *reals_json(const double *v, size_t n, bool *bad)
{
    json_t *a = json_array();
    for (size_t k = 0; k < n; k++)
        push(a, jnum(v[k]), bad);
    return a;
}

/* {distances, samples, share, refs: [[per phase, unclassified] per bin]} */
static json_t *spans_json(const struct llc_profile_spans *s, size_t stride, bool *bad)
{
    json_t *o = json_object(), *refs = json_array();
    put(o, "distances", reals_json(s->distance, s->n, bad), bad);
    put(o, "samples", reals_json(s->samples, s->n, bad), bad);
    put(o, "share", reals_json(s->share, s->n, bad), bad);
    for (size_t k = 0; k < s->n; k++)
        push(refs, reals_json(&s->refs[k * stride], stride, bad), bad);
    put(o, "refs", refs, bad);
    return o;
}

static json_t *phase_json(const struct llc_profile_phase *ph, size_t stride, bool *bad, char *err,
                          size_t errlen)
{
    json_t *text = hist_json(ph->rdhist, bad, err, errlen);
    if (!text)
        return NULL;
    json_t *o = json_object(), *solo = json_object();
    put(solo, "cpi", jnum(ph->solo.cpi), bad);
    put(solo, "llc_miss_ratio", jnum(ph->solo.llc_miss_ratio), bad);
    put(solo, "llc_accesses_per_reference", jnum(ph->solo.llc_accesses_per_reference), bad);
    put(solo, "occupancy_lines", jnum(ph->solo.occupancy_lines), bad);
    put(o, "id", json_integer(ph->id), bad);
    put(o, "windows", json_integer((json_int_t)ph->windows), bad);
    put(o, "instructions", jnum(ph->instructions), bad);
    put(o, "references", jnum(ph->references), bad);
    put(o, "refs_per_instruction", json_real(ph->refs_per_instruction), bad);
    put(o, "samples", jnum(ph->samples), bad);
    put(o, "rdhist", text, bad);
    if (ph->rdhist_own)
        put(o, "rdhist_own", hist_json(ph->rdhist_own, bad, err, errlen), bad);
    put(o, "solo", solo, bad);
    put(o, "cpi0", json_real(ph->cpi0), bad);
    if (!isnan(ph->set_dispersion))
        put(o, "set_dispersion", jnum(ph->set_dispersion), bad);
    if (ph->n_strata)
        put(o, "strata", strata_json(ph, bad, err, errlen), bad);
    if (ph->spans.n)
        put(o, "cross_spans", spans_json(&ph->spans, stride, bad), bad);
    return o;
}

static json_t *probe_json(const struct llc_profile_probe *pr, bool *bad)
{
    json_t *o = json_object(), *arr = json_array();
    for (size_t i = 0; i < pr->n_phases; i++) {
        const struct llc_profile_probe_phase *e = &pr->per_phase[i];
        json_t *q = json_object(), *sets = json_array();
        for (size_t g = 0; g < LLC_PROFILE_KEYS; g++) {
            json_t *st = json_array();
            for (size_t k = 0; k < e->n_sets[g]; k++)
                push(st, json_integer(e->sets[g][k]), bad);
            push(sets, st, bad);
        }
        put(q, "phase", json_integer(e->phase), bad);
        put(q, "rates", reals(e->rates, e->n_rates, bad), bad);
        put(q, "tau_s", reals(e->tau_s, e->n_rates, bad), bad);
        put(q, "phi_hat", reals(e->phi_hat, e->n_rates, bad), bad);
        put(q, "q_max", reals(e->q_max, e->n_rates, bad), bad);
        put(q, "cv", json_real(e->cv), bad);
        put(q, "keys", reals(e->keys, LLC_PROFILE_KEYS, bad), bad);
        put(q, "sets", sets, bad);
        put(q, "note", jstr(e->note), bad);
        push(arr, q, bad);
    }
    put(o, "status", json_string(pr->ok ? "ok" : "missing"), bad);
    put(o, "reason", jstr(pr->reason), bad);
    put(o, "per_phase", arr, bad);
    return o;
}

char *llc_profile_csv_path(const char *path)
{
    const size_t n = strlen(path);
    const bool json = n >= 5 && strcmp(path + n - 5, ".json") == 0;
    const size_t stem = json ? n - 5 : n;
    char *out = malloc(stem + 5);
    if (out) {
        memcpy(out, path, stem);
        memcpy(out + stem, ".csv", 5);
    }
    return out;
}

static int write_csv(const char *path, const struct llc_profile_windows *w, char *err,
                     size_t errlen)
{
    struct llc_afile *f;
    int rc = llc_afile_open(path, &f, err, errlen);
    if (rc < 0)
        return rc;
    FILE *s = llc_afile_stream(f);
    fprintf(s, "window,phase,instructions,references\n");
    for (size_t i = 0; i < w->count; i++)
        fprintf(s, "%zu,%d,%.17g,%.17g\n", i, w->phase_of[i], w->instructions[i], w->references[i]);
    return llc_afile_commit(f, err, errlen);
}

int llc_profile_write(const char *path, const struct llc_profile *p, char *err, size_t errlen)
{
    char *csv = NULL;
    bool bad = false;
    json_t *doc = NULL;
    int rc = llc_profile_check(p, path, err, errlen);
    if (rc < 0)
        goto out;
    doc = llc_json_doc_new(LLC_PROFILE_FORMAT, LLC_PROFILE_VERSION);
    put(doc, "llcprobe_version", jstr(p->llcprobe_version), &bad);
    put(doc, "created", jstr(p->created), &bad);
    put(doc, "program", program_json(&p->program, &bad), &bad);
    put(doc, "machine", machine_json(&p->machine, &bad), &bad);
    put(doc, "timing", timing_json(&p->timing, &bad), &bad);
    json_t *smp = json_object();
    put(smp, "kind", jstr(p->sampler.kind), &bad);
    put(smp, "rate", json_real(p->sampler.rate), &bad);
    put(smp, "seed", json_integer((json_int_t)p->sampler.seed), &bad);
    put(doc, "sampler", smp, &bad);
    put(doc, "windows", windows_json(&p->windows, &bad), &bad);
    json_t *phases = json_array();
    for (size_t i = 0; i < p->n_phases && !bad; i++)
        push(phases, phase_json(&p->phases[i], p->n_phases + 1, &bad, err, errlen), &bad);
    put(doc, "phases", phases, &bad);
    put(doc, "probe", probe_json(&p->probe, &bad), &bad);
    if (bad) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory building the JSON", path);
        goto out;
    }
    if (!(csv = llc_profile_csv_path(path))) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    rc = llc_json_write_atomic(path, doc, err, errlen);
    if (rc == 0)
        rc = write_csv(csv, &p->windows, err, errlen);
out:
    free(csv);
    json_decref(doc);
    return rc;
}
