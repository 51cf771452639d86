/* The map on disk (JSON for programs, CSV for plots) and on stdout. */
#include "llcprobe/map.h"

#include "llcprobe/common.h"
#include "util/atomic_file.h"
#include "util/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

static json_t *u64_array(const uint64_t *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)v[i]));
    return a;
}

static json_t *real_array(const double *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_real(v[i]));
    return a;
}

static json_t *summary_json(const struct llc_map_result *r)
{
    struct llc_map_summary s;
    llc_map_summarize(r, &s);
    json_t *hot = json_array();
    for (unsigned i = 0; hot && i < s.n_hottest; i++)
        json_array_append_new(hot, json_integer(s.hottest[i]));
    /* docs/METHODS.md §1.5: below 0.3 the set-to-set variation is mostly noise, and
     * key-point selection is no better than random: said in the file too. */
    const char *note = !isfinite(s.retest_pearson) ? "fewer than 2 sweeps: no test-retest figure"
                       : s.retest_pearson < 0.3
                           ? "below 0.3: set-to-set variation is mostly noise; key-point "
                             "selection is no better than random"
                           : "";
    return json_pack("{s:i, s:I, s:I, s:f, s:f, s:f, s:f, s:o, s:s, s:o}", "sets_mapped", (int)s.n,
                     "total_misses", (json_int_t)s.total_misses, "total_accesses",
                     (json_int_t)s.total_accesses, "mean", s.mean, "sd", s.sd, "min", s.min, "max",
                     s.max, "retest_pearson", llc_json_finite(s.retest_pearson), "retest_note",
                     note, "hottest", hot ? hot : json_null());
}

static json_t *exclusion_json(const struct llc_map_baseline *b, const struct llc_map_result *r)
{
    json_t *units = json_array(), *q = json_array();
    for (uint32_t u = 0; units && q && u < b->units; u++) {
        if (b->why[u])
            json_array_append_new(units,
                                  json_pack("{s:i, s:b, s:b}", "set", (int)u, "baseline",
                                            (b->why[u] & LLC_MAP_EXCL_BASELINE) != 0, "leader",
                                            (b->why[u] & LLC_MAP_EXCL_LEADER) != 0));
        json_array_append_new(q, llc_json_finite(b->q[u]));
    }
    json_t *raw = r->raw_misses ? u64_array(r->raw_misses, r->units) : json_null();
    return json_pack(
        "{s:s, s:f, s:f, s:i, s:i, s:i, s:o, s:o, s:o}", "what",
        "sets excluded from the summary: baseline misses (no target) above max_q of probe accesses, "
        "or set-dueling leader sets; sets.misses has each set's baseline rate subtracted, "
        "raw_misses does not",
        "max_q", LLC_MAP_BASELINE_MAX_Q, "baseline_dwell_s", b->dwell_s, "excluded",
        (int)b->n_excluded, "by_baseline", (int)b->n_baseline, "leaders", (int)b->n_leader, "sets",
        units ? units : json_null(), "baseline_q", q ? q : json_null(), "raw_misses", raw);
}

static json_t *rate_selection_json(const struct llc_map_rate_selection *s)
{
    json_t *trials = json_array();
    for (size_t i = 0; trials && i < s->n; i++) {
        const struct llc_map_rate_trial *t = &s->trials[i];
        json_t *inc = json_array();
        for (unsigned l = 0; inc && l < LLC_MAP_PLANT_LEVELS; l++)
            json_array_append_new(inc, llc_json_finite(t->increment[l]));
        json_array_append_new(
            trials,
            json_pack("{s:f, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "rate", t->rate,
                      "score", llc_json_finite(t->score), "score_se", llc_json_finite(t->score_se),
                      "increment_q", inc ? inc : json_null(), "spearman",
                      llc_json_finite(t->spearman), "effect", llc_json_finite(t->effect),
                      "q_median", llc_json_finite(t->q_median), "q_p95", llc_json_finite(t->q_p95),
                      "q_max", llc_json_finite(t->q_max), "q_safe", llc_map_rate_safe(t)));
    }
    return json_pack("{s:s, s:o, s:o, s:s, s:i, s:f, s:f, s:f}", "method", s->method, "chosen_rate",
                     json_real(s->rate), "trials", trials ? trials : json_null(), "why", s->why,
                     "planted_units", (int)s->planted_units, "plant_touch_rate",
                     s->plant_touch_rate, "trial_dwell_s", s->dwell_s, "seconds", s->seconds);
}

