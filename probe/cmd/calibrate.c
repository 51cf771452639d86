/* llcprobe calibrate: probe misses per set against the number of lines a
 * co-runner holds in each probed set (k = 0..ways), the curve `sample
 * --calibration` inverts to turn probe misses into occupancy. One backend
 * per k (the co-runner's line count is fixed when the simulator is built);
 * every k probes the same sets at the same probe and touch rates. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/fit_plot.h"
#include "util/plot.h"
#include "cmd/map_opts.h"
#include "llcprobe/session.h"
#include "llcprobe/common.h"
#include "llcprobe/mapfile.h"
#include "util/atomic_file.h"
#include "util/cli.h"
#include "util/stopsig.h"

/* Default co-runner touch rate (touches per held line per second): 0 =
 * the per-set probe rate / (2 W^2). Measured in the simulator (intel8,
 * LRU): probe misses per set = W x k x touch rate within 1% until they
 * reach the probe's own rate, so misses depend on k only through k x
 * touch rate (2e3/s: 31680 misses/s per line held; 2e4: 318700, and flat
 * from k = 13; 2e5: flat from k = 2). This default keeps the whole curve,
 * k = W included, at or below half the probe rate: invertible for every
 * k and out of the saturated range (docs/METHODS.md §12.11). */
#define DEFAULT_TOUCH_RATE 0
/* Sets probed together: 25, so that at the same --rate every set is
 * probed as fast as in `sample --gaussian25`. */
#define DEFAULT_PROBED 25
/* The idle target the simulator needs beside the co-runner: one line,
 * touched once per simulated millisecond. */
#define IDLE_WORKLOAD "uniform:size=64"
#define IDLE_RATE 1e-6

/* Documented ranges of calibrate's own options. */
#define TOUCH_MIN 1e-3
#define TOUCH_MAX 1e12
#define PROBED_MAX (1u << 20)
#define CYCLE_MIN 1e-6
#define CYCLE_MAX 3600.0
#define WALKS_MAX 1000
#define THRESHOLD_MIN 1e-3
#define THRESHOLD_MAX 0.999

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: llcprobe calibrate --backend sim [--preset NAME] [options]\n"
        "       llcprobe calibrate [--backend auto|pmu|timing] [options]\n\n"
        "Runs a calibration co-runner that holds exactly k congruent lines in each probed\n"
        "set, touching each held line --touch-rate times per second, for k = 0..ways, and\n"
        "records the probe's misses per set per second at each k. Writes PREFIX.calib.json\n"
        "(format llcprobe-calibration v2, read by 'llcprobe sample --calibration'),\n"
        "PREFIX.calib.csv (k, then mean, sd, min, max over the probed sets of both curves)\n"
        "and PREFIX.calib.png (the miss curve and the search's estimate against k, side\n"
        "by side), and prints the curves.\n\n"
        "At each k it also runs the occupancy estimator of 'sample --calibration', a\n"
        "walk-length search: a slow probe walks w of the W ways of each probed set and the\n"
        "longest w that still hits leaves W - w lines to the others; the mean raw estimate\n"
        "against k is the curve 'sample' inverts. (The fast probe's misses are recorded\n"
        "too, but they grow with k x touch rate: how often lines enter a set, not how many\n"
        "stay, so they are not inverted.)\n\n"
        "calibration:\n"
        "  --touch-rate R     co-runner touches per held line per second, %g..%g\n"
        "                     (simulated seconds for sim; default: per-set probe rate /\n"
        "                     (2 ways^2), the fastest that keeps the curve below half the probe rate)\n"
        "  --probed N         sets probed together, 1..%u (default %d: the same\n"
        "                     per-set probe rate as 'sample --gaussian25' at the same --rate)\n"
        "  --search-cycle S   occupancy search: seconds for W probe accesses in a set,\n"
        "                     %g..%g (default %g; must outlast the target's\n"
        "                     revisits of its lines)\n"
        "  --search-walks N   measured cycles per search step, after 2 warm ones, 1..%u\n"
        "                     (default %u)\n"
        "  --search-threshold Q  miss ratio above which a walk no longer fits, %g..%g\n"
        "                     (default %g)\n"
        "  --dwell S          seconds per k (default 0.002 sim, 0.02 hardware); --rate R\n"
        "                     probe accesses per second over all probed sets (sim default\n"
        "                     1e8); on hardware per set, and needed unless --touch-rate\n"
        "                     is given (an unpaced probe has no rate to derive it from)\n"
        "  --preset, --policy, --seed, --backend, -o PREFIX (default 'calibration'), -q\n"
        "                     as 'llcprobe map'; on hardware also map's --llc, --reserve,\n"
        "                     --small-pages and --event. map's --mode, --sets,\n"
        "                     --per-set-runs, --repeat and --attach are refused: calibrate\n"
        "                     chooses its own sets and has no target\n"
        "  -h, --help         this text\n\n"
        "The simulator runs the co-runner beside an idle target, one simulation per k.\n"
        "Hardware backends (timing, pmu) build their eviction sets once and self-test as\n"
        "'map' does, then check that an idle walk at the search's pace stays in the LLC;\n"
        "they refuse with the measured figures where any check fails (on VMs without a\n"
        "PMU and with unverifiable eviction sets, at the eviction sets). Past the checks\n"
        "the co-runner is a thread on another CPU (idle 'sleep infinity' is the target)\n"
        "walking k congruent lines per probed set (plus what its L2 keeps on a victim\n"
        "LLC), found by eviction tests against each probed set's eviction set; pmu\n"
        "measures the sets one at a time, so its search takes probed x longer.\n\n"
        "exit status: 0 ok, 1 failure or refusal, 2 bad usage.\n",
        TOUCH_MIN, TOUCH_MAX, PROBED_MAX, DEFAULT_PROBED, CYCLE_MIN, CYCLE_MAX,
        LLC_OCC_DEFAULT_CYCLE, WALKS_MAX, LLC_OCC_DEFAULT_CYCLES, THRESHOLD_MIN, THRESHOLD_MAX,
        LLC_OCC_DEFAULT_THRESHOLD);
}

