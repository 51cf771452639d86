/* A timed co-run on disk: JSON (llcprobe-corun v1) and CSV. */
#include <errno.h>
#include <stdio.h>

#include <jansson.h>

#include "llcprobe/common.h"
#include "llcprobe/corun.h"
#include "llcprobe/sim.h"
#include "util/atomic_file.h"
#include "util/json.h"

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

static const char *source_name(enum llc_corun_source s)
{
    switch (s) {
    case LLC_CORUN_WORKLOAD:
        return "workload";
    case LLC_CORUN_TRACE:
        return "trace";
    case LLC_CORUN_ARRAY:
        return "array";
    }
    return "?";
}

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

static json_t *totals_json(const struct llc_corun_series *s)
{
    json_t *o = json_object();
    set(o, "instructions", jint(s->instructions));
    set(o, "accesses", jint(s->accesses));
    set(o, "cycles", json_real(s->cycles));
    set(o, "cpi", json_real(s->instructions ? s->cycles / (double)s->instructions : 0.0));
    set(o, "l2_hits", jint(s->levels[LLC_SIM_HIT_L2]));
    set(o, "llc_hits", jint(s->levels[LLC_SIM_HIT_LLC]));
    set(o, "mem_accesses", jint(s->levels[LLC_SIM_HIT_DRAM]));
    set(o, "llc_accesses", jint(s->llc_accesses));
    set(o, "llc_misses", jint(s->llc_misses));
    set(o, "llc_miss_ratio", json_real(ratio(s->llc_misses, s->llc_accesses)));
    set(o, "llc_misses_per_access", json_real(ratio(s->llc_misses, s->accesses)));
    set(o, "occupancy_end_lines", jint(s->occupancy_end));
    return o;
}

static json_t *window_part(const struct llc_corun_window *w)
{
    json_t *o = json_object();
    set(o, "cycles", json_real(w->cycles));
    set(o, "accesses", jint(w->accesses));
    set(o, "llc_accesses", jint(w->llc_accesses));
    set(o, "llc_misses", jint(w->llc_misses));
    set(o, "occupancy", jint(w->occupancy));
    return o;
}

/* Solo window k if it lines up with co-run window k (same instructions). */
static const struct llc_corun_window *solo_at(const struct llc_corun_result *r, unsigned i,
                                              size_t k)
{
    if (!r->has_solo || k >= r->solo[i].n)
        return NULL;
    const struct llc_corun_window *s = &r->solo[i].w[k];
    return s->instructions == r->corun[i].w[k].instructions ? s : NULL;
}

static json_t *agent_json(const struct llc_corun_result *r, unsigned i,
                          const struct llc_corun_report_meta *m)
{
    const struct llc_corun_agent *in = m && m->agents ? &m->agents[i] : NULL;
    json_t *o = json_object();
    set(o, "name", json_string(r->name[i]));
    set(o, "target", m && m->targets && m->targets[i] ? json_string(m->targets[i]) : json_null());
    set(o, "source", in ? json_string(source_name(in->source)) : json_null());
    set(o, "cpi", in ? json_real(in->cpi) : json_null());
    set(o, "mlp", in ? json_real(in->mlp) : json_null());
    set(o, "ipa", in && in->source != LLC_CORUN_TRACE ? json_real(in->ipa) : json_null());
    set(o, "budget_instructions", in && in->instructions ? jint(in->instructions) : json_null());
    const struct llc_corun_series *c = &r->corun[i];
    set(o, "corun", totals_json(c));
    set(o, "solo", r->has_solo ? totals_json(&r->solo[i]) : json_null());
    set(o, "slowdown",
        r->has_solo && r->solo[i].cycles > 0 && r->solo[i].instructions == c->instructions
            ? json_real(c->cycles / r->solo[i].cycles)
            : json_null());
    json_t *ws = json_array();
    for (size_t k = 0; k < c->n; k++) {
        const struct llc_corun_window *w = &c->w[k];
        const struct llc_corun_window *s = solo_at(r, i, k);
        json_t *x = json_object();
        set(x, "instructions", jint(w->instructions));
        set(x, "corun", window_part(w));
        set(x, "solo", s ? window_part(s) : json_null());
        set(x, "slowdown", s && s->cycles > 0 ? json_real(w->cycles / s->cycles) : json_null());
        json_array_append_new(ws, x);
    }
    set(o, "windows", ws);
    return o;
}

