/* The plot of `llcprobe sample`: PREFIX.sample.png from a sampling run
 * (its JSON and CSV: probe/session/sample_output.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/fit_plot.h"
#include "util/plot.h"
#include "cmd/sample_out.h"
#include "util/cli.h"

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
    fprintf(
        gp,
        "EOD\nset title '%s'\nset xlabel 'time (s)'\nset ylabel 'whole-cache probe misses per interval'\n"
        "set key bottom right\nplot $d using 1:2 with linespoints title 'scale-up'",
        c->title);
    if (c->gaussian)
        fprintf(
            gp,
            ", $d using 1:3 with linespoints lw 2 title 'stratified', $d using 1:4 with linespoints "
            "title 'ratio'");
    fprintf(gp, "\n");
}

void llc_sample_plot(const struct llc_sample_output *so, bool quiet)
{
    char png[4200], title[512], err[LLC_ERRLEN];
    snprintf(png, sizeof(png), "%s.sample.png", so->prefix);
    snprintf(title, sizeof(title), "%s: %s, %zu sets", so->target,
             llc_sample_method_name(so->cfg->method), so->cfg->n);
    struct plot_ctx pc = {
        .iv = so->r->iv, .count = so->r->count, .gaussian = so->cfg->sel != NULL, .title = title};
    if (llc_plot_png(NULL, png, 1000, 600, emit_series, &pc, err, sizeof(err)) < 0)
        llc_cli_warn(quiet, "%s: no plot: %s", png, err);
}
