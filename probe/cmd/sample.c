/* llcprobe sample: stress only a sample of sets (Gaussian-25 by default, or
 * a baseline) interval by interval and scale the sample up to a whole-cache
 * estimate (spec gaussian-sampling.md §4); with a calibration, also the
 * target's occupancy in lines, bytes and percent of the LLC. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/fit_cmd.h"
#include "cmd/fit_plot.h"
#include "cmd/map_opts.h"
#include "cmd/sample_out.h"
#include "llcprobe/common.h"
#include "llcprobe/mapfile.h"
#include "util/cli.h"

static void usage(FILE *out)
{
    fprintf(out,
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
            "                     --points N and\n"
            "                     --per-point C as 'llcprobe fit'\n"
            "  --random N         N sets drawn with --seed (xoshiro256**)\n"
            "  --continuous N     N consecutive sets from --start K (default 0)\n"
            "  --global           every set (the reference)\n"
            "  --sets FILE|LIST   the sets in FILE (or a list like 0-15,100)\n"
            "sampling:\n"
            "  --interval S       seconds per interval (simulated for sim; default 0.005 sim,\n"
            "                     0.1 hardware)\n"
            "  --intervals N      intervals (default 10; stops early when the target ends)\n"
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
            "exit status: 0 ok, 1 failure or refusal, 2 bad usage.\n");
}

enum { X_GAUSS = 512, X_FIT, X_KEYS, X_POINTS, X_PER_POINT, X_RANDOM, X_CONT, X_START, X_GLOBAL, X_INTERVAL,
       X_INTERVALS, X_CALIB };

struct sample_opts {
    enum sample_method method;
    bool method_given;
    const char *fit_path, *calib_path;
    struct fit_cmd_opts fit;
    uint32_t count, start;
    double interval;
    bool interval_given;
    unsigned intervals;
};

static int method(struct sample_opts *s, enum sample_method m)
{
    if (s->method_given && s->method != m)
        return llc_cli_usage("sample", "give one set choice: --gaussian25, --random, --continuous, --global or --sets");
    s->method = m;
    s->method_given = true;
    return 0;
}

static int on_extra(void *ctx, int code, const char *arg)
{
    struct sample_opts *s = ctx;
    uint64_t v;
    double d;
    switch (code) {
    case X_GAUSS: return method(s, SAMPLE_GAUSSIAN);
    case X_FIT: s->fit_path = arg; return method(s, SAMPLE_GAUSSIAN);
    case X_KEYS:
        if (llc_fit_parse_key_mode(arg, &s->fit.select.mode) < 0)
            return llc_cli_usage("sample", "--keys: '%s' is not auto, sigma2, range or quantile", arg);
        return 0;
    case X_POINTS:
        if (llc_parse_u64_range(arg, 1, LLC_FIT_MAX_KEYS, &v) < 0)
            return llc_cli_usage("sample", "--points: '%s' is not a whole number in 1..5", arg);
        s->fit.select.points = (size_t)v;
        return 0;
    case X_PER_POINT:
        if (llc_parse_u64_range(arg, 1, 1u << 20, &v) < 0)
            return llc_cli_usage("sample", "--per-point: '%s' is not a positive whole number", arg);
        s->fit.select.per_point = (size_t)v;
        return 0;
    case X_RANDOM:
    case X_CONT:
        if (llc_parse_u64_range(arg, 1, 1u << 28, &v) < 0)
            return llc_cli_usage("sample", "%s: '%s' is not a positive whole number",
                                 code == X_RANDOM ? "--random" : "--continuous", arg);
        s->count = (uint32_t)v;
        return method(s, code == X_RANDOM ? SAMPLE_RANDOM : SAMPLE_CONTINUOUS);
    case X_START:
        if (llc_parse_u64_range(arg, 0, 1u << 28, &v) < 0)
            return llc_cli_usage("sample", "--start: '%s' is not a whole number", arg);
        s->start = (uint32_t)v;
        return 0;
    case X_GLOBAL: return method(s, SAMPLE_GLOBAL);
    case X_INTERVAL:
        if (llc_parse_double(arg, &d) < 0 || !(d > 0))
            return llc_cli_usage("sample", "--interval: '%s' is not a positive number", arg);
        s->interval = d;
        s->interval_given = true;
        return 0;
    case X_INTERVALS:
        if (llc_parse_u64_range(arg, 1, 1000000, &v) < 0)
            return llc_cli_usage("sample", "--intervals: '%s' is not a whole number in 1..1000000", arg);
        s->intervals = (unsigned)v;
        return 0;
    case X_CALIB: s->calib_path = arg; return 0;
    default: return llc_cli_usage("sample", "unknown option");
    }
}

/* One line of a --sets FILE, comment cut and blanks made commas, appended
 * to *ids. */
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
    FILE *f = fopen(arg, "r");
    if (!f) {
        if (llc_map_parse_sets(arg, out, n, err, sizeof(err)) < 0)
            return llc_cli_usage("sample", "--sets: '%s' is neither a readable file nor a set list: %s", arg, err);
        return 0;
    }
    uint32_t *ids = NULL;
    size_t count = 0, cap = 0, lineno = 0;
    int status = LLC_EXIT_OK;
    while (status == LLC_EXIT_OK && getline(&line, &cap, f) >= 0) {
        lineno++;
        const char *text = line + strspn(line, " \t\r");
        /* A fit, map or other JSON file: say so instead of quoting it. */
        if (lineno == 1 && (*text == '{' || *text == '['))
            status = llc_cli_fail("sample", "%s: JSON, not a list of set ids (a fit file goes with --fit)", arg);
        else
            status = read_sets_line(arg, lineno, line, &ids, &count);
    }
    if (status == LLC_EXIT_OK && ferror(f))
        status = llc_cli_fail("sample", "%s: %s", arg, strerror(errno));
    if (status == LLC_EXIT_OK && count == 0)
        status = llc_cli_fail("sample", "%s: no sets in the file", arg);
    free(line);
    fclose(f);
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

