/* The outputs of `llcprobe sample`: PREFIX.sample.json, .sample.csv and
 * .sample.png from a sampling run (probe/session). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/fit_plot.h"
#include "util/plot.h"
#include "cmd/sample_out.h"
#include "util/atomic_file.h"
#include "util/cli.h"

/* The interval field holding the selection's headline estimator. */
static const char *headline_field(enum llc_fit_estimator e)
{
    static const char *const fields[] = {[LLC_FIT_EST_STRATIFIED_RATIO] = "stratified_ratio",
                                         [LLC_FIT_EST_STRATIFIED] = "stratified", [LLC_FIT_EST_RATIO] = "ratio",
                                         [LLC_FIT_EST_SCALE_UP] = "scale_up"};
    return (unsigned)e < LLC_ARRAY_LEN(fields) && fields[e] ? fields[e] : "stratified";
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int llc_sample_write(const struct sample_output *so, char *err, size_t errlen)
{
    const struct llc_map_backend *b = so->b;
    const struct llc_sample_config *c = so->cfg;
    const struct llc_sample_result *r = so->r;
    const struct llc_calib *cal = c->calib;
    const uint32_t *units = c->units;
    const size_t n = c->n, count = r->count;
    const struct llc_sample_interval *iv = r->iv, *tot = &r->total;
    char path[4200];
    json_t *doc = llc_json_doc_new("llcprobe-sample", 1), *sets = json_array(), *series = json_array();
    for (size_t i = 0; sets && i < n; i++)
        json_array_append_new(sets, json_integer(units[i]));
    const double llc_lines = (double)llc_map_units(&b->geo) * b->geo.llc_ways;
    for (size_t i = 0; series && i <= count; i++) {
        const struct llc_sample_interval *v = i < count ? &iv[i] : tot;
        json_t *e = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "t_start",
                              num(v->t0), "t_end", num(v->t1), "sampled_misses", num(v->sampled), "scale_up",
                              num(v->scale_up), "stratified", num(v->stratified), "stratified_ratio",
                              num(v->stratified_ratio), "ratio", num(v->ratio), "occupancy_lines",
                              num(v->occ_lines), "occupancy_bytes", num(v->occ_lines * b->geo.line_size),
                              "occupancy_pct_llc", num(100 * v->occ_lines / llc_lines), "true_occupancy_lines",
                              num(v->true_occ_lines), "true_occupancy_pct_llc",
                              num(100 * v->true_occ_lines / llc_lines), "true_target_misses",
                              num(v->true_target_misses), "probe_accesses", num(v->probe_accesses));
        if (i == count)
            json_object_set_new(doc, "total", e);
        else
            json_array_append_new(series, e);
    }
    const char *headline = c->method == LLC_SAMPLE_GAUSSIAN && c->sel ? headline_field(c->sel->estimator) : "scale_up";
    int bad = !doc || !sets || !series ||
              json_object_update_new(
                  doc, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:f, s:f, s:i, s:o, s:o, s:s?, s:s?, s:o}", "machine",
                                 so->machine, "target", so->target, "backend", b->name, "method",
                                 llc_sample_method_name(c->method), "headline", headline, "seed",
                                 (json_int_t)so->seed, "rate", so->rate, "interval_s", c->interval, "sets_total",
                                 (int)llc_map_units(&b->geo), "sets", sets, "intervals", series, "calibration",
                                 cal ? so->calib_path : NULL, "occupancy_estimator",
                                 cal ? "walk-length search, calibrated" : NULL,
                                 "calibration_curve", json_null())) < 0;
    /* How many runs of a replayed simulated trace the whole command took
     * (map, intervals and search); null where the target is not replayed. */
    if (!bad)
        bad = json_object_set_new(doc, "target_runs", r->target_runs ? json_integer(r->target_runs) : json_null()) < 0;
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
                            json_pack("{s:s, s:f, s:i, s:f, s:o, s:o, s:s?}", "calibration_machine", cal->machine,
                                      "cycle_s", r->search_cycle_s, "cycles", (int)cal->search_cycles,
                                      "threshold", cal->search_threshold, "raw_estimate", raw, "lines", held,
                                      "slow_walk_check", b->slow_walk_check[0] ? b->slow_walk_check : NULL));
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
        fprintf(out, "%zu,%.6g,%.6g,%.0f,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.0f,%.6g\n", i, iv[i].t0, iv[i].t1,
                iv[i].sampled, iv[i].scale_up, iv[i].stratified, iv[i].ratio, iv[i].occ_lines,
                100 * iv[i].occ_lines / llc_lines, iv[i].true_occ_lines, iv[i].true_target_misses,
                iv[i].stratified_ratio);
    return llc_afile_commit(f, err, errlen);
}

struct plot_ctx {
    const struct llc_sample_interval *iv;
    size_t count;
    bool gaussian;
    const char *title;
};

static void emit_series(void *vctx, FILE *gp)
{
    const struct plot_ctx *c = vctx;
    fprintf(gp, "$d << EOD\n");
    for (size_t i = 0; i < c->count; i++)
        fprintf(gp, "%.9g %.9g %.9g %.9g\n", 0.5 * (c->iv[i].t0 + c->iv[i].t1), c->iv[i].scale_up,
                isfinite(c->iv[i].stratified) ? c->iv[i].stratified : 0,
                isfinite(c->iv[i].ratio) ? c->iv[i].ratio : 0);
    fprintf(gp, "EOD\nset title '%s'\nset xlabel 'time (s)'\nset ylabel 'whole-cache probe misses per interval'\n"
                "set key bottom right\nplot $d using 1:2 with linespoints title 'scale-up'",
            c->title);
    if (c->gaussian)
        fprintf(gp, ", $d using 1:3 with linespoints lw 2 title 'stratified', $d using 1:4 with linespoints "
                    "title 'ratio'");
    fprintf(gp, "\n");
}

void llc_sample_plot(const struct sample_output *so, bool quiet)
{
    char png[4200], title[512], err[LLC_ERRLEN];
    snprintf(png, sizeof(png), "%s.sample.png", so->prefix);
    snprintf(title, sizeof(title), "%s: %s, %zu sets", so->target, llc_sample_method_name(so->cfg->method),
             so->cfg->n);
    struct plot_ctx pc = {.iv = so->r->iv, .count = so->r->count, .gaussian = so->cfg->sel != NULL, .title = title};
    if (llc_plot_png(NULL, png, 1000, 600, emit_series, &pc, err, sizeof(err)) < 0)
        llc_cli_warn(quiet, "%s: no plot: %s", png, err);
}
