/* The run's ground truth on disk: JSON (llcprobe-sim v1) and CSV. */
#include <errno.h>
#include <stdlib.h>

#include <jansson.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"
#include "simrun/simrun_internal.h"
#include "util/atomic_file.h"
#include "util/json.h"

static const char *source_name(enum llc_simrun_source s)
{
    switch (s) {
    case LLC_SIMRUN_WORKLOAD:
        return "workload";
    case LLC_SIMRUN_TRACE:
        return "trace";
    case LLC_SIMRUN_CALLBACK:
        return "callback";
    }
    return "?";
}

/* json_*_new return NULL only when out of memory; the set_new functions
 * then fail too, and the final check of the document catches it. */
static int set(json_t *o, const char *k, json_t *v)
{
    return json_object_set_new(o, k, v);
}
static json_t *jint(uint64_t v)
{
    return json_integer((json_int_t)v);
}

static json_t *config_json(const struct llc_simrun *r, const struct llc_simrun_report_meta *m)
{
    const struct llc_sim_config *c = llc_sim_config_of(r->sim);
    json_t *o = json_object();
    json_t *llc = json_object();
    set(o, "preset", m && m->preset ? json_string(m->preset) : json_null());
    set(llc, "line_size", jint(c->llc.line_size));
    set(llc, "sets_per_slice", jint(c->llc.sets_per_slice));
    set(llc, "slices", jint(c->llc.slices));
    set(llc, "ways", jint(c->llc.ways));
    set(llc, "sets", jint(llc_sim_geometry_sets(&c->llc)));
    set(llc, "bytes", jint(llc_sim_geometry_bytes(&c->llc)));
    set(llc, "hash", json_string(c->llc.hash == LLC_SIM_HASH_XOR ? "xor" : "modulo"));
    set(llc, "policy", json_string(llc_sim_policy_name(c->llc_policy)));
    set(o, "llc", llc);
    set(o, "inclusion", json_string(llc_sim_inclusion_name(c->inclusion)));
    if (c->l2_sets) {
        json_t *l2 = json_object();
        set(l2, "sets", jint(c->l2_sets));
        set(l2, "ways", jint(c->l2_ways));
        set(l2, "policy", json_string(llc_sim_policy_name(c->l2_policy)));
        set(l2, "bytes", jint((uint64_t)c->l2_sets * c->l2_ways * c->llc.line_size));
        set(o, "l2", l2);
    } else {
        set(o, "l2", json_null());
    }
    set(o, "page_size", jint(c->page_size));
    set(o, "phys_mem_bytes", jint(c->phys_mem_bytes));
    set(o, "duration", jint(m ? m->duration : 0));
    set(o, "interval", jint(m ? m->interval : 0));
    return o;
}

static json_t *totals_json(const struct llc_simrun *r, unsigned i)
{
    const struct simrun_agent *a = &r->agent[i];
    struct llc_sim_agent_stats st;
    llc_sim_agent_stats(r->sim, (int)i, &st);
    const uint64_t llc_acc = st.llc_hits + st.llc_misses;
    const uint64_t llc_lines = (uint64_t)r->nsets * llc_sim_config_of(r->sim)->llc.ways;
    json_t *o = json_object();
    set(o, "accesses", jint(a->issued));
    set(o, "writes", jint(a->writes));
    set(o, "instructions", jint(a->instructions));
    set(o, "l2_hits", jint(st.l2_hits));
    set(o, "l2_misses", jint(st.l2_misses));
    set(o, "llc_accesses", jint(llc_acc));
    set(o, "llc_hits", jint(st.llc_hits));
    set(o, "llc_misses", jint(st.llc_misses));
    set(o, "llc_miss_ratio", json_real(llc_acc ? (double)st.llc_misses / llc_acc : 0));
    set(o, "llc_fills", jint(st.llc_fills));
    set(o, "llc_evicted", jint(st.llc_evicted));
    set(o, "back_invals", jint(st.back_invals));
    set(o, "llc_occupancy_lines", jint(st.llc_occupancy));
    set(o, "llc_occupancy_bytes", jint(st.llc_occupancy * r->line_size));
    set(o, "llc_occupancy_fraction", json_real((double)st.llc_occupancy / llc_lines));
    set(o, "l2_occupancy_lines", jint(st.l2_occupancy));
    return o;
}

static json_t *agent_json(const struct llc_simrun *r, unsigned i)
{
    const struct simrun_agent *a = &r->agent[i];
    json_t *o = json_object();
    set(o, "name", json_string(a->name));
    set(o, "role", json_string(llc_simrun_role_name(a->role)));
    set(o, "source", json_string(source_name(a->source)));
    if (a->source == LLC_SIMRUN_WORKLOAD)
        set(o, "spec", json_string(a->spec));
    if (a->source == LLC_SIMRUN_TRACE)
        set(o, "trace", json_string(a->trace_path));
    set(o, "rate", json_real(a->rate));
    set(o, "page_size", jint(a->page_size ? a->page_size : llc_sim_config_of(r->sim)->page_size));
    set(o, "physical", json_boolean(a->physical));
    set(o, "totals", totals_json(r, i));
    return o;
}

/* Arrays of one field of n set counters. */
enum field { F_ACCESSES, F_HITS, F_MISSES, F_OCCUPANCY };

