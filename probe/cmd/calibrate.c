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
#include "cmd/sample_out.h"
#include "llcprobe/common.h"
#include "llcprobe/mapfile.h"
#include "util/atomic_file.h"
#include "util/cli.h"

/* Default co-runner touch rate (touches per held line per second): 0 =
 * the per-set probe rate / (2 W^2). Measured in the simulator (intel8,
 * LRU): probe misses per set = W x k x touch rate within 1% until they
 * reach the probe's own rate, so misses depend on k only through k x
 * touch rate (2e3/s: 31680 misses/s per line held; 2e4: 318700, and flat
 * from k = 13; 2e5: flat from k = 2). This default keeps the whole curve,
 * k = W included, at or below half the probe rate: invertible for every
 * k and out of the saturated range (shared-cache.md §7.6). */
#define DEFAULT_TOUCH_RATE 0
/* Sets probed together: 25, so that at the same --rate every set is
 * probed as fast as in `sample --gaussian25`. */
#define DEFAULT_PROBED 25
/* The idle target the simulator needs beside the co-runner: one line,
 * touched once per simulated millisecond. */
#define IDLE_WORKLOAD "uniform:size=64"
#define IDLE_RATE "1e-6"

struct calib_run {
    double touch_rate;
    uint32_t probed;
    unsigned k, ways;
    bool have_geo;
    struct llc_map_geometry geo;
    uint32_t *units;          /* the probed sets */
    double *per_set;          /* [(ways + 1) * probed]: misses per set per second */
    double *estimate;         /* [(ways + 1) * probed]: raw walk-length search estimate */
    struct llc_occ_params search;
    char machine[256];
    double rate;
};

static void usage(FILE *out)
{
    fprintf(out,
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
            "  --touch-rate R     co-runner touches per held line per second (simulated\n"
            "                     seconds for sim; default: per-set probe rate / (2 ways^2),\n"
            "                     the fastest that keeps the curve below half the probe rate)\n"
            "  --probed N         sets probed together (default %d: the same per-set probe\n"
            "                     rate as 'sample --gaussian25' at the same --rate)\n"
            "  --search-cycle S   occupancy search: seconds for W probe accesses in a set\n"
            "                     (default %g; must outlast the target's revisits of its lines)\n"
            "  --search-walks N   measured cycles per search step, after 2 warm ones (default %u)\n"
            "  --search-threshold Q  miss ratio above which a walk no longer fits (default %g)\n"
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
            DEFAULT_PROBED, LLC_OCC_DEFAULT_CYCLE, LLC_OCC_DEFAULT_CYCLES, LLC_OCC_DEFAULT_THRESHOLD);
}

enum { X_TOUCH = 512, X_PROBED, X_CYCLE, X_CYCLES, X_THRESHOLD };

struct calib_opts {
    double touch_rate;
    uint32_t probed;
    struct llc_occ_params search;
};

static int on_extra(void *ctx, int code, const char *arg)
{
    struct calib_opts *c = ctx;
    uint64_t v;
    switch (code) {
    case X_TOUCH:
        if (llc_parse_double(arg, &c->touch_rate) < 0 || !(c->touch_rate > 0))
            return llc_cli_usage("calibrate", "--touch-rate: '%s' is not a positive number", arg);
        return 0;
    case X_PROBED:
        if (llc_parse_u64_range(arg, 1, 1u << 20, &v) < 0)
            return llc_cli_usage("calibrate", "--probed: '%s' is not a whole number in 1..1048576", arg);
        c->probed = (uint32_t)v;
        return 0;
    case X_CYCLE:
        if (llc_parse_double(arg, &c->search.cycle_s) < 0 || !(c->search.cycle_s > 0))
            return llc_cli_usage("calibrate", "--search-cycle: '%s' is not a positive number", arg);
        return 0;
    case X_CYCLES:
        if (llc_parse_u64_range(arg, 1, 1000, &v) < 0)
            return llc_cli_usage("calibrate", "--search-walks: '%s' is not a whole number in 1..1000", arg);
        c->search.cycles = (unsigned)v;
        return 0;
    case X_THRESHOLD:
        if (llc_parse_double(arg, &c->search.threshold) < 0 || !(c->search.threshold > 0 && c->search.threshold < 1))
            return llc_cli_usage("calibrate", "--search-threshold: '%s' is not a number in (0, 1)", arg);
        return 0;
    default: return llc_cli_usage("calibrate", "unknown option");
    }
}

/* Measures the current k on a ready backend: the probed sets walked
 * together for two dwells, the first warming the co-runner's lines in. */