int llc_corun_write_json(const struct llc_corun_result *r, const struct llc_sim_config *cfg,
                         const struct llc_corun_params *p, const struct llc_corun_report_meta *m,
                         const char *path, char *err, size_t errlen)
{
    json_t *doc = llc_json_doc_new("llcprobe-corun", 1);
    if (!doc)
        return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
    int bad = set(doc, "seed", jint(cfg->seed));
    json_t *c = json_object();
    json_t *llc = json_object();
    bad |= set(c, "preset", m && m->preset ? json_string(m->preset) : json_null());
    set(llc, "bytes", jint(llc_sim_geometry_bytes(&cfg->llc)));
    set(llc, "lines", jint(llc_sim_geometry_bytes(&cfg->llc) / cfg->llc.line_size));
    set(llc, "sets", jint(llc_sim_geometry_sets(&cfg->llc)));
    set(llc, "ways", jint(cfg->llc.ways));
    set(llc, "slices", jint(cfg->llc.slices));
    set(llc, "policy", json_string(llc_sim_policy_name(cfg->llc_policy)));
    set(llc, "inclusion", json_string(llc_sim_inclusion_name(cfg->inclusion)));
    bad |= set(c, "llc", llc);
    if (cfg->l2_sets) {
        json_t *l2 = json_object();
        set(l2, "sets", jint(cfg->l2_sets));
        set(l2, "ways", jint(cfg->l2_ways));
        set(l2, "bytes", jint((uint64_t)cfg->l2_sets * cfg->l2_ways * cfg->llc.line_size));
        bad |= set(c, "l2", l2);
    } else {
        bad |= set(c, "l2", json_null());
    }
    bad |= set(doc, "config", c);
    json_t *t = json_object();
    json_t *lat = json_object();
    set(lat, "l2", json_real(p->lat_l2));
    set(lat, "llc", json_real(p->lat_llc));
    set(lat, "mem", json_real(p->lat_mem));
    bad |= set(t, "latency_cycles", lat);
    bad |= set(t, "window_instructions", jint(p->window));
    bad |= set(doc, "timing", t);
    json_t *run = json_object();
    bad |= set(run, "total_accesses", jint(r->total_accesses));
    bad |= set(run, "restart", json_boolean(p->restart));
    bad |= set(doc, "run", run);
    json_t *agents = json_array();
    for (unsigned i = 0; i < r->n; i++)
        bad |= json_array_append_new(agents, agent_json(r, i, m));
    bad |= set(doc, "agents", agents);
    int rc;
    if (bad)
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory building the document", path);
    else
        rc = llc_json_write_atomic(path, doc, err, errlen);
    json_decref(doc);
    return rc;
}

int llc_corun_write_csv(const struct llc_corun_result *r, const char *path, char *err,
                        size_t errlen)
{
    struct llc_afile *f = NULL;
    int rc = llc_afile_open(path, &f, err, errlen);
    if (rc < 0)
        return rc;
    FILE *out = llc_afile_stream(f);
    fputs("agent,window,instructions,cycles,llc_accesses,llc_misses,occupancy,"
          "solo_cycles,solo_llc_accesses,solo_llc_misses,solo_occupancy,slowdown\n",
          out);
    for (unsigned i = 0; i < r->n; i++) {
        const struct llc_corun_series *c = &r->corun[i];
        for (size_t k = 0; k < c->n; k++) {
            const struct llc_corun_window *w = &c->w[k];
            const struct llc_corun_window *s = solo_at(r, i, k);
            fprintf(out, "%s,%zu,%llu,%.1f,%llu,%llu,%llu", r->name[i], k,
                    (unsigned long long)w->instructions, w->cycles,
                    (unsigned long long)w->llc_accesses, (unsigned long long)w->llc_misses,
                    (unsigned long long)w->occupancy);
            if (s)
                fprintf(out, ",%.1f,%llu,%llu,%llu,%.6f\n", s->cycles,
                        (unsigned long long)s->llc_accesses, (unsigned long long)s->llc_misses,
                        (unsigned long long)s->occupancy,
                        s->cycles > 0 ? w->cycles / s->cycles : 0.0);
            else
                fputs(",,,,,\n", out);
        }
    }
    return llc_afile_commit(f, err, errlen);
}