static json_t *set_array(const struct llc_sim_set_stats *s, uint32_t n, enum field f)
{
    json_t *arr = json_array();
    for (uint32_t k = 0; k < n; k++) {
        uint64_t v = 0;
        switch (f) {
        case F_ACCESSES:
            v = s[k].hits + s[k].misses;
            break;
        case F_HITS:
            v = s[k].hits;
            break;
        case F_MISSES:
            v = s[k].misses;
            break;
        case F_OCCUPANCY:
            v = s[k].occupancy;
            break;
        }
        json_array_append_new(arr, jint(v));
    }
    return arr;
}

static json_t *per_set_json(const struct llc_simrun *r, struct llc_sim_set_stats *buf)
{
    json_t *arr = json_array();
    for (unsigned i = 0; i < r->nagents; i++) {
        llc_sim_set_stats(r->sim, (int)i, buf, r->nsets);
        json_t *o = json_object();
        set(o, "agent", json_string(r->agent[i].name));
        set(o, "accesses", set_array(buf, r->nsets, F_ACCESSES));
        set(o, "hits", set_array(buf, r->nsets, F_HITS));
        set(o, "misses", set_array(buf, r->nsets, F_MISSES));
        set(o, "occupancy", set_array(buf, r->nsets, F_OCCUPANCY));
        json_array_append_new(arr, o);
    }
    return arr;
}

static json_t *time_series_json(const struct llc_simrun *r, uint64_t interval)
{
    json_t *ts = json_object();
    json_t *frames = json_array();
    set(ts, "interval", jint(interval));
    for (size_t f = 0; f < r->frames.n; f++) {
        const struct llc_simrun_frame *fr = &r->frames.frames[f];
        json_t *o = json_object();
        set(o, "target_accesses", jint(fr->counted));
        set(o, "total_accesses", jint(fr->total));
        set(o, "clock_ticks", json_real(fr->clock));
        json_t *agents = json_array();
        for (unsigned i = 0; i < r->nagents; i++) {
            const struct llc_sim_set_stats *s = fr->sets + (size_t)i * fr->nsets;
            json_t *a = json_object();
            set(a, "accesses", set_array(s, fr->nsets, F_ACCESSES));
            set(a, "misses", set_array(s, fr->nsets, F_MISSES));
            set(a, "occupancy", set_array(s, fr->nsets, F_OCCUPANCY));
            json_array_append_new(agents, a);
        }
        set(o, "agents", agents);
        json_array_append_new(frames, o);
    }
    set(ts, "frames", frames);
    return ts;
}

int llc_simrun_write_json(const struct llc_simrun *r, const struct llc_simrun_report_meta *m,
                          const char *path, char *err, size_t errlen)
{
    int rc = 0;
    json_t *doc = llc_json_doc_new("llcprobe-sim", 1);
    struct llc_sim_set_stats *buf = malloc(r->nsets * sizeof(*buf));
    if (!doc || !buf) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
        goto out;
    }
    const struct llc_sim_config *c = llc_sim_config_of(r->sim);
    int bad = set(doc, "seed", jint(c->seed));
    bad |= set(doc, "config", config_json(r, m));
    json_t *run = json_object();
    bad |= set(run, "target_accesses", jint(r->counted));
    bad |= set(run, "total_accesses", jint(r->total));
    bad |= set(run, "clock_ticks", json_real(r->clock));
    bad |= set(run, "ended_early", json_boolean(m && m->ended_early));
    bad |= set(doc, "run", run);
    json_t *agents = json_array();
    for (unsigned i = 0; i < r->nagents; i++)
        bad |= json_array_append_new(agents, agent_json(r, i));
    bad |= set(doc, "agents", agents);
    bad |= set(doc, "per_set", per_set_json(r, buf));
    if (r->frames.n)
        bad |= set(doc, "time_series", time_series_json(r, m ? m->interval : 0));
    if (bad) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory building the document", path);
        goto out;
    }
    rc = llc_json_write_atomic(path, doc, err, errlen);
out:
    json_decref(doc);
    free(buf);
    return rc;
}

int llc_simrun_write_csv(const struct llc_simrun *r, const char *path, char *err, size_t errlen)
{
    const uint32_t n = r->nsets;
    const uint32_t per_slice = llc_sim_config_of(r->sim)->llc.sets_per_slice;
    struct llc_afile *f = NULL;
    struct llc_sim_set_stats *s = malloc((size_t)r->nagents * n * sizeof(*s));
    int rc = 0;
    if (!s) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
        goto out;
    }
    for (unsigned i = 0; i < r->nagents; i++)
        llc_sim_set_stats(r->sim, (int)i, s + (size_t)i * n, n);
    rc = llc_afile_open(path, &f, err, errlen);
    if (rc < 0)
        goto out;
    FILE *out = llc_afile_stream(f);
    fputs("set,slice,index", out);
    for (unsigned i = 0; i < r->nagents; i++) {
        const char *nm = r->agent[i].name;
        fprintf(out, ",%s_accesses,%s_hits,%s_misses,%s_occupancy", nm, nm, nm, nm);
    }
    fputc('\n', out);
    for (uint32_t k = 0; k < n; k++) {
        fprintf(out, "%u,%u,%u", k, k / per_slice, k % per_slice);
        for (unsigned i = 0; i < r->nagents; i++) {
            const struct llc_sim_set_stats *x = &s[(size_t)i * n + k];
            fprintf(out, ",%llu,%llu,%llu,%u", (unsigned long long)(x->hits + x->misses),
                    (unsigned long long)x->hits, (unsigned long long)x->misses, x->occupancy);
        }
        fputc('\n', out);
    }
    rc = llc_afile_commit(f, err, errlen);
    f = NULL;
out:
    llc_afile_abort(f);
    free(s);
    return rc;
}
