/* gnuplot plots of a fit; data go inline ($data << EOD) so no temporary
 * data files are left behind. */
#include "cmd/fit_plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llcprobe/common.h"
#include "util/plot.h"

struct hist_ctx {
    const struct llc_fit_report *rep;
    const char *title;
};

static void emit_histogram(void *vctx, FILE *gp)
{
    const struct hist_ctx *c = vctx;
    const struct llc_fit_histogram *h = c->rep->hist;
    fprintf(gp, "$hist << EOD\n");
    for (size_t i = 0; i < h->m; i++)
        fprintf(gp, "%.9g %.9g %.9g\n", h->centres[i], isfinite(h->density[i]) ? h->density[i] : 0,
                h->edges[i + 1] - h->edges[i]);
    fprintf(gp, "EOD\n");
    const double w = h->width > 0 ? h->width : 1, lo = h->a - w, hi = h->b + w;
    int curves = 0;
    for (int f = 0; f < LLC_FIT_FAMILY_COUNT; f++) {
        const struct llc_fit_family_result *r = &c->rep->fit[f];
        if (r->status != LLC_FIT_OK)
            continue;
        fprintf(gp, "$f%d << EOD\n", f);
        for (int i = 0; i <= 400; i++) {
            const double x = lo + (hi - lo) * i / 400.0, y = llc_fit_family_pdf(r, x);
            fprintf(gp, "%.9g %.9g\n", x, isfinite(y) ? y : 0);
        }
        fprintf(gp, "EOD\n");
        curves++;
    }
    fprintf(gp, "set title '%s'\nset xlabel 'probe misses per set'\nset ylabel 'density'\n"
                "set style fill solid 0.4 border -1\nset key top right\nset xrange [%.9g:%.9g]\n",
            c->title, lo, hi);
    fprintf(gp, "plot $hist using 1:2:3 with boxes lc rgb '#7f9fbf' title 'sets (%zu bins)'", h->m);
    for (int f = 0; f < LLC_FIT_FAMILY_COUNT; f++) {
        const struct llc_fit_family_result *r = &c->rep->fit[f];
        if (r->status != LLC_FIT_OK)
            continue;
        fprintf(gp, ", $f%d with lines lw %d title '%s R2=%.3f'", f, f == LLC_FIT_GAUSSIAN ? 3 : 1,
                llc_fit_family_name(r->family), r->r2);
    }
    fprintf(gp, "\n");
}

int llc_fit_plot_histogram(const char *png, const struct llc_fit_report *rep, const char *title, char *err,
                           size_t errlen)
{
    struct hist_ctx c = {.rep = rep, .title = title};
    return llc_plot_png(NULL, png, 1000, 650, emit_histogram, &c, err, errlen);
}

struct map_ctx {
    const double *x;
    const uint8_t *excluded;
    size_t n;
    const struct llc_fit_selection *sel;
    const char *title, *ylabel;
};

static void emit_map(void *vctx, FILE *gp)
{
    const struct map_ctx *c = vctx;
    fprintf(gp, "$sets << EOD\n");
    for (size_t k = 0; k < c->n; k++)
        if (!c->excluded || !c->excluded[k])
            fprintf(gp, "%zu %.9g\n", k, c->x[k]);
    fprintf(gp, "EOD\n$chosen << EOD\n");
    for (size_t i = 0; c->sel && i < c->sel->n; i++)
        fprintf(gp, "%zu %.9g %d\n", c->sel->unit[i], c->x[c->sel->unit[i]], (int)c->sel->label[i]);
    fprintf(gp, "EOD\n");
    fprintf(gp, "set title '%s'\nset xlabel 'set (slice x sets per slice + index)'\nset ylabel '%s'\n"
                "set key outside right\nset xrange [0:%zu]\n",
            c->title, c->ylabel, c->n);
    if (c->sel && c->sel->status == LLC_FIT_SELECT_KEYS)
        for (size_t i = 0; i < c->sel->nkeys; i++)
            fprintf(gp, "set arrow from graph 0, first %.9g to graph 1, first %.9g nohead dt 2 lc rgb '#888888'\n",
                    c->sel->key[i], c->sel->key[i]);
    fprintf(gp, "plot $sets using 1:2 with points pt 7 ps 0.25 lc rgb '#9aaabb' title 'all sets'");
    static const char *const colours[] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#000000",
                                          "#000000"};
    for (int k = 0; k <= LLC_FIT_KEY_ALL; k++) {
        bool any = false;
        for (size_t i = 0; c->sel && i < c->sel->n; i++)
            any |= (int)c->sel->label[i] == k;
        if (any)
            fprintf(gp, ", $chosen using ($3==%d?$1:1/0):2 with points pt 9 ps 1.6 lc rgb '%s' title '%s'", k,
                    colours[k], llc_fit_key_name((enum llc_fit_key)k));
    }
    fprintf(gp, "\n");
}

int llc_fit_plot_map(const char *png, const double *x, const uint8_t *excluded, size_t n,
                     const struct llc_fit_selection *sel, const char *title, const char *ylabel, char *err,
                     size_t errlen)
{
    struct map_ctx c = {.x = x, .excluded = excluded, .n = n, .sel = sel, .title = title, .ylabel = ylabel};
    return llc_plot_png(NULL, png, 1200, 600, emit_map, &c, err, errlen);
}
