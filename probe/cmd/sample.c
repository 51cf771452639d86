/* llcprobe sample: stress only a sample of sets (Gaussian-25 by default, or
 * a baseline) interval by interval and scale the sample up to a whole-cache
 * estimate (docs/METHODS.md §4); with a calibration, also the
 * target's occupancy in lines, bytes and percent of the LLC. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/commands.h"
#include "cmd/fit_cmd.h"
#include "cmd/fit_plot.h"
#include "cmd/map_opts.h"
#include "cmd/sample_out.h"
#include "llcprobe/session.h"
#include "llcprobe/common.h"
#include "llcprobe/mapfile.h"
#include "util/cli.h"
#include "util/input.h"

/* Documented ranges of sample's own options. */
#define PER_POINT_MAX (1u << 20)
#define SETS_MAX (1u << 28)
#define INTERVAL_MIN 1e-6
#define INTERVAL_MAX 3600.0
#define INTERVALS_MAX 1000000

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: llcprobe sample --gaussian25 [--fit APP.fit.json] [options] -- PROGRAM [ARGS]\n"
        "       llcprobe sample (--random N [--seed S] | --continuous N [--start K] | --global |\n"
        "                        --sets FILE|LIST) [options] -- PROGRAM [ARGS]\n"
        "       (simulator: --backend sim --preset NAME --workload SPEC | --trace FILE | -- PROGRAM)\n\n"
        "Stresses only the chosen sets, interval by interval, and reports each interval's\n"
        "scaled whole-cache estimate of probe misses: scale-up (the seed's), stratified\n"
        "(the headline for --gaussian25) and ratio. Without --fit, --gaussian25 first maps\n"
        "all sets and fits them in the same target run (writes PREFIX.map.json and\n"
        "PREFIX.fit.json), so the sets are used on the placement they were chosen from.\n"
        "Writes PREFIX.sample.json (format llcprobe-sample v1), PREFIX.sample.csv and\n"
        "PREFIX.sample.png, and prints a summary line.\n\n"
        "sets:\n"
        "  --gaussian25       the key-point sets of a fit (default)\n"
        "  --fit FILE         use this fit's sets (from 'llcprobe fit')\n"
        "  --keys M           in-run fit: key mode auto (default), sigma2, range, quantile;\n"
        "                     --points N (1..%d) and --per-point C (1..%u) as\n"
        "                     'llcprobe fit'\n"
        "  --random N         N sets drawn with --seed (xoshiro256**), 1..%u\n"
        "  --continuous N     N consecutive sets (1..%u) from --start K (0..%u;\n"
        "                     default 0)\n"
        "  --global           every set (the reference)\n"
        "  --sets FILE|LIST   the sets in FILE (or a list like 0-15,100)\n"
        "sampling:\n"
        "  --interval S       seconds per interval, %g..%g (simulated for sim; default\n"
        "                     0.005 sim, 0.1 hardware)\n"
        "  --intervals N      intervals, 1..%u (default 10; stops early when the target\n"
        "                     ends)\n"
        "  --calibration F    a 'llcprobe calibrate' file: after the intervals, also\n"
        "                     estimate the target's occupancy in lines, bytes and %% of\n"
        "                     the LLC by a walk-length search in each sampled set (a slow\n"
        "                     probe walking w of the W ways: the longest w that still hits\n"
        "                     leaves W - w to the target), converted with the file's curve;\n"
        "                     a simulated trace (or program) then replays from its start\n"
        "                     whenever it ends, as --repeat. On hardware (timing, pmu) the\n"
        "                     backend first checks, before the target starts, that an\n"
        "                     idle walk at the file's search pace stays in the LLC, and\n"
        "                     refuses otherwise; calibrate on the same machine\n"
        "and every option of 'llcprobe map' (backend, simulator, probe, target, -o, -q).\n\n"
        "exit status: 0 ok, 1 failure or refusal, 2 bad usage.\n",
        LLC_FIT_MAX_KEYS, PER_POINT_MAX, SETS_MAX, SETS_MAX, SETS_MAX, INTERVAL_MIN, INTERVAL_MAX,
        INTERVALS_MAX);
}

