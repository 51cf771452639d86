/* Outputs of `llcprobe mrc`: PREFIX.mrc.json (format "llcprobe-mrc"),
 * PREFIX.mrc.csv (one row per size, columns per model) and the PNG
 * working-set graph drawn by gnuplot from the CSV. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llcprobe/common.h"
#include "mrc/mrc.h"
#include "util/atomic_file.h"
#include "util/json.h"
#include "util/cli.h"
#include "util/plot.h"

const char *llc_mrc_method_name(enum llc_statmodel_method m)
{
    return m == LLC_STATMODEL_STATSTACK ? "statstack" : "statcache";
}

static json_t *series_json(const struct llc_mrc_result *r, const struct llc_mrc_series *s)
{
    json_t *pts = json_array();
    if (!pts)
        return NULL;
    for (size_t k = 0; k < r->n; k++) {
        json_t *p = json_pack("{s:f,s:f,s:f,s:f}", "lines", s->points[k].lines, "bytes",
                              s->points[k].bytes, "miss_ratio", s->points[k].r_total,
                              "miss_ratio_no_cold", s->points[k].r_capacity);
        if (p && s->band_lo) {
            json_object_set_new(p, "band_lo", json_real(s->band_lo[k]));
            json_object_set_new(p, "band_hi", json_real(s->band_hi[k]));
        }
        if (!p || json_array_append_new(pts, p) < 0) {
            json_decref(pts);
            return NULL;
        }
    }
    return json_pack("{s:s,s:o}", "model", llc_mrc_method_name(s->method), "points", pts);
}

static json_t *points_json(const struct llc_mrc_result *r, enum llc_statmodel_method m,
                           const struct llc_statmodel_point *pts)
{
    json_t *arr = json_array();
    if (!arr)
        return NULL;
    for (size_t k = 0; k < r->n; k++) {
        json_t *p = json_pack("{s:f,s:f,s:f}", "lines", pts[k].lines, "miss_ratio", pts[k].r_total,
                              "miss_ratio_no_cold", pts[k].r_capacity);
        if (!p || json_array_append_new(arr, p) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return json_pack("{s:s,s:o}", "model", llc_mrc_method_name(m), "points", arr);
}

/* Each series' points of a mean or mixture, as an array of models. */
static json_t *means_json(const struct llc_mrc_result *r, struct llc_statmodel_point *const *pts)
{
    json_t *arr = json_array();
    for (unsigned i = 0; arr && i < r->n_series; i++) {
        json_t *s = points_json(r, r->series[i].method, pts[i]);
        if (!s || json_array_append_new(arr, s) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* One object per group: `key` (slot or phase) and its curves. */
static json_t *groups_json(const struct llc_mrc_result *r, const struct llc_mrc_groupset *gs,
                           const char *key, bool phases)
{
    json_t *arr = json_array();
    if (!arr)
        return NULL;
    for (size_t j = 0; j < gs->n; j++) {
        const struct llc_mrc_group *g = &gs->groups[j];
        json_t *models = json_array();
        json_t *o =
            models ? json_pack("{s:i,s:f,s:f,s:f,s:o}", key, g->id, "references", g->refs,
                               "samples", g->samples, "dangling", g->dangling, "models", models)
                   : NULL;
        if (!o || json_array_append_new(arr, o) < 0)
            goto fail;
        if (phases) {
            json_object_set_new(o, "windows", json_integer((json_int_t)g->windows));
            json_object_set_new(o, "pooled", json_boolean(g->pooled));
        }
        for (unsigned i = 0; i < r->n_series && g->points[i]; i++) {
            json_t *s = points_json(r, r->series[i].method, g->points[i]);
            if (!s || json_array_append_new(models, s) < 0)
                goto fail;
        }
    }
    return arr;
fail:
    json_decref(arr);
    return NULL;
}

/* The "time_slots" member: the docs/METHODS.md §7.5 mean and each slot's curves. */
static json_t *slots_json(const struct llc_mrc_result *r)
{
    json_t *mean = means_json(r, r->slots.mean);
    json_t *slots = groups_json(r, &r->slots, "slot", false);
    if (!mean || !slots) {
        json_decref(mean);
        json_decref(slots);
        return NULL;
    }
    return json_pack("{s:I,s:I,s:I,s:o,s:o}", "slot_references", (json_int_t)r->slot_refs, "slots",
                     (json_int_t)r->slots.n, "skipped_without_samples",
                     (json_int_t)r->slots.skipped, "mean", mean, "per_slot", slots);
}

static const char *unit_name(enum llc_mrc_window_unit u)
{
    return u == LLC_MRC_WINDOW_INSTRUCTIONS ? "instructions" : "references";
}

/* The "phases" member: windows, their labels, each phase's curves; the
 * mixture is the document's "models". */
static json_t *phases_json(const struct llc_mrc_result *r)
{
    const struct llc_mrc_phase_run *pr = r->phase_run;
    json_t *labels = json_array();
    json_t *per_phase = groups_json(r, &r->phases, "phase", true);
    json_t *o = NULL;
    if (!labels || !per_phase)
        goto fail;
    for (size_t i = 0; i < pr->n_windows; i++) {
        const struct llc_mrc_phase_window *w = &pr->windows[i];
        json_t *x = json_pack("{s:i,s:f,s:f}", "phase", w->phase, "references", w->refs, "samples",
                              w->samples);
        if (!x || json_array_append_new(labels, x) < 0)
            goto fail;
    }
    o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:o,s:o}", "window_unit", unit_name(pr->unit), "window",
                  (json_int_t)r->phase_window, "windows", (json_int_t)pr->n_windows, "phases",
                  (json_int_t)pr->summary.phases, "unclassified_windows",
                  (json_int_t)pr->summary.unclassified, "transition_windows",
                  (json_int_t)pr->summary.transition, "per_phase", per_phase, "per_window", labels);
    return o;
fail:
    json_decref(labels);
    json_decref(per_phase);
    return NULL;
}

static int write_json(const char *path, const struct llc_mrc_result *r, char *err, size_t errlen)
{
    json_t *doc = llc_json_doc_new("llcprobe-mrc", 1);
    json_t *models = json_array();
    int rc = -ENOMEM;
    if (!doc || !models)
        goto out;
    json_object_set_new(doc, "source", json_string(r->source));
    json_object_set_new(doc, "input", json_string(r->input));
    json_object_set_new(doc, "rate", json_real(r->rate));
    json_object_set_new(doc, "seed", json_integer((json_int_t)r->seed));
    json_object_set_new(doc, "references", json_integer((json_int_t)r->refs));
    json_object_set_new(doc, "samples", json_real(r->samples));
    json_object_set_new(doc, "dangling", json_real(r->dangling));
    json_object_set_new(doc, "line_bytes", json_integer(64));
    json_object_set_new(doc, "cold",
                        json_string(r->cold == LLC_STATMODEL_COLD_IGNORE ? "ignore" : "count"));
    json_object_set_new(doc, "band_replicates", json_integer(r->band_replicates));
    json_object_set_new(doc, "distinct_lines",
                        r->distinct_lines ? json_integer((json_int_t)r->distinct_lines)
                                          : json_null());
    for (unsigned i = 0; i < r->n_series; i++) {
        json_t *s = series_json(r, &r->series[i]);
        if (!s || json_array_append_new(models, s) < 0)
            goto out;
    }
    json_object_set(doc, "models", models);
    json_object_set_new(doc, "curve", json_string(r->phase_run ? "phase mixture" : "pooled"));
    if (r->slots.n) {
        json_t *ts = slots_json(r);
        if (!ts)
            goto out;
        json_object_set_new(doc, "time_slots", ts);
    }
    if (r->phase_run) {
        json_t *ph = phases_json(r), *pooled = means_json(r, r->pooled);
        if (!ph || !pooled) {
            json_decref(ph);
            json_decref(pooled);
            goto out;
        }
        json_object_set_new(doc, "phases", ph);
        json_object_set_new(doc, "pooled_models", pooled);
    }
    rc = llc_json_write_atomic(path, doc, err, errlen);
    goto done;
out:
    rc = llc_errf(err, errlen, rc, "%s: out of memory building the JSON", path);
done:
    json_decref(models);
    json_decref(doc);
    return rc;
}

/* Empty field for a missing band, so that gnuplot and spreadsheets skip it. */
static void csv_value(FILE *f, const double *v, size_t k)
{
    if (v)
        fprintf(f, ",%.9g", v[k]);
    else
        fputc(',', f);
}

static int write_csv(const char *path, const struct llc_mrc_result *r, char *err, size_t errlen)
{
    struct llc_afile *af = NULL;
    int rc = llc_afile_open(path, &af, err, errlen);
    if (rc < 0)
        return rc;
    FILE *f = llc_afile_stream(af);
    fputs("bytes,lines", f);
    for (unsigned i = 0; i < r->n_series; i++) {
        const char *m = llc_mrc_method_name(r->series[i].method);
        fprintf(f, ",%s_miss_ratio,%s_miss_ratio_no_cold,%s_band_lo,%s_band_hi", m, m, m, m);
    }
    fputc('\n', f);
    for (size_t k = 0; k < r->n; k++) {
        fprintf(f, "%.0f,%.0f", r->lines[k] * 64, r->lines[k]);
        for (unsigned i = 0; i < r->n_series; i++) {
            const struct llc_mrc_series *s = &r->series[i];
            fprintf(f, ",%.9g,%.9g", s->points[k].r_total, s->points[k].r_capacity);
            csv_value(f, s->band_lo, k);
            csv_value(f, s->band_hi, k);
        }
        fputc('\n', f);
    }
    return llc_afile_commit(af, err, errlen);
}

static void group_row(FILE *f, const struct llc_mrc_result *r, const char *label, bool phases,
                      size_t windows, double refs, double samples,
                      struct llc_statmodel_point *const *pts, size_t k)
{
    fprintf(f, "%s", label);
    if (phases)
        fprintf(f, ",%zu", windows);
    fprintf(f, ",%.0f,%.0f,%.0f,%.0f", refs, samples, r->lines[k] * 64, r->lines[k]);
    for (unsigned i = 0; i < r->n_series; i++)
        fprintf(f, ",%.9g,%.9g", pts[i][k].r_total, pts[i][k].r_capacity);
    fputc('\n', f);
}

/* One row per group and size, then the mean (slots) or mixture (phases). */
static int write_groups_csv(const char *path, const struct llc_mrc_result *r,
                            const struct llc_mrc_groupset *gs, bool phases, char *err,
                            size_t errlen)
{
    struct llc_afile *af = NULL;
    int rc = llc_afile_open(path, &af, err, errlen);
    if (rc < 0)
        return rc;
    FILE *f = llc_afile_stream(af);
    fputs(phases ? "phase,windows" : "slot", f);
    fputs(",references,samples,bytes,lines", f);
    for (unsigned i = 0; i < r->n_series; i++) {
        const char *m = llc_mrc_method_name(r->series[i].method);
        fprintf(f, ",%s_miss_ratio,%s_miss_ratio_no_cold", m, m);
    }
    fputc('\n', f);
    double refs = 0, samples = 0;
    size_t windows = 0;
    for (size_t j = 0; j < gs->n; j++) {
        const struct llc_mrc_group *g = &gs->groups[j];
        refs += g->refs;
        windows += g->windows;
        /* A pooled group's histogram holds every sample: not counted twice. */
        samples += g->pooled ? 0 : g->samples;
        if (!g->points[0])
            continue; /* no samples: no curve (counted in the JSON) */
        char id[16];
        snprintf(id, sizeof id, "%d", g->id);
        for (size_t k = 0; k < r->n; k++)
            group_row(f, r, id, phases, g->windows, g->refs, g->samples, g->points, k);
    }
    if (phases)
        samples = r->samples;
    for (size_t k = 0; k < r->n; k++)
        group_row(f, r, phases ? "mixture" : "mean", phases, windows, refs, samples, gs->mean, k);
    return llc_afile_commit(af, err, errlen);
}

int llc_mrc_write_outputs(const char *prefix, const struct llc_mrc_result *r, char *err,
                          size_t errlen)
{
    const size_t len = strlen(prefix) + 16;
    char *path = malloc(len);
    if (!path)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    snprintf(path, len, "%s.mrc.json", prefix);
    int rc = write_json(path, r, err, errlen);
    if (rc == 0) {
        snprintf(path, len, "%s.mrc.csv", prefix);
        rc = write_csv(path, r, err, errlen);
    }
    if (rc == 0 && r->slots.n) {
        snprintf(path, len, "%s.slots.csv", prefix);
        rc = write_groups_csv(path, r, &r->slots, false, err, errlen);
    }
    if (rc == 0 && r->phase_run) {
        snprintf(path, len, "%s.phases.csv", prefix);
        rc = write_groups_csv(path, r, &r->phases, true, err, errlen);
    }
    free(path);
    return rc;
}

struct mrc_plot_ctx {
    const struct llc_mrc_result *r;
    const char *csv, *phases_csv;
};

/* More thin lines than this would bury the mixture. */
#define PLOTTED_PHASES 6

/* Per-phase curves of the first model, the phases with the most references
 * first (a phase modelled with every sample says nothing of its own). */
static void emit_phases(const struct mrc_plot_ctx *c, FILE *gp)
{
    const struct llc_mrc_groupset *gs = &c->r->phases;
    bool shown[64] = {false};
    const size_t n = gs->n < LLC_ARRAY_LEN(shown) ? gs->n : LLC_ARRAY_LEN(shown);
    for (unsigned k = 0; k < PLOTTED_PHASES; k++) {
        size_t best = n;
        for (size_t j = 0; j < n; j++)
            if (!shown[j] && gs->groups[j].points[0] && !gs->groups[j].pooled &&
                (best == n || gs->groups[j].refs > gs->groups[best].refs))
                best = j;
        if (best == n)
            return;
        shown[best] = true;
        const struct llc_mrc_group *g = &gs->groups[best];
        fputs(", ", gp);
        llc_plot_quote(gp, c->phases_csv);
        fprintf(gp,
                " skip 1 using 5:(strcol(1) eq '%d' ? $7 : 1/0) with lines lw 1 lc %u "
                "title '%s, phase %d (%.0f%% of references)'",
                g->id, k + 3, llc_mrc_method_name(c->r->series[0].method), g->id,
                100.0 * g->refs / (double)(c->r->refs ? c->r->refs : 1));
    }
}

static void emit_mrc(void *ctx, FILE *gp)
{
    const struct mrc_plot_ctx *c = ctx;
    const struct llc_mrc_result *r = c->r;
    fprintf(gp, "set datafile separator ','\n"
                "set logscale x 2\n"
                "set format x '%%.0b%%B'\n"
                "set xlabel 'cache size (bytes, log scale)'\n"
                "set ylabel 'miss ratio (misses per reference)'\n"
                "set yrange [0:*]\n"
                "set grid\n"
                "set key top right\n"
                "set title ");
    llc_plot_quote(gp, r->input);
    fputs("\nplot ", gp);
    for (unsigned i = 0; i < r->n_series; i++) {
        const unsigned col = 3 + 4 * i;
        const char *m = llc_mrc_method_name(r->series[i].method);
        if (i)
            fputs(", ", gp);
        if (r->series[i].band_lo) {
            llc_plot_quote(gp, c->csv);
            fprintf(gp,
                    " skip 1 using 1:%u:%u with filledcurves fs transparent solid 0.25 "
                    "lc %u title '%s 90%% band', ",
                    col + 2, col + 3, i + 1, m);
        }
        llc_plot_quote(gp, c->csv);
        fprintf(gp, " skip 1 using 1:%u with lines lw 2 lc %u title '%s%s', ", col, i + 1, m,
                r->phase_run ? " (phase mixture)" : "");
        llc_plot_quote(gp, c->csv);
        fprintf(gp, " skip 1 using 1:%u with lines dt 2 lc %u title '%s without cold misses'",
                col + 1, i + 1, m);
    }
    if (r->phase_run)
        emit_phases(c, gp);
    fputc('\n', gp);
}

int llc_mrc_plot(const char *prefix, const struct llc_mrc_result *r, const char *gnuplot, char *err,
                 size_t errlen)
{
    const size_t len = strlen(prefix) + 16;
    char *csv = malloc(len), *png = malloc(len), *phases = malloc(len);
    int rc;
    if (!csv || !png || !phases) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    snprintf(csv, len, "%s.mrc.csv", prefix);
    snprintf(png, len, "%s.mrc.png", prefix);
    snprintf(phases, len, "%s.phases.csv", prefix);
    struct mrc_plot_ctx ctx = {r, csv, phases};
    rc = llc_plot_png(gnuplot, png, 900, 600, emit_mrc, &ctx, err, errlen);
out:
    free(csv);
    free(png);
    free(phases);
    return rc;
}

void llc_mrc_print_bands(const struct llc_mrc_result *r)
{
    enum { SHOWN = 8 };
    for (unsigned i = 0; i < r->n_series; i++) {
        const struct llc_mrc_series *s = &r->series[i];
        if (!s->band_lo || r->n == 0)
            continue;
        printf("band %s (5-95%%, %u replicates):", llc_mrc_method_name(s->method),
               r->band_replicates);
        const size_t shown = r->n < SHOWN ? r->n : SHOWN;
        for (size_t j = 0; j < shown; j++) {
            const size_t k = shown > 1 ? j * (r->n - 1) / (shown - 1) : 0;
            char size[32];
            printf(" %s %.4g-%.4g",
                   llc_format_size((uint64_t)llround(r->lines[k] * 64), size, sizeof size),
                   s->band_lo[k], s->band_hi[k]);
        }
        putchar('\n');
    }
}