int llc_cmd_sample(int argc, char **argv)
{
    static const struct option extra[] = {
        {"gaussian25", no_argument, 0, X_GAUSS},          {"fit", required_argument, 0, X_FIT},
        {"keys", required_argument, 0, X_KEYS},           {"points", required_argument, 0, X_POINTS},
        {"per-point", required_argument, 0, X_PER_POINT}, {"random", required_argument, 0, X_RANDOM},
        {"continuous", required_argument, 0, X_CONT},     {"start", required_argument, 0, X_START},
        {"global", no_argument, 0, X_GLOBAL},             {"interval", required_argument, 0, X_INTERVAL},
        {"intervals", required_argument, 0, X_INTERVALS}, {"calibration", required_argument, 0, X_CALIB},
        {0, 0, 0, 0}};
    struct sample_opts s = {.method = SAMPLE_GAUSSIAN, .intervals = 10};
    llc_fit_select_config_default(&s.fit.select);
    s.fit.plots = true;
    const struct map_cmd_extra x = {.longopts = extra, .on_extra = on_extra, .ctx = &s, .usage = usage};
    struct map_opts o;
    int rc = llc_map_cmd_parse("sample", argc, argv, &o, &x);
    if (rc)
        return rc == 1 ? LLC_EXIT_OK : rc;
    struct sample_run run = {.method = s.method, .fit = s.fit, .count = s.count, .start = s.start,
                             .intervals = s.intervals};
    if (o.sets_list) {
        if (s.method_given && s.method != SAMPLE_SETS)
            return llc_cli_usage("sample", "give one set choice: --gaussian25, --random, --continuous, --global or --sets");
        run.method = SAMPLE_SETS;
        if ((rc = read_sets(o.sets_list, &run.sets, &run.n_sets)) != 0)
            return rc;
        o.sets_list = NULL;
    }
    if (o.mode_given && o.mode != LLC_MAP_SETS) {
        free(run.sets);
        return llc_cli_usage("sample", "--mode belongs to map; sample chooses its sets with --gaussian25, --random, "
                                       "--continuous, --global or --sets");
    }
    if (o.per_set_runs) {
        free(run.sets);
        return llc_cli_usage("sample", "--per-set-runs is for mapping; sampling co-runs one target");
    }
    const bool sim = strcmp(o.backend, "sim") == 0;
    run.interval = s.interval_given ? s.interval : sim ? 0.005 : 0.1;
    int status = LLC_EXIT_FAIL;
    if (s.fit_path && llc_fitfile_read(s.fit_path, &run.fitfile, run.err, sizeof(run.err)) < 0) {
        status = llc_cli_fail("sample", "%s", run.err);
        goto out;
    }
    if (s.calib_path) {
        if (llc_calib_read(s.calib_path, &run.calib, run.err, sizeof(run.err)) < 0) {
            status = llc_cli_fail("sample", "%s", run.err);
            goto out;
        }
        run.have_calib = true;
        run.calib_path = s.calib_path;
        o.search_cycle_s = run.calib.search_cycle_s;
    }
    /* A simulated trace ends, and the occupancy search runs after the in-run
     * map and the intervals have used their share of it: replay it from its
     * start whenever it ends (as map's --repeat), so all three see the
     * program at their full length; the output says how many runs it took. */
    if (sim && s.calib_path && !o.workload)
        o.repeat = true;
    o.mode = LLC_MAP_GLOBAL; /* the in-run map (and the simulator's default dwell) */
    o.mode_given = true;
    o.stage = llc_sample_stage;
    o.stage_ctx = &run;
    status = llc_map_cmd_dispatch(&o);
out:
    llc_fitfile_free(run.fitfile);
    free(run.sets);
    return status;
}
