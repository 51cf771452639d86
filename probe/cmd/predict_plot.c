/* llcprobe predict: PNGs through gnuplot (util/plot.h), data inline:
 * stacked occupancy over time, miss ratio over time, and the phase-pair
 * heatmap of slowdown for the first two programs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/predict.h"
#include "llcprobe/common.h"
#include "util/plot.h"

static const char *const colours[PRED_MAX_PROGRAMS] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                       "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

struct ctx {
    const struct pred_prog *progs;
    size_t n;
    const struct pred_machine *m;
    const struct pred_result *r;
    const struct pred_opts *o;
};

static void title(FILE *gp, const char *what, const struct ctx *c)
{
    char t[256];
    snprintf(t, sizeof(t), "%s (%s, policy %s)", what, c->m->label,
             llc_contention_policy_name(c->o->policy));
    fprintf(gp, "set title ");
    llc_plot_quote(gp, t);
    fprintf(gp, "\nset xrange [0:%.9g]\n", c->r->run->total_s * 1e3);
}

/* One row at the start and one at the end of each segment (steps). */
static void emit_series(FILE *gp, const struct ctx *c, bool stacked)
{
    const struct llc_contention_run *run = c->r->run;
    const double scale = 100.0 / (double)c->m->lines;
    fprintf(gp, "$d << EOD\n");
    for (size_t k = 0; k < run->n_segments; k++) {
        const struct llc_contention_segment *g = &run->segments[k];
        const struct llc_contention_tuple_result *tr = &run->tuples[g->tuple];
        for (int edge = 0; edge < 2; edge++) {
            double cum = 0;
            fprintf(gp, "%.9g", (g->t0 + edge * g->dt) * 1e3);
            for (size_t i = 0; i < c->n; i++) {
                cum += tr->share[i].occupancy * scale;
                fprintf(gp, " %.6g", stacked ? cum : tr->share[i].miss_ratio);
            }
            fprintf(gp, "\n");
        }
    }
    fprintf(gp, "EOD\n");
}

static void emit_occupancy(void *vctx, FILE *gp)
{
    const struct ctx *c = vctx;
    emit_series(gp, c, true);
    title(gp, "Predicted LLC occupancy over time", c);
    fprintf(gp, "set xlabel 'co-run time (ms)'\nset ylabel 'occupancy (%% of LLC, stacked)'\n"
                "set yrange [0:105]\nset key outside right\nset style fill solid 0.75 noborder\n");
    fprintf(gp, "plot ");
    for (size_t i = 0; i < c->n; i++) {
        /* Between the previous program's top (or 0) and this one's. */
        if (i)
            fprintf(gp, ", $d using 1:%zu:%zu", i + 1, i + 2);
        else
            fprintf(gp, "$d using 1:(0):2");
        fprintf(gp, " with filledcurves lc rgb '%s' title ", colours[i]);
        llc_plot_quote(gp, c->progs[i].prof.program.name);
    }
    fprintf(gp, "\n");
}

static void emit_missratio(void *vctx, FILE *gp)
{
    const struct ctx *c = vctx;
    emit_series(gp, c, false);
    title(gp, "Predicted LLC miss ratio over time", c);
    fprintf(gp, "set xlabel 'co-run time (ms)'\nset ylabel 'LLC misses per reference'\n"
                "set key outside right\nset yrange [0:*]\n");
    fprintf(gp, "plot ");
    for (size_t i = 0; i < c->n; i++) {
        fprintf(gp, "%s$d using 1:%zu with lines lw 2 lc rgb '%s' title ", i ? ", " : "", i + 2,
                colours[i]);
        llc_plot_quote(gp, c->progs[i].prof.program.name);
    }
    fprintf(gp, "\n");
}

/* A heatmap axis label: the phase id, or "unclassified" for ScarPhase's
 * windows between phases (id -1). */
static void phase_tic(FILE *gp, size_t at, int id)
{
    if (id < 0)
        fprintf(gp, "%s'all' %zu", at ? ", " : "", at); /* the pooled phase */
    else
        fprintf(gp, "%s'%d' %zu", at ? ", " : "", id, at);
}

static void emit_heatmap(void *vctx, FILE *gp)
{
    const struct ctx *c = vctx;
    const struct pred_result *r = c->r;
    const size_t na = r->grid_a, nb = r->grid_b;
    fprintf(
        gp,
        "set multiplot layout 1,2\nset palette defined (0 '#ffffff', 1 '#fdae61', 2 '#d7191c')\n"
        "set view map\nset size ratio -1\nset cblabel 'slowdown (x solo)'\n");
    fprintf(gp, "set xrange [-0.5:%g]\nset yrange [-0.5:%g]\n", na - 0.5, nb - 0.5);
    fprintf(gp, "set xtics (");
    for (size_t a = 0; a < na; a++)
        phase_tic(gp, a, c->progs[0].phase_id[a]);
    fprintf(gp, ")\nset ytics (");
    for (size_t b = 0; b < nb; b++)
        phase_tic(gp, b, c->progs[1].phase_id[b]);
    fprintf(gp, ")\n");
    for (int j = 0; j < 2; j++) {
        fprintf(gp, "$g%d << EOD\n", j);
        for (size_t a = 0; a < na; a++)
            for (size_t b = 0; b < nb; b++) {
                const size_t k = (a * nb + b) * 2 + (size_t)j;
                fprintf(gp, "%zu %zu %.6g\n", a, b, r->grid[k].cpi / r->grid_solo[k].cpi);
            }
        fprintf(gp, "EOD\n");
        fprintf(gp, "set title ");
        llc_plot_quote(gp, c->progs[j].prof.program.name);
        fprintf(gp, " . ' slowdown by phase pair'\nset xlabel ");
        llc_plot_quote(gp, c->progs[0].prof.program.name);
        fprintf(gp, " . ' phase'\nset ylabel ");
        llc_plot_quote(gp, c->progs[1].prof.program.name);
        fprintf(gp, " . ' phase'\n");
        fprintf(gp, "plot $g%d using 1:2:3 with image notitle", j);
        if (na * nb <= 144) /* small grids: the values written in */
            fprintf(gp, ", $g%d using 1:2:(sprintf('%%.3f', $3)) with labels font ',8' notitle", j);
        fprintf(gp, "\n");
    }
    fprintf(gp, "unset multiplot\n");
}

static char *png_name(const char *prefix, const char *what)
{
    const size_t n = strlen(prefix) + strlen(what) + 6;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s.%s.png", prefix, what);
    return s;
}

int pred_plot(const char *prefix, const struct pred_prog *progs, size_t n,
              const struct pred_machine *m, const struct pred_opts *o, const struct pred_result *r,
              char *err, size_t errlen)
{
    struct ctx c = {.progs = progs, .n = n, .m = m, .r = r, .o = o};
    static const char *const what[] = {"occupancy", "missratio", "slowdown"};
    void (*const emit[])(void *, FILE *) = {emit_occupancy, emit_missratio, emit_heatmap};
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < LLC_ARRAY_LEN(what); k++) {
        if (k == 2 && !r->grid)
            break;
        char *png = png_name(prefix, what[k]);
        if (!png)
            return llc_errf(err, errlen, -ENOMEM, "out of memory");
        rc = llc_plot_png(o->gnuplot, png, k == 2 ? 1300 : 1100, k == 2 ? 620 : 600, emit[k], &c,
                          err, errlen);
        free(png);
    }
    return rc;
}