enum {
    X_GAUSS = 512,
    X_FIT,
    X_KEYS,
    X_POINTS,
    X_PER_POINT,
    X_RANDOM,
    X_CONT,
    X_START,
    X_GLOBAL,
    X_INTERVAL,
    X_INTERVALS,
    X_CALIB
};

struct sample_opts {
    enum llc_sample_method method;
    bool method_given;
    const char *fit_path, *calib_path;
    struct fit_cmd_opts fit;
    uint32_t count, start;
    double interval;
    bool interval_given;
    unsigned intervals;
};

static int method(struct sample_opts *s, enum llc_sample_method m)
{
    if (s->method_given && s->method != m)
        return llc_cli_usage(
            "sample",
            "give one set choice: --gaussian25, --random, --continuous, --global or --sets");
    s->method = m;
    s->method_given = true;
    return 0;
}

static int on_extra(void *ctx, int code, const char *arg)
{
    struct sample_opts *s = ctx;
    uint64_t v = 0;
    int rc;
    switch (code) {
    case X_GAUSS:
        return method(s, LLC_SAMPLE_GAUSSIAN);
    case X_FIT:
        s->fit_path = arg;
        return method(s, LLC_SAMPLE_GAUSSIAN);
    case X_KEYS:
        if (llc_fit_parse_key_mode(arg, &s->fit.select.mode) < 0)
            return llc_cli_usage("sample", "--keys: '%s' is not auto, sigma2, range or quantile",
                                 arg);
        return 0;
    case X_POINTS:
        rc = llc_opt_u64("sample", "points", arg, 1, LLC_FIT_MAX_KEYS, &v);
        s->fit.select.points = (size_t)v;
        return rc;
    case X_PER_POINT:
        rc = llc_opt_u64("sample", "per-point", arg, 1, PER_POINT_MAX, &v);
        s->fit.select.per_point = (size_t)v;
        return rc;
    case X_RANDOM:
    case X_CONT:
        if ((rc = llc_opt_u64("sample", code == X_RANDOM ? "random" : "continuous", arg, 1,
                              SETS_MAX, &v)) != 0)
            return rc;
        s->count = (uint32_t)v;
        return method(s, code == X_RANDOM ? LLC_SAMPLE_RANDOM : LLC_SAMPLE_CONTINUOUS);
    case X_START:
        rc = llc_opt_u64("sample", "start", arg, 0, SETS_MAX, &v);
        s->start = (uint32_t)v;
        return rc;
    case X_GLOBAL:
        return method(s, LLC_SAMPLE_GLOBAL);
    case X_INTERVAL:
        s->interval_given = true;
        return llc_opt_double("sample", "interval", arg, INTERVAL_MIN, INTERVAL_MAX, &s->interval);
    case X_INTERVALS:
        rc = llc_opt_u64("sample", "intervals", arg, 1, INTERVALS_MAX, &v);
        s->intervals = (unsigned)v;
        return rc;
    case X_CALIB:
        s->calib_path = arg;
        return 0;
    default:
        return llc_cli_usage("sample", "unknown option");
    }
}

/* One line of a --sets FILE, comment cut and blanks made commas, appended
 * to *ids. */
/* Longest line of a --sets FILE (its id count is bounded by
 * LLC_MAP_MAX_SET_IDS, in read_sets_line). */
#define SETS_LINE_MAX ((size_t)1 << 16)

