/* The sampling stage of `llcprobe sample` on a ready backend: choose the
 * sets (in-run map and fit for Gaussian-25), then measure them interval by
 * interval and scale up; outputs JSON, CSV, PNG and a summary line. */
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

static const char *const method_names[] = {"gaussian", "random", "continuous", "global", "sets"};

/* One interval's figures. */
struct interval {
    double t0, t1;
    double scale_up, stratified, ratio, sampled;  /* probe misses */
    double stratified_ratio;                      /* NaN without a selection */
    double headline;                              /* the selection's estimator; NaN without one */
    double probe_accesses;                        /* the overhead: what the probe issued */
    double occ_lines;                             /* NaN without a calibration */
    double true_occ_lines, true_target_misses;    /* NaN off the simulator */
};

/* The interval field holding the selection's headline estimator. */
static const char *headline_field(enum llc_fit_estimator e)
{
    static const char *const fields[] = {[LLC_FIT_EST_STRATIFIED_RATIO] = "stratified_ratio",
                                         [LLC_FIT_EST_STRATIFIED] = "stratified", [LLC_FIT_EST_RATIO] = "ratio",
                                         [LLC_FIT_EST_SCALE_UP] = "scale_up"};
    return (unsigned)e < LLC_ARRAY_LEN(fields) ? fields[e] : "stratified";
}

/* Map every set, fit, select: the selection is used in the run it was
 * made from (spec §5a). */
static int in_run_fit(const struct map_opts *o, struct sample_run *s, struct llc_map_backend *b,
                      volatile sig_atomic_t *stop, const char *machine, const char *target,
                      struct llc_fit_selection **sel)
{
    const uint32_t units = llc_map_units(&b->geo);
    const struct llc_map_plan plan = {.mode = b->all_at_once ? LLC_MAP_GLOBAL : LLC_MAP_SWEEP, .group = 1,
                                      .dwell_s = o->dwell_s, .sweeps = o->sweeps, .seed = o->seed, .stop = stop};
    struct llc_map_result *r = NULL;
    double *x = malloc(units * sizeof(*x));
    uint8_t *excl = malloc(units);
    int status = LLC_EXIT_FAIL;
    if (!x || !excl) {
        llc_cli_fail(o->cmd, "out of memory");
        goto out;
    }
    if (!o->quiet)
        fprintf(stderr, "llcprobe: sample: mapping all %u sets first (%s, %u sweeps)\n", units,
                llc_map_mode_name(plan.mode), plan.sweeps);
    if (llc_map_run(b, &plan, &r, s->err, sizeof(s->err)) < 0) {
        llc_cli_fail(o->cmd, "in-run map: %s", s->err);
        goto out;
    }
    if (!r->complete) {
        llc_cli_fail(o->cmd, "in-run map: %s", r->incomplete_reason);
        goto out;
    }
    char path[4200];
    snprintf(path, sizeof(path), "%s.map.json", o->out_prefix);
    const struct llc_map_meta meta = {.machine = machine, .target = target, .rate = o->rate,
                                      .delay_nops = o->delay_nops, .seed = o->seed, .plan = &plan};
    if (llc_map_write_json(b, r, &meta, path, s->err, sizeof(s->err)) < 0) {
        llc_cli_fail(o->cmd, "%s", s->err);
        goto out;
    }
    for (uint32_t u = 0; u < units; u++) {
        x[u] = (double)r->misses[u];
        excl[u] = !r->measured[u];
    }
    double *sw1 = NULL, *sw2 = NULL;
    if (r->sweeps >= 2 && (sw1 = malloc(2 * units * sizeof(double)))) {
        sw2 = sw1 + units;
        for (uint32_t u = 0; u < units; u++) {
            sw1[u] = (double)r->sweep_misses[u];
            sw2[u] = (double)r->sweep_misses[units + u];
        }
    }
    struct fit_cmd_opts fo = s->fit;
    fo.prefix = o->out_prefix;
    fo.quiet = o->quiet;
    const struct fit_cmd_input in = {.x = x, .excluded = excl, .masked = -1, .n = units, .sweep1 = sw1, .sweep2 = sw2,
                                     .raw_counts = true, .geo = &b->geo, .source = path, .target = target,
                                     .machine = machine,
                                     .page_size = b->target_pages[0] ? b->target_pages : "unknown",
                                     .map_seed = o->seed};
    status = llc_fit_cmd_run(o->cmd, &fo, &in, sel);
    free(sw1);
out:
    llc_map_result_free(r);
    free(x);
    free(excl);
    return status;
}

