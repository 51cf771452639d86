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
        json_t *p = json_pack("{s:f,s:f,s:f}", "lines", pts[k].lines, "miss_ratio",
                              pts[k].r_total, "miss_ratio_no_cold", pts[k].r_capacity);
        if (!p || json_array_append_new(arr, p) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return json_pack("{s:s,s:o}", "model", llc_mrc_method_name(m), "points", arr);
}

/* The "time_slots" member: the §4 mean and each slot's curves. */
static json_t *slots_json(const struct llc_mrc_result *r)
{
    json_t *mean = json_array(), *slots = json_array();
    if (!mean || !slots)
        goto fail;
    for (unsigned i = 0; i < r->n_series; i++) {
        json_t *s = points_json(r, r->series[i].method, r->slot_mean[i]);
        if (!s || json_array_append_new(mean, s) < 0)
            goto fail;
    }
    for (size_t j = 0; j < r->n_slots; j++) {
        const struct llc_mrc_slot *sl = &r->slots[j];
        json_t *models = json_array();
        json_t *o = models ? json_pack("{s:i,s:f,s:f,s:f,s:o}", "slot", sl->id, "references",
                                       sl->refs, "samples", sl->samples, "dangling",
                                       sl->dangling, "models", models)
                           : NULL;
        if (!o || json_array_append_new(slots, o) < 0)
            goto fail;
        for (unsigned i = 0; i < r->n_series && sl->points[i]; i++) {
            json_t *s = points_json(r, r->series[i].method, sl->points[i]);
            if (!s || json_array_append_new(models, s) < 0)
                goto fail;
        }
    }
    return json_pack("{s:I,s:I,s:I,s:o,s:o}", "slot_references", (json_int_t)r->slot_refs,
                     "slots", (json_int_t)r->n_slots, "skipped_without_samples",
                     (json_int_t)r->slots_skipped, "mean", mean, "per_slot", slots);
fail:
    json_decref(mean);
    json_decref(slots);
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
    json_object_set_new(doc, "cold", json_string(r->cold == LLC_STATMODEL_COLD_IGNORE ? "ignore"
                                                                                       : "count"));
    json_object_set_new(doc, "band_replicates", json_integer(r->band_replicates));
    for (unsigned i = 0; i < r->n_series; i++) {
        json_t *s = series_json(r, &r->series[i]);
        if (!s || json_array_append_new(models, s) < 0)
            goto out;
    }
    json_object_set(doc, "models", models);
    if (r->n_slots) {
        json_t *ts = slots_json(r);
        if (!ts)
            goto out;
        json_object_set_new(doc, "time_slots", ts);
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

static void slot_row(FILE *f, const struct llc_mrc_result *r, const char *slot, double refs,
                     double samples, struct llc_statmodel_point *const *pts, size_t k)
{
    fprintf(f, "%s,%.0f,%.0f,%.0f,%.0f", slot, refs, samples, r->lines[k] * 64, r->lines[k]);
    for (unsigned i = 0; i < r->n_series; i++)
        fprintf(f, ",%.9g,%.9g", pts[i][k].r_total, pts[i][k].r_capacity);
    fputc('\n', f);
}

static int write_slots_csv(const char *path, const struct llc_mrc_result *r, char *err,
                           size_t errlen)
{
    struct llc_afile *af = NULL;
    int rc = llc_afile_open(path, &af, err, errlen);
    if (rc < 0)
        return rc;
    FILE *f = llc_afile_stream(af);
    fputs("slot,references,samples,bytes,lines", f);
    for (unsigned i = 0; i < r->n_series; i++) {
        const char *m = llc_mrc_method_name(r->series[i].method);
        fprintf(f, ",%s_miss_ratio,%s_miss_ratio_no_cold", m, m);
    }
    fputc('\n', f);
    double refs = 0, samples = 0;
    for (size_t j = 0; j < r->n_slots; j++) {
        const struct llc_mrc_slot *sl = &r->slots[j];
        refs += sl->refs;
        samples += sl->samples;
        if (!sl->points[0])
            continue; /* no samples: no curve (counted in the JSON) */
        char id[16];
        snprintf(id, sizeof id, "%d", sl->id);
        for (size_t k = 0; k < r->n; k++)
            slot_row(f, r, id, sl->refs, sl->samples, sl->points, k);
    }
    for (size_t k = 0; k < r->n; k++)
        slot_row(f, r, "mean", refs, samples, r->slot_mean, k);
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
    if (rc == 0 && r->n_slots) {
        snprintf(path, len, "%s.slots.csv", prefix);
        rc = write_slots_csv(path, r, err, errlen);
    }
    free(path);
    return rc;
}

struct mrc_plot_ctx {
    const struct llc_mrc_result *r;
    const char *csv;
};

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
            fprintf(gp, " skip 1 using 1:%u:%u with filledcurves fs transparent solid 0.25 "
                        "lc %u title '%s 90%% band', ",
                    col + 2, col + 3, i + 1, m);
        }
        llc_plot_quote(gp, c->csv);
        fprintf(gp, " skip 1 using 1:%u with lines lw 2 lc %u title '%s', ", col, i + 1, m);
        llc_plot_quote(gp, c->csv);
        fprintf(gp, " skip 1 using 1:%u with lines dt 2 lc %u title '%s without cold misses'",
                col + 1, i + 1, m);
    }
    fputc('\n', gp);
}

int llc_mrc_plot(const char *prefix, const struct llc_mrc_result *r, const char *gnuplot,
                 char *err, size_t errlen)
{
    const size_t len = strlen(prefix) + 16;
    char *csv = malloc(len), *png = malloc(len);
    int rc;
    if (!csv || !png) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    snprintf(csv, len, "%s.mrc.csv", prefix);
    snprintf(png, len, "%s.mrc.png", prefix);
    struct mrc_plot_ctx ctx = {r, csv};
    rc = llc_plot_png(gnuplot, png, 900, 600, emit_mrc, &ctx, err, errlen);
out:
    free(csv);
    free(png);
    return rc;
}