static int measure_k(const struct map_opts *o, struct calib_run *c, struct llc_map_backend *b,
                     volatile sig_atomic_t *stop)
{
    const uint32_t units = llc_map_units(&b->geo);
    char err[LLC_ERRLEN];
    struct llc_map_result *r = NULL;
    int status = LLC_EXIT_FAIL;
    const struct llc_map_plan plan = {.mode = LLC_MAP_SETS, .group = c->probed, .dwell_s = o->dwell_s,
                                      .sweeps = 2, .sets = c->units, .n_sets = c->probed, .seed = o->seed,
                                      .stop = stop};
    if (llc_map_run(b, &plan, &r, err, sizeof(err)) < 0) {
        llc_cli_fail(o->cmd, "k = %u: %s", c->k, err);
        goto out;
    }
    if (!r->complete || r->sweeps < 2) {
        llc_cli_fail(o->cmd, "k = %u: %s", c->k, r->incomplete_reason[0] ? r->incomplete_reason : "interrupted");
        goto out;
    }
    for (uint32_t i = 0; i < c->probed; i++)
        c->per_set[(size_t)c->k * c->probed + i] = (double)r->sweep_misses[units + c->units[i]] / o->dwell_s;
    /* The occupancy search on the same sets, as `sample` runs it: what it
     * reports when exactly k foreign lines live in each set. */
    if (llc_occ_search(b, c->units, c->probed, &c->search, stop, c->estimate + (size_t)c->k * c->probed, err,
                       sizeof(err)) < 0) {
        llc_cli_fail(o->cmd, "k = %u: occupancy search: %s", c->k, err);
        goto out;
    }
    status = LLC_EXIT_OK;
out:
    llc_map_result_free(r);
    return status;
}

/* The simulator builds one backend per k (its co-runner is part of the
 * simulated run); a hardware backend, whose eviction sets take long to
 * build, runs every k here with its co-runner thread set to k lines. */
static int calib_stage(const struct map_opts *o, struct llc_map_backend *b, const char *machine,
                       const char *target, double rate, volatile sig_atomic_t *stop, bool want_truth,
                       int (*restart)(void *ctx, char *err, size_t errlen), void *restart_ctx)
{
    (void)target;
    (void)want_truth;
    (void)restart;
    (void)restart_ctx;
    struct calib_run *c = o->stage_ctx;
    const bool sim = strcmp(b->name, "sim") == 0;
    if (!sim && !b->ops->corunner)
        return llc_cli_fail(o->cmd, "the %s backend has no calibration co-runner", b->name);
    const uint32_t units = llc_map_units(&b->geo);
    if (!c->have_geo) {
        if (c->probed > units) {
            return llc_cli_usage(o->cmd, "--probed: %u sets asked for, the LLC has %u", c->probed, units);
        }
        c->geo = b->geo;
        c->ways = b->geo.llc_ways;
        c->units = malloc(c->probed * sizeof(*c->units));
        c->per_set = calloc((size_t)(c->ways + 1) * c->probed, sizeof(*c->per_set));
        c->estimate = calloc((size_t)(c->ways + 1) * c->probed, sizeof(*c->estimate));
        if (!c->units || !c->per_set || !c->estimate)
            return llc_cli_fail(o->cmd, "out of memory");
        /* Evenly spaced sets: every slice and index range is represented. */
        for (uint32_t i = 0; i < c->probed; i++)
            c->units[i] = (uint32_t)((uint64_t)i * units / c->probed);
        snprintf(c->machine, sizeof(c->machine), "%s", machine);
        /* The file keeps the rate over all probed sets; the hardware's
         * --rate is per set already (clock pacing per unit). */
        c->rate = sim ? rate : rate * c->probed;
        if (!(c->touch_rate > 0))
            c->touch_rate = c->rate / c->probed / (2.0 * c->ways * c->ways);
        c->have_geo = true;
    }
    if (sim)
        return measure_k(o, c, b, stop);
    char err[LLC_ERRLEN];
    int status = LLC_EXIT_FAIL;
    for (c->k = 0;; c->k++) {
        if (b->ops->corunner(b->ctx, c->units, c->probed, c->k, c->touch_rate, err, sizeof(err)) < 0) {
            status = llc_cli_fail(o->cmd, "k = %u: co-runner: %s", c->k, err);
            break;
        }
        if ((status = measure_k(o, c, b, stop)) != LLC_EXIT_OK || c->k == c->ways)
            break;
    }
    if (b->ops->corunner(b->ctx, c->units, c->probed, 0, c->touch_rate, err, sizeof(err)) < 0 &&
        status == LLC_EXIT_OK)
        status = llc_cli_fail(o->cmd, "stopping the co-runner: %s", err);
    return status;
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
        fprintf(gp, "%u %.9g %.9g %.9g %.9g %.9g %.9g\n", k, c->st[k].mean, c->st[k].min, c->st[k].max,
                c->est[k].mean, c->est[k].min, c->est[k].max);
    fprintf(gp, "EOD\nset multiplot layout 1,2 title ");
    llc_plot_quote(gp, c->title);
    fprintf(gp, "\nset xlabel 'lines held by the co-runner per set (k)'\nset key top left\nset grid\n"
                "set xrange [-0.5:%u.5]\n"
                "set title 'fast probe: misses grow with k x touch rate'\n"
                "set ylabel 'probe misses per set per second'\n"
                "plot $d using 1:2:3:4 with yerrorbars title 'min..max over probed sets', "
                "$d using 1:2 with linespoints lw 2 title 'mean'\n",
            c->nk - 1);
    fprintf(gp, "set title 'walk-length search (cycle %g s): the curve sample inverts'\n"
                "set ylabel 'raw estimate (lines)'\nset yrange [-0.5:%u.5]\n"
                "plot x with lines dt 2 lc 'gray' title 'estimate = k', "
                "$d using 1:5:6:7 with yerrorbars title 'min..max over probed sets', "
                "$d using 1:5 with linespoints lw 2 title 'mean (the calibration)'\n"
                "unset multiplot\n",
            c->cycle_s, c->nk - 1);
}