enum { X_TOUCH = 512, X_PROBED, X_CYCLE, X_CYCLES, X_THRESHOLD };

static int on_extra(void *ctx, int code, const char *arg)
{
    struct llc_calibrate_config *c = ctx;
    uint64_t v = 0;
    int rc;
    switch (code) {
    case X_TOUCH:
        return llc_opt_double("calibrate", "touch-rate", arg, TOUCH_MIN, TOUCH_MAX, &c->touch_rate);
    case X_PROBED:
        rc = llc_opt_u64("calibrate", "probed", arg, 1, PROBED_MAX, &v);
        c->probed = (uint32_t)v;
        return rc;
    case X_CYCLE:
        return llc_opt_double("calibrate", "search-cycle", arg, CYCLE_MIN, CYCLE_MAX,
                              &c->search.cycle_s);
    case X_CYCLES:
        rc = llc_opt_u64("calibrate", "search-walks", arg, 1, WALKS_MAX, &v);
        c->search.cycles = (unsigned)v;
        return rc;
    case X_THRESHOLD:
        return llc_opt_double("calibrate", "search-threshold", arg, THRESHOLD_MIN, THRESHOLD_MAX,
                              &c->search.threshold);
    default:
        return llc_cli_usage("calibrate", "unknown option");
    }
}

struct curve_stats {
    double mean, sd, min, max;
};

static void stats_of(const double *x, size_t n, struct curve_stats *s)
{
    double sum = 0, ss = 0;
    s->min = INFINITY;
    s->max = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
        s->min = fmin(s->min, x[i]);
        s->max = fmax(s->max, x[i]);
    }
    s->mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - s->mean) * (x[i] - s->mean);
    s->sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
}

struct plot_ctx {
    const struct curve_stats *st, *est;
    unsigned nk;
    const char *title;
    double cycle_s;
};

/* Two panels side by side: the fast probe's misses (what the stress probe
 * measures) and the walk-length search's estimate (what `sample` inverts),
 * each with its spread over the probed sets; the search panel carries the
 * identity line, the curve a perfect search would draw. */