static int read_sets_line(const char *path, size_t lineno, char *line, uint32_t **ids, size_t *n)
{
    char err[LLC_ERRLEN];
    line[strcspn(line, "#\n")] = '\0';
    size_t w = 0;
    for (size_t r = 0; line[r]; r++) {
        const char c = line[r] == ' ' || line[r] == '\t' || line[r] == '\r' ? ',' : line[r];
        if (!(c == ',' && (w == 0 || line[w - 1] == ',')))
            line[w++] = c;
    }
    while (w && line[w - 1] == ',')
        w--;
    line[w] = '\0';
    if (w == 0)
        return 0;
    uint32_t *more;
    size_t m;
    if (llc_map_parse_sets(line, &more, &m, err, sizeof(err)) < 0)
        return llc_cli_fail("sample", "%s: line %zu: %s", path, lineno, err);
    if (*n + m > LLC_MAP_MAX_SET_IDS) {
        free(more);
        return llc_cli_fail("sample", "%s: line %zu: more than %u sets in the file", path, lineno,
                            LLC_MAP_MAX_SET_IDS);
    }
    uint32_t *all = realloc(*ids, (*n + m) * sizeof(**ids));
    if (!all) {
        free(more);
        return llc_cli_fail("sample", "out of memory");
    }
    memcpy(all + *n, more, m * sizeof(*more));
    free(more);
    *ids = all;
    *n += m;
    return 0;
}

/* The sets of a --sets FILE (or LIST): ids separated by commas, blanks or
 * newlines, ranges a-b; '#' starts a comment. */
static int read_sets(const char *arg, uint32_t **out, size_t *n)
{
    char err[LLC_ERRLEN], *line = NULL;
    struct llc_lines lines;
    struct stat st;
    if (stat(arg, &st) < 0) {
        if (llc_map_parse_sets(arg, out, n, err, sizeof(err)) < 0)
            return llc_cli_usage(
                "sample", "--sets: '%s' is neither a readable file nor a set list: %s", arg, err);
        return 0;
    }
    if (llc_lines_open(&lines, arg, SETS_LINE_MAX, err, sizeof(err)) < 0)
        return llc_cli_fail("sample", "%s", err);
    uint32_t *ids = NULL;
    size_t count = 0;
    int status = LLC_EXIT_OK, rc = 0;
    while (status == LLC_EXIT_OK && (rc = llc_lines_next(&lines, &line, err, sizeof(err))) > 0) {
        const char *text = line + strspn(line, " \t\r");
        /* A fit, map or other JSON file: say so instead of quoting it. */
        if (lines.lineno == 1 && (*text == '{' || *text == '['))
            status = llc_cli_fail(
                "sample", "%s: JSON, not a list of set ids (a fit file goes with --fit)", arg);
        else
            status = read_sets_line(arg, lines.lineno, line, &ids, &count);
    }
    if (status == LLC_EXIT_OK && rc < 0)
        status = llc_cli_fail("sample", "%s", err);
    if (status == LLC_EXIT_OK && count == 0)
        status = llc_cli_fail("sample", "%s: no sets in the file", arg);
    llc_lines_close(&lines);
    if (status != LLC_EXIT_OK) {
        free(ids);
        return status;
    }
    *out = ids;
    *n = count;
    return LLC_EXIT_OK;
}

int llc_sample_read_sets(const char *arg, uint32_t **out, size_t *n)
{
    return read_sets(arg, out, n);
}

/* Gaussian-25 without --fit: map every set, fit, select; the selection is
 * used in the run it was made from. Writes PREFIX.map.json and the fit's
 * files. */