static int write_outputs(const char *prefix, const struct calib_run *c, const struct curve_stats *st,
                         const struct curve_stats *est, bool quiet, char *err, size_t errlen)
{
    char path[4200];
    struct llc_calib cal = {.ways = c->ways, .line_size = c->geo.line_size, .units = llc_map_units(&c->geo),
                            .rate = c->rate, .probed = c->probed, .touch_rate = c->touch_rate,
                            .nk = c->ways + 1, .search_cycle_s = c->search.cycle_s,
                            .search_cycles = c->search.cycles, .search_threshold = c->search.threshold};
    snprintf(cal.machine, sizeof(cal.machine), "%s", c->machine);
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
        fprintf(out, "%u,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", k, st[k].mean, st[k].sd, st[k].min, st[k].max,
                est[k].mean, est[k].sd, est[k].min, est[k].max);
    if ((rc = llc_afile_commit(f, err, errlen)) < 0)
        return rc;
    char title[512];
    snprintf(path, sizeof(path), "%s.calib.png", prefix);
    snprintf(title, sizeof(title), "calibration: %s, %u sets probed, %.3g touches/line/s", c->machine, c->probed,
             c->touch_rate);
    struct plot_ctx pc = {.st = st, .est = est, .nk = c->ways + 1, .title = title, .cycle_s = c->search.cycle_s};
    char perr[LLC_ERRLEN];
    if (llc_plot_png(NULL, path, 1400, 550, emit_curve, &pc, perr, sizeof(perr)) < 0)
        llc_cli_warn(quiet, "%s: no plot: %s", path, perr);
    return 0;
}

/* The sim target is an idle workload unless one is given, and a hardware
 * run needs a program for map's hardware path to launch: an idle one. */
static char **build_argv(int argc, char **argv, bool *sim, int *count)
{
    const char *backend = "auto";
    bool has_program = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            has_program = true;
            break;
        }
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
            backend = argv[i + 1];
        else if (strncmp(argv[i], "--backend=", 10) == 0)
            backend = argv[i] + 10;
    }
    *sim = strcmp(backend, "sim") == 0;
    char **v = calloc((size_t)argc + 8, sizeof(*v));
    if (!v)
        return NULL;
    int n = 0;
    v[n++] = argv[0];
    if (*sim) {
        v[n++] = "--workload";
        v[n++] = IDLE_WORKLOAD;
        v[n++] = "--target-rate";
        v[n++] = IDLE_RATE;
    }
    for (int i = 1; i < argc; i++)
        v[n++] = argv[i];
    if (!*sim && !has_program) {
        v[n++] = "--";
        v[n++] = "sleep";
        v[n++] = "infinity";
    }
    v[n] = NULL;
    *count = n;
    return v;
}