static void emit_curve(void *vctx, FILE *gp)
{
    const struct plot_ctx *c = vctx;
    fprintf(gp, "$d << EOD\n");
    for (unsigned k = 0; k < c->nk; k++)
        fprintf(gp, "%u %.9g %.9g %.9g %.9g %.9g %.9g\n", k, c->st[k].mean, c->st[k].min,
                c->st[k].max, c->est[k].mean, c->est[k].min, c->est[k].max);
    fprintf(gp, "EOD\nset multiplot layout 1,2 title ");
    llc_plot_quote(gp, c->title);
    fprintf(gp,
            "\nset xlabel 'lines held by the co-runner per set (k)'\nset key top left\nset grid\n"
            "set xrange [-0.5:%u.5]\n"
            "set title 'fast probe: misses grow with k x touch rate'\n"
            "set ylabel 'probe misses per set per second'\n"
            "plot $d using 1:2:3:4 with yerrorbars title 'min..max over probed sets', "
            "$d using 1:2 with linespoints lw 2 title 'mean'\n",
            c->nk - 1);
    fprintf(gp,
            "set title 'walk-length search (cycle %g s): the curve sample inverts'\n"
            "set ylabel 'raw estimate (lines)'\nset yrange [-0.5:%u.5]\n"
            "plot x with lines dt 2 lc 'gray' title 'estimate = k', "
            "$d using 1:5:6:7 with yerrorbars title 'min..max over probed sets', "
            "$d using 1:5 with linespoints lw 2 title 'mean (the calibration)'\n"
            "unset multiplot\n",
            c->cycle_s, c->nk - 1);
}

static int write_outputs(const char *prefix, const char *machine,
                         const struct llc_occ_params *search, const struct llc_calibrate_result *c,
                         const struct curve_stats *st, const struct curve_stats *est, bool quiet,
                         char *err, size_t errlen)
{
    char path[4200];
    struct llc_calib cal = {.ways = c->ways,
                            .line_size = c->geo.line_size,
                            .units = llc_map_units(&c->geo),
                            .rate = c->rate,
                            .probed = c->probed,
                            .touch_rate = c->touch_rate,
                            .nk = c->ways + 1,
                            .search_cycle_s = search->cycle_s,
                            .search_cycles = search->cycles,
                            .search_threshold = search->threshold};
    snprintf(cal.machine, sizeof(cal.machine), "%s", machine);
    for (unsigned k = 0; k <= c->ways; k++) {
        cal.misses_per_set_s[k] = st[k].mean;
        cal.search_estimate[k] = est[k].mean;
    }
    snprintf(path, sizeof(path), "%s.calib.json", prefix);
    int rc = llc_calib_write(path, &cal, err, errlen);
    if (rc < 0)
        return rc;
    snprintf(path, sizeof(path), "%s.calib.csv", prefix);
    struct llc_afile *f;
    if ((rc = llc_afile_open(path, &f, err, errlen)) < 0)
        return rc;
    FILE *out = llc_afile_stream(f);
    fprintf(out, "k,misses_per_set_s,sd,min,max,search_estimate,search_sd,search_min,search_max\n");
    for (unsigned k = 0; k <= c->ways; k++)
        fprintf(out, "%u,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", k, st[k].mean, st[k].sd,
                st[k].min, st[k].max, est[k].mean, est[k].sd, est[k].min, est[k].max);
    if ((rc = llc_afile_commit(f, err, errlen)) < 0)
        return rc;
    char title[512];
    snprintf(path, sizeof(path), "%s.calib.png", prefix);
    snprintf(title, sizeof(title), "calibration: %s, %u sets probed, %.3g touches/line/s", machine,
             c->probed, c->touch_rate);
    struct plot_ctx pc = {
        .st = st, .est = est, .nk = c->ways + 1, .title = title, .cycle_s = search->cycle_s};
    char perr[LLC_ERRLEN];
    if (llc_plot_png(NULL, path, 1400, 550, emit_curve, &pc, perr, sizeof(perr)) < 0)
        llc_cli_warn(quiet, "%s: no plot: %s", path, perr);
    return 0;
}