static int choose(const struct map_opts *o, struct sample_run *s, struct llc_map_backend *b,
                  volatile sig_atomic_t *stop, const char *machine, const char *target,
                  struct llc_fit_selection **own, const struct llc_fit_selection **sel, uint32_t **units_out,
                  size_t *n_out)
{
    const uint32_t units = llc_map_units(&b->geo);
    size_t n = 0, *pick = NULL;
    int status = LLC_EXIT_OK;
    *sel = NULL;
    switch (s->method) {
    case SAMPLE_GAUSSIAN:
        if (s->fitfile) {
            if (s->fitfile->units != units)
                return llc_cli_fail(o->cmd, "%s: llc.sets: the fit is for %u sets, this LLC has %u", s->fitfile->path,
                                    s->fitfile->units, units);
            /* The simulator's placement is its seed's: the same target and
             * seed place every page where the profile's map had it. */
            const struct llc_fitfile *ff = s->fitfile;
            const bool same_sim = !strcmp(b->name, "sim") && ff->map_seed_known && ff->map_seed == o->seed &&
                                  !strcmp(ff->target, target) && !strncmp(ff->machine, machine, strlen(ff->machine));
            if (same_sim) {
                if (!o->quiet)
                    fprintf(stderr, "llcprobe: %s: %s: same target and simulator seed %llu as its map: the same "
                                    "page placement\n",
                            o->cmd, ff->path, (unsigned long long)o->seed);
            } else if (strcmp(ff->page_size, "2M") != 0) {
                char seeds[96] = "";
                if (!strcmp(b->name, "sim") && ff->map_seed_known)
                    snprintf(seeds, sizeof(seeds), "; its map used simulator seed %llu, this run %llu",
                             (unsigned long long)ff->map_seed, (unsigned long long)o->seed);
                llc_cli_warn(o->quiet, "%s comes from another run of the target (page size %s%s): with small pages "
                                       "its sets may not stand for the same strata here (spec §5a)",
                             ff->path, ff->page_size, seeds);
            }
            *sel = s->fitfile->sel;
        } else {
            if ((status = in_run_fit(o, s, b, stop, machine, target, own)) != 0)
                return status;
            *sel = *own;
        }
        n = (*sel)->n;
        pick = malloc(n * sizeof(*pick));
        if (pick)
            memcpy(pick, (*sel)->unit, n * sizeof(*pick));
        break;
    case SAMPLE_RANDOM:
    case SAMPLE_CONTINUOUS:
        n = s->count;
        if (n > units)
            return llc_cli_usage(o->cmd, "%u sets asked for, the LLC has %u", s->count, units);
        pick = malloc(n * sizeof(*pick));
        if (pick && (s->method == SAMPLE_RANDOM
                         ? llc_fit_random_units(units, NULL, n, o->seed, pick, s->err, sizeof(s->err))
                         : llc_fit_continuous_units(units, NULL, s->start % units, n, pick, s->err,
                                                    sizeof(s->err))) < 0)
            status = llc_cli_fail(o->cmd, "%s", s->err);
        break;
    case SAMPLE_GLOBAL:
        n = units;
        pick = malloc(n * sizeof(*pick));
        for (size_t i = 0; pick && i < n; i++)
            pick[i] = i;
        break;
    case SAMPLE_SETS:
        n = s->n_sets;
        pick = malloc(n * sizeof(*pick));
        for (size_t i = 0; pick && i < n; i++) {
            if (s->sets[i] >= units) {
                free(pick);
                return llc_cli_fail(o->cmd, "--sets: set %u is out of range (the LLC has %u sets)", s->sets[i],
                                    units);
            }
            pick[i] = s->sets[i];
        }
        break;
    }
    uint32_t *u = pick ? malloc((n ? n : 1) * sizeof(*u)) : NULL;
    if (!u) {
        free(pick);
        return status ? status : llc_cli_fail(o->cmd, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        u[i] = (uint32_t)pick[i];
    free(pick);
    *units_out = u;
    *n_out = n;
    return status;
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static int write_outputs(const struct map_opts *o, const struct sample_run *s, const struct llc_map_backend *b,
                         const struct llc_fit_selection *sel,
                         const char *machine, const char *target, const uint32_t *units, size_t n,
                         const struct interval *iv, size_t count, const struct interval *tot, const double *occ_raw,
                         const double *occ_lines, double search_cycle, unsigned target_runs, char *err,
                         size_t errlen)
{
    char path[4200];
    json_t *doc = llc_json_doc_new("llcprobe-sample", 1), *sets = json_array(), *series = json_array();
    for (size_t i = 0; sets && i < n; i++)
        json_array_append_new(sets, json_integer(units[i]));
    const double llc_lines = (double)llc_map_units(&b->geo) * b->geo.llc_ways;
    for (size_t i = 0; series && i <= count; i++) {
        const struct interval *v = i < count ? &iv[i] : tot;
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
    const char *headline = s->method == SAMPLE_GAUSSIAN && sel ? headline_field(sel->estimator) : "scale_up";
    int bad = !doc || !sets || !series ||
              json_object_update_new(
                  doc, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:f, s:f, s:i, s:o, s:o, s:s?, s:s?, s:o}", "machine",
                                 machine, "target", target, "backend", b->name, "method",
                                 method_names[s->method], "headline", headline, "seed", (json_int_t)o->seed,
                                 "rate", o->rate, "interval_s", s->interval, "sets_total",
                                 (int)llc_map_units(&b->geo), "sets", sets, "intervals", series, "calibration",
                                 s->have_calib ? s->calib_path : NULL, "occupancy_estimator",
                                 s->have_calib ? "walk-length search, calibrated" : NULL,
                                 "calibration_curve", json_null())) < 0;
    /* How many runs of a replayed simulated trace the whole command took
     * (map, intervals and search); null where the target is not replayed. */
    if (!bad)
        bad = json_object_set_new(doc, "target_runs", target_runs ? json_integer(target_runs) : json_null()) < 0;
    if (bad) {
        json_decref(doc);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    if (s->have_calib) {
        /* What the occupancy came from: the calibration's machine and
         * search, and each sampled set's raw estimate and lines. */
        json_t *c = json_array(), *raw = json_array(), *held = json_array();
        for (size_t k = 0; c && k < s->calib.nk; k++)
            json_array_append_new(c, json_real(s->calib.search_estimate[k]));
        for (size_t i = 0; raw && held && i < n; i++) {
            json_array_append_new(raw, json_real(occ_raw[i]));
            json_array_append_new(held, json_real(occ_lines[i]));
        }
        json_object_set_new(doc, "calibration_curve", c);
        json_object_set_new(doc, "occupancy_search",
                            json_pack("{s:s, s:f, s:i, s:f, s:o, s:o, s:s?}", "calibration_machine", s->calib.machine,
                                      "cycle_s", search_cycle, "cycles", (int)s->calib.search_cycles,
                                      "threshold", s->calib.search_threshold, "raw_estimate", raw, "lines", held,
                                      "slow_walk_check", b->slow_walk_check[0] ? b->slow_walk_check : NULL));
    }
    snprintf(path, sizeof(path), "%s.sample.json", o->out_prefix);
    int rc = llc_json_write_atomic(path, doc, err, errlen);
    json_decref(doc);
    if (rc < 0)
        return rc;
    snprintf(path, sizeof(path), "%s.sample.csv", o->out_prefix);
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
    const struct interval *iv;
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

int llc_sample_stage(const struct map_opts *o, struct llc_map_backend *b, const char *machine, const char *target,
                     double rate, volatile sig_atomic_t *stop, bool want_truth,
                     int (*restart)(void *ctx, char *err, size_t errlen), void *restart_ctx)
{
    (void)rate;
    (void)restart;
    (void)restart_ctx;
    struct sample_run *s = o->stage_ctx;
    struct llc_fit_selection *own = NULL;
    const struct llc_fit_selection *sel = NULL;
    uint32_t *units = NULL;
    size_t n = 0, count = 0;
    const uint32_t all = llc_map_units(&b->geo);
    struct interval *iv = calloc(s->intervals, sizeof(*iv));
    double *x = malloc(all * sizeof(double)), *lines = malloc(all * sizeof(double)),
           *occ = malloc(all * sizeof(double)), *occ_raw = malloc(all * sizeof(double));
    uint64_t *tmiss = calloc(2 * (size_t)all, sizeof(uint64_t));
    struct llc_map_result *r = NULL;
    double search_cycle = NAN;
    int status = LLC_EXIT_FAIL;
    if (!iv || !x || !lines || !occ || !occ_raw || !tmiss) {
        llc_cli_fail(o->cmd, "out of memory");
        goto out;
    }
    if ((status = choose(o, s, b, stop, machine, target, &own, &sel, &units, &n)) != 0)
        goto out;
    status = LLC_EXIT_FAIL;
    if (s->have_calib) {
        /* The search's curve belongs to one geometry; the search runs at
         * the calibration's own pace, whatever --rate the sampling uses. */
        if (s->calib.units != all || s->calib.ways != b->geo.llc_ways) {
            llc_cli_fail(o->cmd, "--calibration: the calibration is for %u sets x %u ways, this LLC has %u x %u",
                         s->calib.units, s->calib.ways, all, b->geo.llc_ways);
            goto out;
        }
    }
    const bool sim_truth = want_truth && llc_map_sim_truth(b, NULL, tmiss, NULL) == 0;
    if (sim_truth)
        llc_map_sim_truth(b, NULL, NULL, tmiss);
    if (sim_truth)
        llc_map_sim_truth_reset(b);
    const struct llc_map_plan plan = {.mode = s->method == SAMPLE_GLOBAL && b->all_at_once ? LLC_MAP_GLOBAL
                                                                                           : LLC_MAP_SETS,
                                      .group = (uint32_t)n, .dwell_s = s->interval, .sweeps = 1, .sets = units,
                                      .n_sets = n, .seed = o->seed, .stop = stop};
    if (!o->quiet)
        fprintf(stderr, "llcprobe: sample: %s, %zu sets, %.3g probe accesses per set per second, %u intervals of %g s\n",
                method_names[s->method], n, o->rate / (double)n, s->intervals, s->interval);
    const double start = 0;
    struct interval tot = {.t0 = start, .occ_lines = 0, .true_occ_lines = 0, .true_target_misses = 0};
    for (unsigned i = 0; i < s->intervals && !(stop && *stop); i++) {
        llc_map_result_free(r);
        r = NULL;
        if (llc_map_run(b, &plan, &r, s->err, sizeof(s->err)) < 0) {
            llc_cli_fail(o->cmd, "%s", s->err);
            goto out;
        }
        if (!r->complete && r->sweeps == 0)
            break; /* the target ended (or a signal came) before this interval */
        struct interval *v = &iv[count];
        v->t0 = start + s->interval * i;
        v->t1 = v->t0 + s->interval;
        v->sampled = 0;
        for (size_t k = 0; k < n; k++) {
            x[k] = (double)r->misses[units[k]];
            v->sampled += x[k];
            v->probe_accesses += (double)r->accesses[units[k]];
        }
        llc_fit_scale_up(x, n, all, &v->scale_up, NULL, 0);
        v->stratified = v->ratio = v->stratified_ratio = v->headline = NAN;
        v->occ_lines = NAN;
        struct llc_fit_estimates est;
        if (sel && llc_fit_estimate(sel, x, &est, s->err, sizeof(s->err)) == 0) {
            v->stratified = est.stratified;
            v->stratified_ratio = est.stratified_ratio;
            v->ratio = est.ratio;
            v->headline = est.headline;
        }
        if (s->method == SAMPLE_GLOBAL)
            v->stratified = v->ratio = v->stratified_ratio = v->scale_up;
        v->true_occ_lines = v->true_target_misses = NAN;
        if (sim_truth) {
            llc_map_sim_truth(b, occ, NULL, tmiss + all);
            v->true_occ_lines = v->true_target_misses = 0;
            for (uint32_t u = 0; u < all; u++) {
                v->true_occ_lines += occ[u];
                v->true_target_misses += (double)(tmiss[all + u] - tmiss[u]);
                tmiss[u] = tmiss[all + u];
            }
            llc_map_sim_truth_reset(b);
        }
        tot.t1 = v->t1;
        tot.sampled += v->sampled;
        tot.probe_accesses += v->probe_accesses;
        tot.scale_up += v->scale_up;
        tot.stratified += v->stratified;
        tot.stratified_ratio += v->stratified_ratio;
        tot.headline += v->headline;
        tot.ratio += v->ratio;
        tot.occ_lines += v->occ_lines;
        tot.true_occ_lines += v->true_occ_lines;
        tot.true_target_misses += v->true_target_misses;
        count++;
        if (!o->quiet)
            printf("interval %3u  %.4g-%.4g s  scale-up %.6g  stratified %.6g  stratified-ratio %.6g  ratio %.6g\n", i,
                   v->t0, v->t1, v->scale_up, v->stratified, v->stratified_ratio, v->ratio);
        if (!r->complete)
            break;
    }
    if (count == 0) {
        llc_cli_fail(o->cmd, "no interval was measured (the target ended or a signal came first)");
        goto out;
    }
    /* Occupancy is a level, not a count: its total is the mean over
     * intervals, or the occupancy search's figures when it runs. */
    tot.occ_lines = NAN;
    tot.true_occ_lines /= (double)count;
    if (s->have_calib) {
        if (sim_truth)
            llc_map_sim_truth_reset(b);
        if (!o->quiet)
            fprintf(stderr, "llcprobe: sample: occupancy: walk-length search in %zu sets (W probe accesses per set "
                            "every %g s, %u measured cycles per step, miss-ratio threshold %g)\n",
                    n, s->calib.search_cycle_s, s->calib.search_cycles, s->calib.search_threshold);
        /* The search runs at the calibration's own cycle: a simulated
         * trace replays (sample.c), so it no longer has to fit what is
         * left of one run. */
        const struct llc_occ_params op = {.cycle_s = s->calib.search_cycle_s, .cycles = s->calib.search_cycles,
                                          .threshold = s->calib.search_threshold};
        search_cycle = op.cycle_s;
        if (llc_occ_search(b, units, n, &op, stop, occ_raw, s->err, sizeof(s->err)) < 0) {
            llc_cli_fail(o->cmd, "occupancy: %s", s->err);
            goto out;
        }
        for (size_t k = 0; k < n; k++)
            lines[k] = llc_calib_lines(&s->calib, occ_raw[k]);
        struct llc_fit_estimates est;
        if (sel && llc_fit_estimate(sel, lines, &est, s->err, sizeof(s->err)) == 0)
            tot.occ_lines = est.stratified;
        else
            llc_fit_scale_up(lines, n, all, &tot.occ_lines, NULL, 0);
        if (sim_truth) {
            llc_map_sim_truth(b, occ, NULL, NULL);
            tot.true_occ_lines = 0;
            for (uint32_t u = 0; u < all; u++)
                tot.true_occ_lines += occ[u];
        }
    }
    const unsigned runs = o->repeat && !strcmp(b->name, "sim") ? llc_map_sim_target_runs(b) : 0;
    if (write_outputs(o, s, b, sel, machine, target, units, n, iv, count, &tot, occ_raw, lines, search_cycle, runs, s->err,
                      sizeof(s->err)) < 0) {
        llc_cli_fail(o->cmd, "%s", s->err);
        goto out;
    }
    char png[4200], title[512];
    snprintf(png, sizeof(png), "%s.sample.png", o->out_prefix);
    snprintf(title, sizeof(title), "%s: %s, %zu sets", target, method_names[s->method], n);
    struct plot_ctx pc = {.iv = iv, .count = count, .gaussian = sel != NULL, .title = title};
    if (llc_plot_png(NULL, png, 1000, 600, emit_series, &pc, s->err, sizeof(s->err)) < 0)
        llc_cli_warn(o->quiet, "%s: no plot: %s", png, s->err);
    const double llc_lines = (double)all * b->geo.llc_ways;
    printf("sample: %s %zu sets, %zu intervals of %g s: whole-cache probe misses %s %.6g (scale-up %.6g, "
           "stratified %.6g, stratified-ratio %.6g, ratio %.6g)",
           method_names[s->method], n, count, s->interval, sel ? llc_fit_estimator_name(sel->estimator) : "scale-up",
           sel ? tot.headline : tot.scale_up, tot.scale_up, tot.stratified, tot.stratified_ratio, tot.ratio);
    if (s->have_calib)
        printf("; occupancy %.0f lines = %.0f KiB = %.2f%% of the LLC (walk-length search, calibration %s)",
               tot.occ_lines, tot.occ_lines * b->geo.line_size / 1024, 100 * tot.occ_lines / llc_lines,
               s->calib_path);
    if (sim_truth)
        printf("; true occupancy %.0f lines = %.2f%% of the LLC", tot.true_occ_lines,
               100 * tot.true_occ_lines / llc_lines);
    if (runs)
        printf("; the simulated trace ran %u time%s", runs, runs == 1 ? "" : "s");
    printf("\nwrote %s.sample.json, .sample.csv, .sample.png\n", o->out_prefix);
    status = stop && *stop ? LLC_EXIT_FAIL : LLC_EXIT_OK;
out:
    llc_map_result_free(r);
    llc_fit_selection_destroy(own);
    free(units);
    free(iv);
    free(x);
    free(lines);
    free(occ);
    free(occ_raw);
    free(tmiss);
    return status;
}