static int in_run_fit(struct llc_session *s, const struct sample_opts *so, const char *prefix,
                      bool quiet, struct llc_fit_selection **sel)
{
    const struct llc_session_info *in = llc_session_info(s);
    struct llc_map_backend *b = llc_session_backend(s);
    const uint32_t units = llc_map_units(&b->geo);
    struct llc_session_map_result m = {0};
    double *x = malloc(units * sizeof(*x)), *sw1 = NULL, *sw2 = NULL;
    uint8_t *excl = malloc(units);
    char err[LLC_ERRLEN], path[4200];
    int status = LLC_EXIT_FAIL;
    if (!x || !excl) {
        llc_cli_fail("sample", "out of memory");
        goto out;
    }
    if (llc_sample_in_run_map(s, &m, err, sizeof(err)) < 0) {
        llc_cli_fail("sample", "%s", err);
        goto out;
    }
    const struct llc_map_result *r = m.result;
    snprintf(path, sizeof(path), "%s.map.json", prefix);
    const struct llc_map_meta meta = {.machine = in->machine,
                                      .target = in->target,
                                      .rate = in->rate,
                                      .delay_nops = in->delay_nops,
                                      .seed = in->seed,
                                      .plan = &m.plan};
    if (llc_map_write_json(b, r, &meta, path, err, sizeof(err)) < 0) {
        llc_cli_fail("sample", "%s", err);
        goto out;
    }
    for (uint32_t u = 0; u < units; u++) {
        x[u] = (double)r->misses[u];
        excl[u] = !r->measured[u];
    }
    if (r->sweeps >= 2 && (sw1 = malloc(2 * units * sizeof(double)))) {
        sw2 = sw1 + units;
        for (uint32_t u = 0; u < units; u++) {
            sw1[u] = (double)r->sweep_misses[u];
            sw2[u] = (double)r->sweep_misses[units + u];
        }
    }
    struct fit_cmd_opts fo = so->fit;
    fo.prefix = prefix;
    fo.quiet = quiet;
    const struct fit_cmd_input fin = {.x = x,
                                      .excluded = excl,
                                      .masked = -1,
                                      .n = units,
                                      .sweep1 = sw1,
                                      .sweep2 = sw2,
                                      .raw_counts = true,
                                      .geo = &b->geo,
                                      .source = path,
                                      .target = in->target,
                                      .machine = in->machine,
                                      .page_size = b->target_pages[0] ? b->target_pages : "unknown",
                                      .map_seed = in->seed};
    status = llc_fit_cmd_run("sample", &fo, &fin, sel);
out:
    llc_session_map_result_free(&m);
    free(sw1);
    free(x);
    free(excl);
    return status;
}

/* The sampled sets: a fit's (from --fit, or fitted in this run) or a
 * baseline's. Returns 0 or the exit status. */
static int choose(struct llc_session *s, const struct sample_opts *so, const struct llc_fitfile *ff,
                  const uint32_t *sets, size_t n_sets, const char *prefix, bool quiet,
                  struct llc_fit_selection **own, struct llc_sample_config *c, uint32_t **units)
{
    const uint32_t all = llc_map_units(&llc_session_backend(s)->geo);
    char err[LLC_ERRLEN];
    int status;
    if (so->method != LLC_SAMPLE_GAUSSIAN) {
        const int rc = llc_sample_pick(s, so->method, so->count, so->start, sets, n_sets, units,
                                       &c->n, err, sizeof(err));
        c->units = *units;
        return rc == 0                    ? 0
               : rc == LLC_SESSION_EUSAGE ? llc_cli_usage("sample", "%s", err)
                                          : llc_cli_fail("sample", "%s", err);
    }
    if (ff) {
        if (ff->units != all)
            return llc_cli_fail("sample", "%s: llc.sets: the fit is for %u sets, this LLC has %u",
                                ff->path, ff->units, all);
        /* The simulator's placement is its seed's: the same target and seed
         * place every page where the profile's map had it. */
        const struct llc_session_info *in = llc_session_info(s);
        const bool sim = in->sim;
        const bool same_sim = sim && ff->map_seed_known && ff->map_seed == in->seed &&
                              !strcmp(ff->target, in->target) &&
                              !strncmp(ff->machine, in->machine, strlen(ff->machine));
        if (same_sim) {
            if (!quiet)
                fprintf(
                    stderr,
                    "llcprobe: sample: %s: same target and simulator seed %llu as its map: the same page "
                    "placement\n",
                    ff->path, (unsigned long long)in->seed);
        } else if (strcmp(ff->page_size, "2M") != 0) {
            char seeds[96] = "";
            if (sim && ff->map_seed_known)
                snprintf(seeds, sizeof(seeds), "; its map used simulator seed %llu, this run %llu",
                         (unsigned long long)ff->map_seed, (unsigned long long)in->seed);
            llc_cli_warn(
                quiet,
                "%s comes from another run of the target (page size %s%s): with small pages its sets "
                "may not stand for the same strata here (docs/METHODS.md §5.4)",
                ff->path, ff->page_size, seeds);
        }
        c->sel = ff->sel;
    } else {
        if ((status = in_run_fit(s, so, prefix, quiet, own)) != 0)
            return status;
        c->sel = *own;
    }
    c->n = c->sel->n;
    if (!(*units = malloc((c->n ? c->n : 1) * sizeof(**units))))
        return llc_cli_fail("sample", "out of memory");
    for (size_t i = 0; i < c->n; i++)
        (*units)[i] = (uint32_t)c->sel->unit[i];
    c->units = *units;
    return 0;
}