int llc_cmd_calibrate(int argc, char **argv)
{
    static const struct option extra[] = {{"touch-rate", required_argument, 0, X_TOUCH},
                                          {"probed", required_argument, 0, X_PROBED},
                                          {"search-cycle", required_argument, 0, X_CYCLE},
                                          {"search-walks", required_argument, 0, X_CYCLES},
                                          {"search-threshold", required_argument, 0, X_THRESHOLD},
                                          {0, 0, 0, 0}};
    static char *idle_program[] = {"sleep", "infinity", NULL};
    struct llc_calibrate_config cc = {.touch_rate = DEFAULT_TOUCH_RATE, .probed = DEFAULT_PROBED};
    llc_occ_params_default(&cc.search);
    const struct map_cmd_extra x = {
        .longopts = extra, .on_extra = on_extra, .ctx = &cc, .usage = usage, .own_target = true};
    struct map_opts o;
    const enum llc_parse p = llc_map_cmd_parse("calibrate", argc, argv, &o, &x);
    if (p != LLC_PARSE_RUN)
        return llc_parse_exit(p);
    const bool sim = strcmp(o.backend, "sim") == 0;
    if (o.mode_given || o.per_set_runs || o.repeat || o.attach_pid >= 0)
        return llc_cli_usage("calibrate",
                             "--mode, --sets, --per-set-runs, --repeat and --attach belong to map: "
                             "calibrate probes its own sets with no target");
    if (sim && (o.workload || o.trace || o.noise || o.argv))
        return llc_cli_usage("calibrate",
                             "the calibration runs without a target: no --workload, --trace, "
                             "--noise or program");
    if (!sim && !(cc.touch_rate > 0) && !(o.rate > 0))
        return llc_cli_usage("calibrate",
                             "on hardware the probe runs unpaced unless given --rate (accesses per "
                             "set per second), so give --rate or --touch-rate");
    /* The simulator needs a target beside the co-runner: an idle one; a
     * hardware run an idle program. The dwell is per k. */
    if (sim) {
        o.workload = IDLE_WORKLOAD;
        o.target_rate = IDLE_RATE;
    } else if (!o.argv) {
        o.argv = idle_program;
    }
    o.dwell_given = true;
    o.search_cycle_s = cc.search.cycle_s; /* hardware: the slow idle walk is checked at it */
    struct llc_session_config sc;
    llc_map_cmd_config(&o, NULL, 0, &sc);
    sc.purpose = LLC_SESSION_CALIBRATE;
    sc.stop = llc_map_cmd_signals();
    const char *prefix = o.out_prefix ? o.out_prefix : "calibration";
    struct llc_session *s = NULL;
    struct llc_calibrate_result c = {0};
    struct curve_stats *st = NULL, *est = NULL;
    char err[LLC_ERRLEN];
    int status = LLC_EXIT_FAIL;
    int rc = llc_session_open(&sc, &s, err, sizeof(err));
    if (rc == 0)
        rc = llc_calibrate_run(s, &cc, &c, err, sizeof(err));
    if (rc < 0) {
        status = rc == LLC_SESSION_EUSAGE ? llc_cli_usage("calibrate", "%s", err)
                                          : llc_cli_fail("calibrate", "%s", err);
        goto out;
    }
    const char *machine = llc_session_info(s)->machine;
    st = calloc(c.ways + 1, sizeof(*st));
    est = calloc(c.ways + 1, sizeof(*est));
    if (!st || !est) {
        llc_cli_fail("calibrate", "out of memory");
        goto out;
    }
    for (unsigned k = 0; k <= c.ways; k++) {
        stats_of(c.per_set + (size_t)k * c.probed, c.probed, &st[k]);
        stats_of(c.estimate + (size_t)k * c.probed, c.probed, &est[k]);
    }
    if (write_outputs(prefix, machine, &cc.search, &c, st, est, o.quiet, err, sizeof(err)) < 0) {
        llc_cli_fail("calibrate", "%s", err);
        goto out;
    }
    printf(
        "calibrate: %s; %u sets probed at %.3g accesses per set per second; co-runner %.3g touches per "
        "line per second\n",
        machine, c.probed, c.rate / c.probed, c.touch_rate);
    printf(
        "walk-length search: a probe line every %g s, %u walks per step, miss-ratio threshold %g\n",
        cc.search.cycle_s, cc.search.cycles, cc.search.threshold);
    printf("%4s %14s %10s %14s %14s %10s %8s %8s\n", "k", "misses/set/s", "cv", "min", "max",
           "search", "min", "max");
    for (unsigned k = 0; k <= c.ways; k++)
        printf("%4u %14.6g %10.3f %14.6g %14.6g %10.3f %8.0f %8.0f\n", k, st[k].mean,
               st[k].mean > 0 ? st[k].sd / st[k].mean : 0, st[k].min, st[k].max, est[k].mean,
               est[k].min, est[k].max);
    printf("wrote %s.calib.json, %s.calib.csv, %s.calib.png\n", prefix, prefix, prefix);
    status = LLC_EXIT_OK;
out:
    if (llc_stop_requested())
        status = llc_stop_exit_code();
    llc_session_close(s);
    llc_calibrate_result_free(&c);
    free(st);
    free(est);
    return status;
}
