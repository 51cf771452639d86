/* The files of a sampling run: PREFIX.sample.json (format llcprobe-sample
 * v1) and PREFIX.sample.csv. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llcprobe/session.h"
#include "util/atomic_file.h"
#include "util/json.h"

/* The interval field holding the selection's headline estimator. */
static const char *headline_field(enum llc_fit_estimator e)
{
    static const char *const fields[] = {[LLC_FIT_EST_STRATIFIED_RATIO] = "stratified_ratio",
                                         [LLC_FIT_EST_STRATIFIED] = "stratified",
                                         [LLC_FIT_EST_RATIO] = "ratio",
                                         [LLC_FIT_EST_SCALE_UP] = "scale_up"};
    return (unsigned)e < LLC_ARRAY_LEN(fields) && fields[e] ? fields[e] : "stratified";
}

int llc_sample_write(const struct llc_sample_output *so, char *err, size_t errlen)
{
    const struct llc_map_backend *b = so->b;
    const struct llc_sample_config *c = so->cfg;
    const struct llc_sample_result *r = so->r;
    const struct llc_calib *cal = c->calib;
    const uint32_t *units = c->units;
    const size_t n = c->n, count = r->count;
    const struct llc_sample_interval *iv = r->iv, *tot = &r->total;
    char path[4200];
    json_t *doc = llc_json_doc_new("llcprobe-sample", 1), *sets = json_array(),
           *series = json_array();
    for (size_t i = 0; sets && i < n; i++)
        json_array_append_new(sets, json_integer(units[i]));
    const double llc_lines = (double)llc_map_units(&b->geo) * b->geo.llc_ways;
    for (size_t i = 0; series && i <= count; i++) {
        const struct llc_sample_interval *v = i < count ? &iv[i] : tot;
        json_t *e = json_pack(
            "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "t_start",
            llc_json_finite(v->t0), "t_end", llc_json_finite(v->t1), "sampled_misses",
            llc_json_finite(v->sampled), "scale_up", llc_json_finite(v->scale_up), "stratified",
            llc_json_finite(v->stratified), "stratified_ratio",
            llc_json_finite(v->stratified_ratio), "ratio", llc_json_finite(v->ratio),
            "occupancy_lines", llc_json_finite(v->occ_lines), "occupancy_bytes",
            llc_json_finite(v->occ_lines * b->geo.line_size), "occupancy_pct_llc",
            llc_json_finite(100 * v->occ_lines / llc_lines), "true_occupancy_lines",
            llc_json_finite(v->true_occ_lines), "true_occupancy_pct_llc",
            llc_json_finite(100 * v->true_occ_lines / llc_lines), "true_target_misses",
            llc_json_finite(v->true_target_misses), "probe_accesses",
            llc_json_finite(v->probe_accesses));
        if (i == count)
            json_object_set_new(doc, "total", e);
        else
            json_array_append_new(series, e);
    }
    const char *headline =
        c->method == LLC_SAMPLE_GAUSSIAN && c->sel ? headline_field(c->sel->estimator) : "scale_up";
    int bad =
        !doc || !sets || !series ||
        json_object_update_new(
            doc,
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:f, s:f, s:i, s:o, s:o, s:s?, s:s?, s:o}",
                      "machine", so->machine, "target", so->target, "backend", b->name, "method",
                      llc_sample_method_name(c->method), "headline", headline, "seed",
                      (json_int_t)so->seed, "rate", so->rate, "interval_s", c->interval,
                      "sets_total", (int)llc_map_units(&b->geo), "sets", sets, "intervals", series,
                      "calibration", cal ? so->calib_path : NULL, "occupancy_estimator",
                      cal ? "walk-length search, calibrated" : NULL, "calibration_curve",
                      json_null())) < 0;
    /* How many runs of a replayed simulated trace the whole command took
     * (map, intervals and search); null where the target is not replayed. */
    if (!bad)
        bad = json_object_set_new(doc, "target_runs",
                                  r->target_runs ? json_integer(r->target_runs) : json_null()) < 0;
    if (bad) {
        json_decref(doc);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    if (cal) {
        /* What the occupancy came from: the calibration's machine and
         * search, and each sampled set's raw estimate and lines. */
        json_t *curve = json_array(), *raw = json_array(), *held = json_array();
        for (size_t k = 0; curve && k < cal->nk; k++)
            json_array_append_new(curve, json_real(cal->search_estimate[k]));
        for (size_t i = 0; raw && held && i < n; i++) {
            json_array_append_new(raw, json_real(r->occ_raw[i]));
            json_array_append_new(held, json_real(r->occ_lines[i]));
        }
        json_object_set_new(doc, "calibration_curve", curve);
        json_object_set_new(doc, "occupancy_search",
                            json_pack("{s:s, s:f, s:i, s:f, s:o, s:o, s:s?}", "calibration_machine",
                                      cal->machine, "cycle_s", r->search_cycle_s, "cycles",
                                      (int)cal->search_cycles, "threshold", cal->search_threshold,
                                      "raw_estimate", raw, "lines", held, "slow_walk_check",
                                      b->slow_walk_check[0] ? b->slow_walk_check : NULL));
    }
    snprintf(path, sizeof(path), "%s.sample.json", so->prefix);
    int rc = llc_json_write_atomic(path, doc, err, errlen);
    json_decref(doc);
    if (rc < 0)
        return rc;
    snprintf(path, sizeof(path), "%s.sample.csv", so->prefix);
    struct llc_afile *f;
    if ((rc = llc_afile_open(path, &f, err, errlen)) < 0)
        return rc;
    FILE *out = llc_afile_stream(f);
    fprintf(out, "interval,t_start,t_end,sampled_misses,scale_up,stratified,ratio,occupancy_lines,"
                 "occupancy_pct_llc,true_occupancy_lines,true_target_misses,stratified_ratio\n");
    for (size_t i = 0; i < count; i++)
        fprintf(out, "%zu,%.6g,%.6g,%.0f,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.0f,%.6g\n", i, iv[i].t0,
                iv[i].t1, iv[i].sampled, iv[i].scale_up, iv[i].stratified, iv[i].ratio,
                iv[i].occ_lines, 100 * iv[i].occ_lines / llc_lines, iv[i].true_occ_lines,
                iv[i].true_target_misses, iv[i].stratified_ratio);
    return llc_afile_commit(f, err, errlen);
}