int llc_cmd_calibrate(int argc, char **argv)
{
    static const struct option extra[] = {{"touch-rate", required_argument, 0, X_TOUCH},
                                          {"probed", required_argument, 0, X_PROBED},
                                          {"search-cycle", required_argument, 0, X_CYCLE},
                                          {"search-walks", required_argument, 0, X_CYCLES},
                                          {"search-threshold", required_argument, 0, X_THRESHOLD},
                                          {0, 0, 0, 0}};
    struct calib_opts co = {.touch_rate = DEFAULT_TOUCH_RATE, .probed = DEFAULT_PROBED};
    llc_occ_params_default(&co.search);
    struct calib_run c = {0};
    struct curve_stats *st = NULL, *est = NULL;
    char err[LLC_ERRLEN];
    bool sim;
    int nargs, status = LLC_EXIT_FAIL;
    char **args = build_argv(argc, argv, &sim, &nargs);
    if (!args)
        return llc_cli_fail("calibrate", "out of memory");
    const struct map_cmd_extra x = {.longopts = extra, .on_extra = on_extra, .ctx = &co, .usage = usage};
    struct map_opts o;
    const int rc = llc_map_cmd_parse("calibrate", nargs, args, &o, &x);
    if (rc) {
        status = rc == 1 ? LLC_EXIT_OK : rc;
        goto out;
    }
    if (o.mode_given || o.per_set_runs || o.repeat || o.attach_pid >= 0) {
        status = llc_cli_usage("calibrate", "--mode, --sets, --per-set-runs, --repeat and --attach belong to map: "
                                            "calibrate probes its own sets with no target");
        goto out;
    }
    if (sim && (o.trace || o.noise || strcmp(o.workload, IDLE_WORKLOAD) != 0 || o.argv)) {
        status = llc_cli_usage("calibrate", "the calibration runs without a target: no --workload, --trace, "
                                            "--noise or program");
        goto out;
    }
    /* The dwell is per k as parsed (map's simulator default would size it
     * from the idle target's rate instead). */
    o.dwell_given = true;
    c.touch_rate = co.touch_rate;
    c.probed = co.probed;
    c.search = co.search;
    o.search_cycle_s = c.search.cycle_s; /* hardware: the slow idle walk is checked at it */
    if (!sim && !(c.touch_rate > 0) && !(o.rate > 0)) {
        status = llc_cli_usage("calibrate", "on hardware the probe runs unpaced unless given --rate (accesses per "
                                            "set per second), so give --rate or --touch-rate");
        goto out;
    }
    if (!o.out_prefix)
        o.out_prefix = "calibration";
    o.stage = calib_stage;
    o.stage_ctx = &c;
    const bool quiet = o.quiet;
    o.quiet = true; /* map's banner would repeat for every k */
    for (c.k = 0;; c.k++) {
        /* The co-runner's total rate: touch_rate per held line, k lines in
         * each of the probed sets (per simulated ns). k = 0 runs first and
         * settles the automatic touch rate from the geometry. A hardware
         * stage runs every k at once and leaves c.k at c.ways. */
        o.calib_lines = c.k;
        o.calib_rate = c.touch_rate * c.k * c.probed / 1e9;
        if ((status = llc_map_cmd_dispatch(&o)) != LLC_EXIT_OK)
            goto out;
        status = LLC_EXIT_FAIL;
        if (c.k == c.ways)
            break;
    }
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
    if (write_outputs(o.out_prefix, &c, st, est, quiet, err, sizeof(err)) < 0) {
        llc_cli_fail("calibrate", "%s", err);
        goto out;
    }
    printf("calibrate: %s; %u sets probed at %.3g accesses per set per second; co-runner %.3g touches per "
           "line per second\n",
           c.machine, c.probed, c.rate / c.probed, c.touch_rate);
    printf("walk-length search: a probe line every %g s, %u walks per step, miss-ratio threshold %g\n",
           c.search.cycle_s, c.search.cycles, c.search.threshold);
    printf("%4s %14s %10s %14s %14s %10s %8s %8s\n", "k", "misses/set/s", "cv", "min", "max", "search", "min",
           "max");
    for (unsigned k = 0; k <= c.ways; k++)
        printf("%4u %14.6g %10.3f %14.6g %14.6g %10.3f %8.0f %8.0f\n", k, st[k].mean,
               st[k].mean > 0 ? st[k].sd / st[k].mean : 0, st[k].min, st[k].max, est[k].mean, est[k].min,
               est[k].max);
    printf("wrote %s.calib.json, %s.calib.csv, %s.calib.png\n", o.out_prefix, o.out_prefix, o.out_prefix);
    status = LLC_EXIT_OK;
out:
    free(st);
    free(est);
    free(c.units);
    free(c.per_set);
    free(c.estimate);
    free(args);
    return status;
}