static void print_summary(const struct llc_sample_output *so, bool quiet)
{
    const struct llc_sample_config *c = so->cfg;
    const struct llc_sample_result *r = so->r;
    const struct llc_sample_interval *t = &r->total;
    for (size_t i = 0; !quiet && i < r->count; i++)
        printf(
            "interval %3zu  %.4g-%.4g s  scale-up %.6g  stratified %.6g  stratified-ratio %.6g  ratio %.6g\n",
            i, r->iv[i].t0, r->iv[i].t1, r->iv[i].scale_up, r->iv[i].stratified,
            r->iv[i].stratified_ratio, r->iv[i].ratio);
    const double llc_lines = (double)llc_map_units(&so->b->geo) * so->b->geo.llc_ways;
    printf(
        "sample: %s %zu sets, %zu intervals of %g s: whole-cache probe misses %s %.6g (scale-up %.6g, "
        "stratified %.6g, stratified-ratio %.6g, ratio %.6g)",
        llc_sample_method_name(c->method), c->n, r->count, c->interval,
        c->sel ? llc_fit_estimator_name(c->sel->estimator) : "scale-up",
        c->sel ? t->headline : t->scale_up, t->scale_up, t->stratified, t->stratified_ratio,
        t->ratio);
    if (c->calib)
        printf(
            "; occupancy %.0f lines = %.0f KiB = %.2f%% of the LLC (walk-length search, calibration %s)",
            t->occ_lines, t->occ_lines * so->b->geo.line_size / 1024,
            100 * t->occ_lines / llc_lines, so->calib_path);
    if (r->truth)
        printf("; true occupancy %.0f lines = %.2f%% of the LLC", t->true_occ_lines,
               100 * t->true_occ_lines / llc_lines);
    if (r->target_runs)
        printf("; the simulated trace ran %u time%s", r->target_runs,
               r->target_runs == 1 ? "" : "s");
    printf("\nwrote %s.sample.json, .sample.csv, .sample.png\n", so->prefix);
}

