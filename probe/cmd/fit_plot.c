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

/* The x range that holds all but the outer 0.1% of the sets on each side
 * (bins [*first, *last]), so a few outliers do not squash the histogram;
 * returns how many sets fall outside it. */
static size_t robust_bins(const struct llc_fit_histogram *h, size_t *first, size_t *last)
{
    const double tail = 0.001 * (double)h->n;
    size_t below = 0, i = 0, j = h->m - 1;
    while (i < j && (double)(below + h->counts[i]) <= tail)
        below += h->counts[i++];
    size_t above = 0;
    while (j > i && (double)(above + h->counts[j]) <= tail)
        above += h->counts[j--];
    *first = i;
    *last = j;
    return below + above;
}

/* Axes follow the data: x over the robust range of the sets, y up to the
 * tallest bar in it. A model curve taller than the data (a narrow Poisson
 * on wide data) is clipped at the top instead of flattening the bars. */
static void emit_histogram(void *vctx, FILE *gp)
{
    const struct hist_ctx *c = vctx;
    const struct llc_fit_histogram *h = c->rep->hist;
    fprintf(gp, "$hist << EOD\n");
    for (size_t i = 0; i < h->m; i++)
        fprintf(gp, "%.9g %.9g %.9g\n", h->centres[i], isfinite(h->density[i]) ? h->density[i] : 0,
                h->edges[i + 1] - h->edges[i]);
    fprintf(gp, "EOD\n");
    size_t first = 0, last = 0;
    const size_t outside = h->m > 0 ? robust_bins(h, &first, &last) : 0;
    const double w = h->width > 0 ? h->width : 1;
    const double lo = h->m > 0 ? h->edges[first] - w : h->a - w;
    const double hi = h->m > 0 ? h->edges[last + 1] + w : h->b + w;
    double ymax = 0;
    for (size_t i = first; i <= last && i < h->m; i++)
        if (isfinite(h->density[i]) && h->density[i] > ymax)
            ymax = h->density[i];
    ymax = ymax > 0 ? 1.15 * ymax : 1;
    bool clipped = false;
    for (int f = 0; f < LLC_FIT_FAMILY_COUNT; f++) {
        const struct llc_fit_family_result *r = &c->rep->fit[f];
        if (r->status != LLC_FIT_OK)
            continue;
        fprintf(gp, "$f%d << EOD\n", f);
        for (int i = 0; i <= 400; i++) {
            const double x = lo + (hi - lo) * i / 400.0, y = llc_fit_family_pdf(r, x);
            fprintf(gp, "%.9g %.9g\n", x, isfinite(y) ? y : 0);
            clipped |= isfinite(y) && y > ymax;
        }
        fprintf(gp, "EOD\n");
    }
    fprintf(
        gp,
        "set title '%s'\nset xlabel 'probe misses per set'\n"
        "set ylabel 'density (fraction of sets per unit of misses)'\n"
        "set style fill solid 0.4 border -1\nset key outside right top\nset xrange [%.9g:%.9g]\n"
        "set yrange [0:%.9g]\n",
        c->title, lo, hi, ymax);
    if (clipped || outside > 0) {
        fprintf(gp, "set label 1 '");
        if (outside > 0)
            fprintf(gp, "%zu of %zu sets beyond the x range (outer 0.1%% each side)%s", outside,
                    h->n, clipped ? "; " : "");
        if (clipped)
            fprintf(gp, "model curves clipped at the top");
        fprintf(gp, "' at graph 0.01, graph 0.97 left front\n");
    }
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

int llc_fit_plot_histogram(const char *png, const struct llc_fit_report *rep, const char *title,
                           char *err, size_t errlen)
{
    struct hist_ctx c = {.rep = rep, .title = title};
    return llc_plot_png(NULL, png, 1150, 650, emit_histogram, &c, err, errlen);
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
    fprintf(gp,
            "set title '%s'\nset xlabel 'set (slice x sets per slice + index)'\nset ylabel '%s'\n"
            "set key outside right\nset xrange [0:%zu]\n"
            "set autoscale yfix\nset offsets 0, 0, graph 0.03, graph 0.03\n",
            c->title, c->ylabel, c->n);
    if (c->sel && c->sel->status == LLC_FIT_SELECT_KEYS)
        for (size_t i = 0; i < c->sel->nkeys; i++)
            fprintf(
                gp,
                "set arrow from graph 0, first %.9g to graph 1, first %.9g nohead dt 2 lc rgb '#888888'\n",
                c->sel->key[i], c->sel->key[i]);
    fprintf(gp, "plot $sets using 1:2 with points pt 7 ps 0.25 lc rgb '#9aaabb' title 'all sets'");
    static const char *const colours[] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd",
                                          "#ff7f0e", "#000000", "#000000"};
    for (int k = 0; k <= LLC_FIT_KEY_ALL; k++) {
        bool any = false;
        for (size_t i = 0; c->sel && i < c->sel->n; i++)
            any |= (int)c->sel->label[i] == k;
        if (!any)
            continue;
        /* Quantile keys are named by their probability: "mu-sigma" would
         * suggest a Gaussian that did not fit. */
        char title[64];
        if (c->sel->mode == LLC_FIT_KEYS_QUANTILE && (size_t)k < c->sel->nkeys &&
            isfinite(c->sel->key_p[k]))
            snprintf(title, sizeof(title), "K%d: %.3g%% quantile", k + 1, 100 * c->sel->key_p[k]);
        else
            snprintf(title, sizeof(title), "%s", llc_fit_key_name((enum llc_fit_key)k));
        fprintf(gp,
                ", $chosen using ($3==%d?$1:1/0):2 with points pt 9 ps 1.6 lc rgb '%s' title '%s'",
                k, colours[k], title);
    }
    fprintf(gp, "\n");
}

int llc_fit_plot_map(const char *png, const double *x, const uint8_t *excluded, size_t n,
                     const struct llc_fit_selection *sel, const char *title, const char *ylabel,
                     char *err, size_t errlen)
{
    struct map_ctx c = {
        .x = x, .excluded = excluded, .n = n, .sel = sel, .title = title, .ylabel = ylabel};
    return llc_plot_png(NULL, png, 1200, 600, emit_map, &c, err, errlen);
}