int llc_map_write_json(const struct llc_map_backend *b, const struct llc_map_result *r,
                       const struct llc_map_meta *m, const char *path, char *err, size_t errlen)
{
    const struct llc_map_geometry *g = &b->geo;
    json_t *doc = llc_json_doc_new("llcprobe-map", 1);
    if (!doc)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    json_t *sweeps = json_array();
    for (unsigned s = 0; sweeps && s < r->sweeps; s++)
        json_array_append_new(sweeps, u64_array(r->sweep_misses + (size_t)s * r->units, r->units));
    json_t *measured = json_array();
    for (uint32_t u = 0; measured && u < r->units; u++)
        json_array_append_new(measured, json_boolean(r->measured[u]));
    const struct llc_map_plan *p = m->plan;
    int bad =
        json_object_set_new(doc, "machine", json_string(m->machine ? m->machine : "")) |
        json_object_set_new(doc, "target", json_string(m->target ? m->target : "")) |
        json_object_set_new(doc, "target_page_size",
                            json_string(b->target_pages[0] ? b->target_pages : "unknown")) |
        json_object_set_new(
            doc, "llc",
            json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:b, s:I, s:i, s:s?}", "line_size",
                      (int)g->line_size, "sets_per_slice", (int)g->sets_per_slice, "slices",
                      (int)g->slices, "ways", (int)g->llc_ways, "l2_ways", (int)g->l2_ways,
                      "l2_sets", (int)g->l2_sets, "victim", g->victim_llc, "bytes",
                      (json_int_t)g->llc_bytes, "sets", (int)r->units, "policy", m->policy)) |
        json_object_set_new(doc, "backend",
                            json_pack("{s:s, s:s, s:s}", "name", b->name, "calibration",
                                      b->calibration, "walk_check", b->walk_check)) |
        json_object_set_new(doc, "probe",
                            json_pack("{s:i, s:f, s:i, s:s, s:I, s:i, s:f, s:i}", "walk",
                                      (int)b->walk, "rate", m->rate, "delay_nops",
                                      (int)m->delay_nops, "mode", llc_map_mode_name(p->mode),
                                      "seed", (json_int_t)m->seed, "group", (int)p->group,
                                      "dwell_s", p->dwell_s, "sweeps_planned", (int)p->sweeps)) |
        json_object_set_new(doc, "start_time", json_string(m->start_time ? m->start_time : "")) |
        json_object_set_new(doc, "end_time", json_string(m->end_time ? m->end_time : "")) |
        json_object_set_new(doc, "seconds", json_real(r->seconds)) |
        json_object_set_new(doc, "complete", json_boolean(r->complete)) |
        json_object_set_new(doc, "incomplete_reason", json_string(r->incomplete_reason)) |
        json_object_set_new(doc, "sweeps", json_integer(r->sweeps)) |
        json_object_set_new(doc, "summary", summary_json(r)) |
        json_object_set_new(doc, "sets",
                            json_pack("{s:o, s:o, s:o, s:o, s:o}", "measured", measured, "misses",
                                      u64_array(r->misses, r->units), "accesses",
                                      u64_array(r->accesses, r->units), "dwell_s",
                                      real_array(r->dwell_s, r->units), "sweep_misses", sweeps));
    if (m->prefetch)
        bad |= json_object_set_new(doc, "prefetchers", json_string(m->prefetch));
    if (m->baseline)
        bad |= json_object_set_new(doc, "exclusion", exclusion_json(m->baseline, r));
    if (m->rate_selection)
        bad |= json_object_set_new(doc, "rate_selection", rate_selection_json(m->rate_selection));
    if (m->truth_occupancy)
        bad |= json_object_set_new(
            doc, "truth",
            json_pack("{s:s, s:o}", "what",
                      "the target's LLC occupancy per set in lines, simulator ground "
                      "truth averaged over the map",
                      "occupancy", real_array(m->truth_occupancy, r->units)));
    int rc = bad ? llc_errf(err, errlen, -ENOMEM, "out of memory building %s", path)
                 : llc_json_write_atomic(path, doc, err, errlen);
    json_decref(doc);
    return rc;
}

int llc_map_write_csv(const struct llc_map_backend *b, const struct llc_map_result *r,
                      const struct llc_map_meta *m, const char *path, char *err, size_t errlen)
{
    struct llc_afile *f;
    int rc = llc_afile_open(path, &f, err, errlen);
    if (rc < 0)
        return rc;
    FILE *out = llc_afile_stream(f);
    const uint32_t sps = b->geo.sets_per_slice;
    fprintf(out, "set,slice,index,misses,accesses,dwell_s%s\n",
            m->truth_occupancy ? ",true_occupancy" : "");
    for (uint32_t u = 0; u < r->units; u++) {
        if (!r->measured[u])
            continue;
        fprintf(out, "%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%.6g", u, u / sps, u % sps, r->misses[u],
                r->accesses[u], r->dwell_s[u]);
        if (m->truth_occupancy)
            fprintf(out, ",%.4f", m->truth_occupancy[u]);
        fputc('\n', out);
    }
    return llc_afile_commit(f, err, errlen);
}

void llc_map_print_summary(FILE *out, const struct llc_map_backend *b,
                           const struct llc_map_result *r)
{
    struct llc_map_summary s;
    llc_map_summarize(r, &s);
    const uint32_t sps = b->geo.sets_per_slice;
    fprintf(out, "sets mapped     %u of %u%s\n", s.n, r->units, r->complete ? "" : " (incomplete)");
    if (r->excluded) {
        uint32_t n = 0;
        for (uint32_t u = 0; u < r->units; u++)
            n += r->excluded[u];
        fprintf(
            out,
            "excluded        %u set%s (baseline misses over %.0f%% of probe accesses, or leader sets); "
            "baseline subtracted\n",
            n, n == 1 ? "" : "s", 100 * LLC_MAP_BASELINE_MAX_Q);
    }
    fprintf(out, "probe misses    %" PRIu64 " of %" PRIu64 " accesses\n", s.total_misses,
            s.total_accesses);
    fprintf(out, "per set         mean %.2f  sd %.2f  min %.0f  max %.0f\n", s.mean, s.sd, s.min,
            s.max);
    if (isfinite(s.retest_pearson))
        fprintf(out, "sweep 1 vs 2    Pearson %.3f%s\n", s.retest_pearson,
                s.retest_pearson < 0.3 ? " (below 0.3: set-to-set variation is mostly noise)" : "");
    fprintf(out, "hottest sets   ");
    for (unsigned i = 0; i < s.n_hottest; i++)
        fprintf(out, " %u(s%u:i%u)=%" PRIu64, s.hottest[i], s.hottest[i] / sps, s.hottest[i] % sps,
                r->misses[s.hottest[i]]);
    fprintf(out, "\n");
}