int llc_cmd_sample(int argc, char **argv)
{
    static const struct option extra[] = {{"gaussian25", no_argument, 0, X_GAUSS},
                                          {"fit", required_argument, 0, X_FIT},
                                          {"keys", required_argument, 0, X_KEYS},
                                          {"points", required_argument, 0, X_POINTS},
                                          {"per-point", required_argument, 0, X_PER_POINT},
                                          {"random", required_argument, 0, X_RANDOM},
                                          {"continuous", required_argument, 0, X_CONT},
                                          {"start", required_argument, 0, X_START},
                                          {"global", no_argument, 0, X_GLOBAL},
                                          {"interval", required_argument, 0, X_INTERVAL},
                                          {"intervals", required_argument, 0, X_INTERVALS},
                                          {"calibration", required_argument, 0, X_CALIB},
                                          {0, 0, 0, 0}};
    struct sample_opts so = {.method = LLC_SAMPLE_GAUSSIAN, .intervals = 10};
    llc_fit_select_config_default(&so.fit.select);
    so.fit.plots = true;
    const struct map_cmd_extra x = {
        .longopts = extra, .on_extra = on_extra, .ctx = &so, .usage = usage};
    struct map_opts o;
    const enum llc_parse p = llc_map_cmd_parse("sample", argc, argv, &o, &x);
    if (p != LLC_PARSE_RUN)
        return llc_parse_exit(p);
    uint32_t *sets = NULL, *units = NULL;
    size_t n_sets = 0;
    struct llc_fitfile *ff = NULL;
    struct llc_calib calib;
    struct llc_session *s = NULL;
    struct llc_fit_selection *own = NULL;
    struct llc_sample_result r = {0};
    char err[LLC_ERRLEN], prefix[256];
    int rc;
    if (o.sets_list) {
        if (so.method_given && so.method != LLC_SAMPLE_SETS)
            return llc_cli_usage(
                "sample",
                "give one set choice: --gaussian25, --random, --continuous, --global or --sets");
        so.method = LLC_SAMPLE_SETS;
        if ((rc = read_sets(o.sets_list, &sets, &n_sets)) != 0)
            return rc;
        o.sets_list = NULL;
    }
    int status = LLC_EXIT_USAGE;
    if (o.mode_given && o.mode != LLC_MAP_SETS) {
        llc_cli_usage("sample",
                      "--mode belongs to map; sample chooses its sets with --gaussian25, --random, "
                      "--continuous, --global or --sets");
        goto out;
    }
    if (o.per_set_runs) {
        llc_cli_usage("sample", "--per-set-runs is for mapping; sampling co-runs one target");
        goto out;
    }
    status = LLC_EXIT_FAIL;
    const bool sim = strcmp(o.backend, "sim") == 0;
    struct llc_sample_config c = {.method = so.method,
                                  .intervals = so.intervals,
                                  .interval = so.interval_given ? so.interval
                                              : sim             ? 0.005
                                                                : 0.1};
    if (so.fit_path && llc_fitfile_read(so.fit_path, &ff, err, sizeof(err)) < 0) {
        llc_cli_fail("sample", "%s", err);
        goto out;
    }
    if (so.calib_path) {
        if (llc_calib_read(so.calib_path, &calib, err, sizeof(err)) < 0) {
            llc_cli_fail("sample", "%s", err);
            goto out;
        }
        c.calib = &calib;
        o.search_cycle_s = calib.search_cycle_s;
    }
    /* A simulated trace ends, and the occupancy search runs after the in-run
     * map and the intervals have used their share of it: replay it from its
     * start whenever it ends (as map's --repeat), so all three see the
     * program at their full length; the output says how many runs it took. */
    if (sim && so.calib_path && !o.workload)
        o.repeat = true;
    o.mode = LLC_MAP_GLOBAL; /* the in-run map (and the simulator's default dwell) */
    o.mode_given = true;
    struct llc_session_config sc;
    llc_map_cmd_config(&o, NULL, 0, &sc);
    sc.purpose = LLC_SESSION_SAMPLE;
    sc.stop = llc_map_cmd_signals();
    const char *out_prefix =
        o.out_prefix ? o.out_prefix : llc_session_default_prefix(&sc, prefix, sizeof(prefix));
    if ((rc = llc_session_open(&sc, &s, err, sizeof(err))) < 0) {
        status = rc == LLC_SESSION_EUSAGE ? llc_cli_usage("sample", "%s", err)
                                          : llc_cli_fail("sample", "%s", err);
        goto out;
    }
    if ((status = choose(s, &so, ff, sets, n_sets, out_prefix, o.quiet, &own, &c, &units)) != 0)
        goto out;
    status = LLC_EXIT_FAIL;
    if (llc_sample_run(s, &c, &r, err, sizeof(err)) < 0) {
        llc_cli_fail("sample", "%s", err);
        goto out;
    }
    const struct llc_session_info *in = llc_session_info(s);
    const struct llc_sample_output out = {.prefix = out_prefix,
                                          .machine = in->machine,
                                          .target = in->target,
                                          .calib_path = so.calib_path,
                                          .b = llc_session_backend(s),
                                          .cfg = &c,
                                          .r = &r,
                                          .seed = in->seed,
                                          .rate = in->rate};
    if (llc_sample_write(&out, err, sizeof(err)) < 0) {
        llc_cli_fail("sample", "%s", err);
        goto out;
    }
    llc_sample_plot(&out, o.quiet);
    print_summary(&out, o.quiet);
    status = *sc.stop ? 128 + (int)*sc.stop : LLC_EXIT_OK;
out:
    llc_sample_result_free(&r);
    llc_fit_selection_destroy(own);
    llc_session_close(s);
    llc_fitfile_free(ff);
    free(units);
    free(sets);
    return status;
}
